"""``TTMemorySession``: the Agents SDK's ``Session`` protocol over a ttmemory session."""

from __future__ import annotations

from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory.session_settings import SessionSettings, resolve_session_limit
from asgiref.sync import sync_to_async

from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.integrations.openai_agents.items import (
    grouped_messages,
    items_from_messages,
    messages_from_items,
    renamed,
)
from ttmemory.models import MemorySession
from ttmemory.services.sessions import message_pop
from ttmemory.validation import clean_count

__all__ = ["TTMemorySession"]


class TTMemorySession:
    """An OpenAI Agents SDK session stored in ttmemory: ``Runner.run(agent, text, session=s)``.

    ``session_id`` is the ttmemory session key within ``namespace`` (the isolation boundary:
    route each tenant to its own). Items are stored as Chat Completions messages through the
    Responses converter, each carrying its exact SDK items (see ``items``), so the same
    history is the one ``memory.context_window``, the REST API and the admin transcript show.

    ``get_items(limit)`` returns the newest ``limit`` items (``session_settings.limit`` when
    None, everything when both are None). With ``max_tokens`` it returns instead the window
    ``memory.context_window`` packs within that budget (the rolling summary first, then whole
    tool groups: a ``function_call`` with its ``function_call_output``, reasoning with the call
    it led to, never half a group), then cut to ``limit`` items when one is given. Every method
    runs the sync service in Django's thread-sensitive executor and never blocks the loop.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        *,
        namespace: str,
        max_tokens: int | None = None,
        metadata: dict[str, Any] | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.namespace = namespace
        self.max_tokens = (
            None if max_tokens is None else clean_count(max_tokens, field="max_tokens")
        )
        self.metadata = metadata
        self.session_settings = session_settings
        self._session: MemorySession | None = None

    def __repr__(self) -> str:
        return f"TTMemorySession({self.session_id!r}, namespace={self.namespace!r})"

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The stored history as SDK input items, oldest first (see the class docstring)."""
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and limit < 0:
            limit = None
        if limit == 0:
            return []
        session = await self._open()
        if self.max_tokens is not None:
            messages = await memory.acontext_window(session=session, max_tokens=self.max_tokens)
        else:
            # Every stored message holds at least one item: `limit` messages hold enough.
            messages = await memory.amessage_recent(session=session, limit=limit)
        items = items_from_messages(messages)
        if limit is not None:
            items = items[-limit:]
        return cast(list[TResponseInputItem], items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` in order, all or nothing (one ``message_add_many``)."""
        if not items:
            return
        grouped = grouped_messages(cast(list[dict[str, Any]], items))
        session = await self._open()
        try:
            await memory.amessage_add_many(session=session, messages=[m for m, _ in grouped])
        except MemoryValidationError as error:
            raise renamed(error, "items", [first for _, first in grouped]) from None

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item (None when the session is empty)."""
        session = await self._open()
        return cast(
            "TResponseInputItem | None",
            await sync_to_async(_pop_item, thread_sensitive=True)(session),
        )

    async def clear_session(self) -> None:
        """Delete every item of the session (``memory.session_clear``)."""
        await memory.asession_clear(session=await self._open())

    async def _open(self) -> MemorySession:
        if self._session is None:
            self._session = await memory.asession_open(
                namespace=self.namespace, key=self.session_id, metadata=self.metadata
            )
        return self._session


def _pop_item(session: MemorySession) -> dict[str, Any] | None:
    """Pop the newest message; when it carried several items, all but the last go back.

    One service call (``message_pop`` with ``put_back``): one transaction under the session
    lock, so no reader or writer sees the message gone and its other items not yet back.
    """
    message = message_pop(session=session, put_back=_all_but_last_item)
    if message is None:
        return None
    items = items_from_messages([message])
    return items[-1] if items else None


def _all_but_last_item(message: dict[str, Any]) -> list[dict[str, Any]]:
    items = items_from_messages([message])
    return messages_from_items(items[:-1]) if len(items) > 1 else []
