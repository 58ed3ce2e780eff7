"""The public session API: open a session, append messages, trim, clear, pop and delete.

Each write passes the gate (``services/gate.py``); the append's hot path, with the SQL that
takes the lock inside its statement, is ``services/appends.py``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, overload

from django.db.models import F
from django.utils import timezone

from ttmemory import conversation, jobs
from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message, Snapshot
from ttmemory.results import TrimResult
from ttmemory.selectors.sessions import pack_items
from ttmemory.services.appends import append_messages
from ttmemory.services.episodes import index_delete_locked
from ttmemory.services.gate import Change, change
from ttmemory.services.rows import SEQ_CHUNK, bump_counters, touch_session
from ttmemory.validation import clean_count, clean_json_object, clean_key


@overload
def session_open(
    *, namespace: str, key: str, metadata: Mapping[str, Any] | None = None
) -> MemorySession: ...


@overload
def session_open(
    *,
    namespace: str,
    key: str,
    metadata: Mapping[str, Any] | None = None,
    with_created: Literal[True],
) -> tuple[MemorySession, bool]: ...


def session_open(
    *,
    namespace: str,
    key: str,
    metadata: Mapping[str, Any] | None = None,
    with_created: bool = False,
) -> MemorySession | tuple[MemorySession, bool]:
    """Get the session ``(namespace, key)``, creating it if needed.

    ``metadata`` (a JSON object, stored in clear) is applied only when the session is created.
    With ``with_created=True`` the answer is ``(session, created)``, decided by the same
    get-or-create, so callers that report "created" (the REST API's 201) need no racy check
    of their own. Raises MemoryValidationError for an empty or malformed namespace or key
    (``clean_namespace``, ``clean_key``: invisible, control and bidi characters refused) or
    metadata that is not JSON storable in clear (NaN, infinities, NUL, nesting deeper than
    ``MAX_JSON_DEPTH``), naming the offending part (``metadata.tags[2]``).
    """
    # get_or_create takes its own transaction for the insert only: a get is no transaction.
    with change("open", namespace=namespace, atomic=False, hold="allow") as gate:
        key = clean_key(key, field="key")
        stored = {} if metadata is None else clean_json_object(metadata, field="metadata")
        session, created = MemorySession.objects.get_or_create(
            namespace=gate.namespace, key=key, defaults={"metadata": stored}
        )
    return (session, created) if with_created else session


def message_add(*, session: MemorySession, message: Mapping[str, Any]) -> Message:
    """Append one Chat Completions message to ``session`` and return the stored row.

    The database assigns the next gap-free ``seq`` under the session's row lock. Raises
    MemoryValidationError (nothing written) for an unknown role, a tool message without
    ``tool_call_id`` or one answering no call made earlier in the session (archived included),
    tool calls on a message that is not an assistant's, content that is not JSON or a message
    over ``MAX_MESSAGE_BYTES``.
    """
    with _appending(session) as gate:
        return append_messages(gate, [message], many=False)[0]


def message_add_many(
    *, session: MemorySession, messages: Sequence[Mapping[str, Any]]
) -> list[Message]:
    """Append ``messages`` in order, atomically: all are stored with consecutive seqs, or none.

    Validation errors name the offending item (``messages[3].role``) and write nothing. A tool
    result may answer a call made earlier in the same list.
    """
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise MemoryValidationError("messages", "must be a list of message objects")
    if not messages:
        return []
    with _appending(session) as gate:
        return append_messages(gate, messages, many=True)


def _appending(session: MemorySession) -> AbstractContextManager[Change]:
    """The gate of an append: a held session's conversation goes on (``hold="allow"``), and
    the append takes the session lock itself, inside its writing statement where it can."""
    return change("append", session=session, lock=False, atomic=False, hold="allow")


def session_trim(
    *, session: MemorySession, max_tokens: int, archive: bool | None = None
) -> TrimResult:
    """Take everything outside a ``max_tokens`` budget out of the live history, in one transaction.

    What stays is what ``context_window`` would pack (system messages, then whole turns newest
    first) and every message after the oldest of them: when the newest turn alone exceeds the
    budget, the window keeps its question and newest groups, and trimming keeps the whole turn
    (it never cuts a hole, so the rolling summary always covers a prefix of the history).
    ``TRIM_MODE`` decides whether the rest is archived or deleted; when a summariser is
    configured (``SUMMARISE_AT_TOKENS``) it is archived and a summarisation is queued, which
    deletes it afterwards in delete mode. ``archive=True`` forces archiving.
    """
    max_tokens = clean_count(max_tokens, field="max_tokens")
    summarising = app_settings.SUMMARISE_AT_TOKENS > 0
    mode = "archive" if archive or summarising else app_settings.TRIM_MODE
    now = timezone.now()
    with change("trim", session=session, hold="allow") as gate:
        if mode == "delete" and gate.held():
            mode = "archive"  # a held session's trimmed turns are kept (archived) until lifted
        touch_session(session)
        rows = list(
            Message.objects.live()
            .filter(session=session)
            .values_list("seq", "role", "token_count", "group_seq", "tool_call_ids", "tool_call_id")
        )
        packing = conversation.pack_detailed(
            pack_items(rows), max_tokens=max_tokens, encoding=app_settings.TOKENIZER
        )
        # Everything from the window's oldest message on stays: trimming never cuts a hole,
        # so the rolling summary always covers a prefix of the history.
        start = packing.start
        removed = [
            (seq, tokens)
            for seq, role, tokens, *_ in rows
            if role not in conversation.SYSTEM_ROLES and start is not None and seq < start
        ]
        removed_seqs = [seq for seq, _ in removed]
        removed_tokens = sum(tokens for _, tokens in removed)
        messages_cut_locked(session, removed_seqs, mode=mode, now=now)
        if removed:
            bump_counters(
                session,
                seqs=0,
                messages=-len(removed),
                tokens=-removed_tokens,
                now=now,
                history=True,
            )
        gate.emit(
            "session.trimmed",
            counts={"removed": len(removed), "removed_tokens": removed_tokens},
        )
        if removed and summarising and archive is None:
            jobs.schedule("summarise", session.pk)
    return TrimResult(
        removed=len(removed),
        removed_tokens=removed_tokens,
        kept=session.message_count,
        kept_tokens=session.token_count,
        mode=mode,
        removed_seqs=tuple(removed_seqs),
    )


def messages_cut_locked(
    session: MemorySession,
    seqs: Sequence[int],
    *,
    mode: str,
    now: dt.datetime,
    rewound: bool = False,
) -> None:
    """Delete messages ``seqs`` of ``session`` with their index rows (``mode`` "delete"), or
    archive them (``rewound``: by a rewind, ``rewound_at`` set too), ``SEQ_CHUNK`` at a time.
    Counters are the caller's. Call under the session's lock, inside its transaction."""
    stamp = {"archived_at": now, **({"rewound_at": now} if rewound else {})}
    for start in range(0, len(seqs), SEQ_CHUNK):
        chunk = list(seqs[start : start + SEQ_CHUNK])
        rows = Message.objects.filter(session=session, seq__in=chunk)
        if mode == "delete":
            rows.delete()
            index_delete_locked(session, chunk)
        else:
            rows.update(**stamp)


def session_clear(*, session: MemorySession) -> int:
    """Delete every message of ``session`` (live and archived) and its summary; return the count.

    ``last_seq`` is kept, so seqs are never reused after a clear. Raises ``LegalHoldError``
    (nothing deleted) while the session or its namespace is under legal hold.
    """
    with change("clear", session=session) as gate:
        touch_session(session)
        deleted, _ = Message.objects.filter(session=session).delete()
        index_delete_locked(session)
        MemorySession.objects.filter(pk=session.pk).update(
            message_count=0,
            token_count=0,
            summary=None,
            summary_upto_seq=0,
            history_version=F("history_version") + 1,
        )
        gate.emit("session.cleared", counts={"deleted": deleted})
    session.message_count = 0
    session.token_count = 0
    session.summary = None
    session.summary_upto_seq = 0
    return deleted


def message_pop(
    *,
    session: MemorySession,
    put_back: Callable[[dict[str, Any]], Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any] | None:
    """Delete the newest live message of ``session`` and return it (None when there is none).

    Under the session lock, in one transaction; the counters drop by the message and its
    tokens, and ``last_seq`` is kept, so its seq is never reused. ``put_back(message)`` returns
    messages appended in its place in the same transaction and under the same lock (as
    ``message_add_many``): the OpenAI Agents session pops one item off a message holding
    several and puts the rest back as one step, which no reader sees half done.
    """
    with change("pop", session=session, hold="check") as gate:
        row = Message.objects.live().filter(session=session).order_by("-seq").first()
        if row is None:
            return None
        gate.refuse_if_held()
        Message.objects.filter(pk=row.pk).delete()
        index_delete_locked(session, [row.seq])
        bump_counters(
            session,
            seqs=0,
            messages=-1,
            tokens=-row.token_count,
            now=timezone.now(),
            history=True,
        )
        gate.emit("message.popped", ids={"seq": row.seq})
        rest = put_back(dict(row.data)) if put_back is not None else ()
        if rest:
            message_add_many(session=session, messages=rest)
    return dict(row.data)


def session_delete(*, session: MemorySession) -> dict[str, int]:
    """Delete ``session`` with its messages and snapshots; facts learned from it stay (their
    source session becomes empty). Returns the rows deleted per table. Raises
    ``LegalHoldError`` (nothing deleted) while the session or its namespace is under legal hold.
    """
    with change("delete", session=session) as gate:
        index_delete_locked(session)
        counts = {
            "message": Message.objects.filter(session=session).delete()[0],
            "snapshot": Snapshot.objects.filter(session=session).delete()[0],
        }
        MemorySession.objects.filter(pk=session.pk).delete()
        gate.emit("session.deleted", counts=counts)
    return counts
