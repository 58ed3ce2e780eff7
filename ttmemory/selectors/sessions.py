"""Session reads: sessions, message pages, the newest messages, the token-budgeted window."""

from __future__ import annotations

import functools
import logging
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, router
from django.db.models import Q

from ttmemory import conversation
from ttmemory.conf import app_settings
from ttmemory.exceptions import ContextBudgetError
from ttmemory.fields import row_opener
from ttmemory.models import MemorySession, Message
from ttmemory.models.binding import binding_cursor
from ttmemory.models.compiled import CompiledQuery
from ttmemory.results import ContextWindow
from ttmemory.validation import clean_count, clean_identifier

logger = logging.getLogger(__name__)

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


def session_get(*, namespace: str, key: str) -> MemorySession | None:
    """The session ``(namespace, key)`` or None; never creates one."""
    namespace = clean_identifier(namespace, field="namespace")
    key = clean_identifier(key, field="key")
    return MemorySession.objects.filter(namespace=namespace, key=key).first()


def session_list(*, namespace: str) -> list[MemorySession]:
    """Sessions of one namespace, most recently active first."""
    namespace = clean_identifier(namespace, field="namespace")
    return list(MemorySession.objects.for_namespace(namespace).order_by("-updated_at", "-pk"))


def message_recent(*, session: MemorySession, limit: int | None = None) -> list[dict[str, Any]]:
    """The newest ``limit`` live messages (all when None), oldest first, decrypted."""
    if limit is not None:
        limit = clean_count(limit, field="limit", minimum=1)
    # A read routed elsewhere (a replica, with its fallback to the primary) stays on the ORM.
    if connection.vendor == "postgresql" and (
        router.db_for_read(Message, instance=session) == DEFAULT_DB_ALIAS
    ):
        return _recent_postgres(session, limit)
    queryset = Message.objects.live().filter(session=session).order_by("-seq")
    if limit is not None:
        queryset = queryset[:limit]
    messages: list[dict[str, Any]] = list(queryset.values_list("data", flat=True))
    messages.reverse()
    return messages


def _recent_postgres(session: MemorySession, limit: int | None) -> list[dict[str, Any]]:
    """``message_recent`` in one statement with binary results: the messages arrive as their
    stored bytes (no hex text to decode) with their binding columns, and are opened here.

    The ORM's values_list took about a third longer on the newest 1,000 (its compiler,
    converters and the bytea's hex decoding), the gap to a bare SELECT of JSON.
    """
    quote = connection.ops.quote_name
    field = Message._meta.get_field("data")
    opened = row_opener(field, (1, 2, 3))
    columns = ", ".join(quote(name) for name in ("data", "namespace", "session_id", "seq"))
    with binding_cursor(binary_results=True) as (cursor, mark):
        cursor.execute(
            f"SELECT {columns} FROM {quote(Message._meta.db_table)} "
            f"WHERE {quote('session_id')} = {mark} AND {quote('archived_at')} IS NULL "
            f"ORDER BY {quote('seq')} DESC" + (f" LIMIT {mark}" if limit is not None else ""),
            [session.pk] if limit is None else [session.pk, limit],
        )
        rows = cursor.fetchall()
    messages: list[dict[str, Any]] = [opened(row[0], row) for row in rows]
    messages.reverse()
    return messages


def message_page(
    *,
    session: MemorySession,
    limit: int = 50,
    before_seq: int | None = None,
    include_archived: bool = False,
) -> list[dict[str, Any]]:
    """The ``limit`` messages just before ``before_seq`` (the newest when None), oldest first.

    For paging back through a history: pass the first seq of a page as ``before_seq`` to get
    the page before it. Each item is ``{"seq", "role", "tokens", "archived", "created_at",
    "message"}``; archived (trimmed) messages only with ``include_archived``.
    """
    return _page(
        Message.objects.filter(session=session),
        limit=limit,
        before_seq=before_seq,
        include_archived=include_archived,
    )


def message_page_in(
    *,
    namespace: str,
    session_id: int,
    limit: int = 50,
    before_seq: int | None = None,
    include_archived: bool = False,
) -> list[dict[str, Any]] | None:
    """``message_page`` of session ``session_id`` of ``namespace`` without reading the session
    first: one round trip when the page has rows; None when there is no such session.

    For the API's hot read, which needs only the page (the session lookup was a second
    round trip on every request).
    """
    limit = clean_count(limit, field="limit", minimum=1)
    values: dict[str, Any] = {"namespace": namespace, "session_id": session_id}
    if before_seq is not None:
        values["before_seq"] = clean_count(before_seq, field="before", minimum=1)
    if connection.vendor == "postgresql" and router.db_for_read(Message) == DEFAULT_DB_ALIAS:
        rows = _page_postgres(limit=limit, include_archived=bool(include_archived), **values)
    else:
        shape = (limit, before_seq is not None, bool(include_archived))
        rows = _page_rows(_PAGE_IN.rows(shape, **values))
    if rows or _SESSION_EXISTS.rows(namespace=namespace, session_id=session_id):
        return rows
    return None


def _page_postgres(
    *,
    namespace: str,
    session_id: int,
    limit: int,
    include_archived: bool,
    before_seq: int | None = None,
) -> list[dict[str, Any]]:
    """``message_page_in``'s rows in one statement with binary results, as ``_recent_postgres``.

    The messages' own ``namespace`` column (part of what their encryption is bound to, as
    ``Message.objects.for_namespace`` reads it) instead of a join to the session: the join
    checked the session once per row (50 index probes a page), and the text results' hex
    bytea and timestamp parsing were about a quarter of a page request's CPU
    (``bench/api_profile.py``).
    """
    quote = connection.ops.quote_name
    opened = row_opener(Message._meta.get_field("data"), (6, 7, 0))
    columns = ", ".join(
        quote(name)
        for name in (
            "seq", "role", "token_count", "archived_at", "created_at", "data", "namespace",
            "session_id",
        )
    )  # fmt: skip
    with binding_cursor(binary_results=True) as (cursor, mark):
        where = f"{quote('namespace')} = {mark} AND {quote('session_id')} = {mark}"
        params: list[Any] = [namespace, session_id]
        if not include_archived:
            where += f" AND {quote('archived_at')} IS NULL"
        if before_seq is not None:
            where += f" AND {quote('seq')} < {mark}"
            params.append(before_seq)
        cursor.execute(
            f"SELECT {columns} FROM {quote(Message._meta.db_table)} WHERE {where} "
            f"ORDER BY {quote('seq')} DESC LIMIT {mark}",
            [*params, limit],
        )
        rows = cursor.fetchall()
    rows.reverse()
    return [
        {
            "seq": row[0],
            "role": row[1],
            "tokens": row[2],
            "archived": row[3] is not None,
            "created_at": row[4],
            "message": opened(row[5], row),
        }
        for row in rows
    ]


def _page_in(
    shape: tuple[int, bool, bool], *, namespace: str, session_id: int, before_seq: int = 0
) -> Any:
    limit, before, include_archived = shape
    queryset = Message.objects.filter(session_id=session_id, session__namespace=namespace)
    if not include_archived:
        queryset = queryset.live()
    if before:
        queryset = queryset.filter(seq__lt=before_seq)
    return queryset.order_by("-seq").values_list(*_PAGE_FIELDS)[:limit]


def _session_exists(key: object, *, namespace: str, session_id: int) -> Any:
    return MemorySession.objects.filter(namespace=namespace, pk=session_id).values_list("pk")[:1]


# The API's hot read where ``_page_postgres`` does not serve it (SQLite, reads routed to
# another database), compiled once per connection and page shape: building and compiling the
# page's query was a third of a page request's CPU (bench/api_profile.py).
_PAGE_IN = CompiledQuery(Message, _page_in)
_SESSION_EXISTS = CompiledQuery(MemorySession, _session_exists)


def _page(
    queryset: Any, *, limit: int, before_seq: int | None, include_archived: bool
) -> list[dict[str, Any]]:
    limit = clean_count(limit, field="limit", minimum=1)
    if not include_archived:
        queryset = queryset.live()
    if before_seq is not None:
        queryset = queryset.filter(seq__lt=clean_count(before_seq, field="before", minimum=1))
    rows = list(queryset.order_by("-seq").values_list(*_PAGE_FIELDS)[:limit])
    return _page_rows(rows)


_PAGE_FIELDS = ("seq", "role", "token_count", "archived_at", "created_at", "data")


def _page_rows(rows: list[Any]) -> list[dict[str, Any]]:
    """A page's dicts, oldest first, of its rows read newest first."""
    rows.reverse()
    return [
        {
            "seq": seq,
            "role": role,
            "tokens": tokens,
            "archived": archived_at is not None,
            "created_at": created_at,
            "message": data,
        }
        for seq, role, tokens, archived_at, created_at, data in rows
    ]


# Rows of packing metadata read per query, newest first, until the budget is exceeded.
WINDOW_CHUNK = 256
_PACK_FIELDS = ("seq", "role", "token_count", "group_seq", "tool_call_ids", "tool_call_id")
PackRow = tuple[int, str, int, int, list[str] | None, str]


def pack_items(rows: list[PackRow]) -> list[conversation.PackItem]:
    """``PackItem``s of rows read with ``_PACK_FIELDS``."""
    return [
        conversation.PackItem(seq, role, tokens, group, tuple(call_ids or ()), call_id or "")
        for seq, role, tokens, group, call_ids, call_id in rows
    ]


def _window_rows(session: MemorySession, budget: int) -> list[PackRow]:
    """The metadata ``pack`` needs to choose a window: never less, often far less than all.

    System messages, then non-system rows newest first until their tokens exceed what the
    budget leaves; then the older members of every group seen (a tool call made
    long before its late result) and, when no user message was read, the newest older one (the
    question the newest turn keeps). A turn reaching further back cannot be packed whole
    (packing stops at the first turn that does not fit and never skips one), and the newest
    turn, if it does, is filled newest first from groups read, so the choice equals packing
    every row.
    """
    live = Message.objects.live().filter(session=session)
    system = list(live.filter(role__in=conversation.SYSTEM_ROLES).values_list(*_PACK_FIELDS))
    remaining = budget - sum(row[2] for row in system)
    others: list[PackRow] = []
    used = 0
    complete = False
    newest_first = live.exclude(role__in=conversation.SYSTEM_ROLES).order_by("-seq")
    while True:
        page = newest_first.filter(seq__lt=others[-1][0]) if others else newest_first
        chunk = list(page.values_list(*_PACK_FIELDS)[:WINDOW_CHUNK])
        others.extend(chunk)
        if len(chunk) < WINDOW_CHUNK:
            complete = True
            break
        used += sum(row[2] for row in chunk)
        if used > remaining:
            break
    if others and not complete:
        oldest = others[-1][0]
        older = newest_first.filter(seq__lt=oldest)
        heads = {row[3] for row in others if row[3] < oldest}
        if heads:
            others.extend(
                older.filter(Q(group_seq__in=heads) | Q(seq__in=heads)).values_list(*_PACK_FIELDS)
            )
        if not any(row[1] == "user" for row in others):
            others.extend(older.filter(role="user").values_list(*_PACK_FIELDS)[:1])
    return system + others


class WindowSource:
    """What a window is packed from: the summary message and the packing metadata."""

    def __init__(self, session: MemorySession, max_tokens: int) -> None:
        self.session = session
        self.encoding = app_settings.TOKENIZER
        summary = (
            MemorySession.objects.filter(pk=session.pk).values_list("summary", flat=True).first()
        )
        self.summary: dict[str, Any] | None = None
        self.summary_tokens = 0
        if summary:
            self.summary = {"role": "system", "content": SUMMARY_PREFIX + summary}
            self.summary_tokens = conversation.count_message_tokens(
                self.summary, encoding=self.encoding
            )
        self.items = pack_items(_window_rows(session, max(0, max_tokens - self.summary_tokens)))

    @functools.cached_property
    def required(self) -> int:
        """Tokens of what every window must keep: summary, system, newest group, question."""
        return self.summary_tokens + self._pack(0).required

    def _pack(self, budget: int) -> conversation.Packing:
        return conversation.pack_detailed(self.items, max_tokens=budget, encoding=self.encoding)

    def window(self, max_tokens: int, *, strict: bool) -> ContextWindow:
        """Pack within ``max_tokens`` (no more than the source was read for); decrypt the choice."""
        window: list[dict[str, Any]] = [self.summary] if self.summary else []
        packing = self._pack(max(0, max_tokens - self.summary_tokens))
        required = self.summary_tokens + packing.required
        if strict and required > max_tokens:
            raise ContextBudgetError(required=required, max_tokens=max_tokens)
        if not self.items:
            return ContextWindow(window, self.summary_tokens, required, max_tokens)
        condition = Q(role__in=conversation.SYSTEM_ROLES)
        if packing.question is not None:
            # The newest turn's question kept apart: skip (never decrypt) the turn's middle.
            system = {item.seq for item in self.items if item.role in conversation.SYSTEM_ROLES}
            others = [seq for seq in packing.seqs if seq not in system]
            upto = [seq for seq in others if seq <= packing.question]
            after = [seq for seq in others if seq > packing.question]
            condition |= Q(seq__in=upto)
            if after:
                condition |= Q(seq__gte=after[0])
        elif packing.start is not None:
            condition |= Q(seq__gte=packing.start)
        data = dict(
            Message.objects.live()
            .filter(session=self.session)
            .filter(condition)
            .values_list("seq", "data")
        )
        window.extend(data[seq] for seq in packing.seqs if seq in data)
        return ContextWindow(
            conversation.repair(window), self.summary_tokens + packing.tokens, required, max_tokens
        )


def context_window_detailed(
    *, session: MemorySession, max_tokens: int, strict: bool = True
) -> ContextWindow:
    """The window ``context_window`` returns, with its tokens, what it must keep and its overflow.

    Raises ``ContextBudgetError`` (a ``MemoryValidationError`` on ``max_tokens`` carrying
    ``required`` and ``max_tokens``) when what must be kept exceeds the budget, unless
    ``strict=False``: then what must be kept is returned and ``overflow`` says by how much it
    exceeds the budget.
    """
    max_tokens = clean_count(max_tokens, field="max_tokens")
    return WindowSource(session, max_tokens).window(max_tokens, strict=strict)


def context_window(
    *, session: MemorySession, max_tokens: int, strict: bool = True
) -> list[dict[str, Any]]:
    """The messages to send to a model within ``max_tokens`` (packing rules), repaired (rule 5).

    The rolling summary, when there is one, comes first as a system message; then system
    messages; then whole turns (a user message with its replies), newest first, in
    chronological order. Tool calls stay with their results, and the window never starts with
    an answer whose question was cut: when the newest turn does not fit whole, its question and
    its newest groups are kept. Everything counts against the budget, which is never exceeded:
    when what must be kept (system messages, summary, the newest group and its question) does
    not fit, ``ContextBudgetError`` is raised; with ``strict=False`` what must be kept is
    returned anyway and a warning logged (``context_window_detailed`` reports the overflow).
    Packing reads only clear metadata; only the chosen messages are decrypted.
    """
    result = context_window_detailed(session=session, max_tokens=max_tokens, strict=strict)
    if result.overflow:
        logger.warning(
            "context window of session %s is %s tokens over its budget of %s (strict=False)",
            session.pk,
            result.overflow,
            result.max_tokens,
        )
    return result.messages
