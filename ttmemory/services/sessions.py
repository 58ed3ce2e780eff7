"""Session memory writes: open a session, append messages, trim and clear its history."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from django.db import connection
from django.utils import timezone

from ttmemory import conversation, events, jobs
from ttmemory.backends.locks import session_lock
from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message, Snapshot
from ttmemory.results import TrimResult
from ttmemory.services.rows import (
    SEQ_CHUNK,
    bump_counters,
    insert_fields,
    insert_messages,
    touch_session,
)
from ttmemory.services.snapshots import apply_retention_locked, take_snapshot_locked
from ttmemory.validation import clean_count, clean_identifier

# How far back an appended tool result looks for the assistant message that called it.
OPEN_CALL_LOOKBACK = 200


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
    of their own. Raises MemoryValidationError for an empty or malformed namespace or key.
    """
    namespace = clean_identifier(namespace, field="namespace")
    key = clean_identifier(key, field="key")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise MemoryValidationError("metadata", "must be a JSON object")
    session, created = MemorySession.objects.get_or_create(
        namespace=namespace, key=key, defaults={"metadata": dict(metadata or {})}
    )
    return (session, created) if with_created else session


def message_add(*, session: MemorySession, message: Mapping[str, Any]) -> Message:
    """Append one Chat Completions message to ``session`` and return the stored row.

    The database assigns the next gap-free ``seq`` under the session's row lock. Raises
    MemoryValidationError (nothing written) for an unknown role, a tool message without
    ``tool_call_id``, content that is not JSON or a message over ``MAX_MESSAGE_BYTES``.
    """
    return _append(session, [message], many=False)[0]


def message_add_many(
    *, session: MemorySession, messages: Sequence[Mapping[str, Any]]
) -> list[Message]:
    """Append ``messages`` in order, atomically: all are stored with consecutive seqs, or none.

    Validation errors name the offending item (``messages[3].role``) and write nothing.
    """
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise MemoryValidationError("messages", "must be a list of message objects")
    if not messages:
        return []
    return _append(session, messages, many=True)


def _append(
    session: MemorySession, messages: Sequence[Mapping[str, Any]], *, many: bool
) -> list[Message]:
    max_bytes = app_settings.MAX_MESSAGE_BYTES
    encoding = app_settings.TOKENIZER
    prepared: list[tuple[dict[str, Any], int]] = []
    for index, raw in enumerate(messages):
        field = f"messages[{index}]" if many else "message"
        clean, _ = conversation.validate_message(raw, max_bytes=max_bytes, field=field)
        if len(clean.get("tool_call_id") or "") > 255:
            raise MemoryValidationError(f"{field}.tool_call_id", "is longer than 255 characters")
        prepared.append((clean, conversation.count_message_tokens(clean, encoding=encoding)))

    count = len(prepared)
    tokens = sum(t for _, t in prepared)
    started = time.perf_counter()
    now = timezone.now()
    with session_lock(session):
        one = None
        if count == 1 and connection.vendor == "postgresql":
            one = _append_one_postgres(session, prepared[0][0], prepared[0][1], now)
        if one is not None:
            rows = [one]
            last_seq = first_seq = one.seq
        else:
            last_seq = bump_counters(session, seqs=count, messages=count, tokens=tokens, now=now)
            first_seq = last_seq - count + 1
            cleaned = [clean for clean, _ in prepared]
            groups = conversation.assign_groups(
                cleaned, first_seq=first_seq, open_calls=_open_calls(session, cleaned, first_seq)
            )
            rows = [
                _message_row(session, first_seq + index, clean, token_count, groups[index], now)
                for index, (clean, token_count) in enumerate(prepared)
            ]
            insert_messages(rows)
        every = app_settings.AUTO_SNAPSHOT_EVERY
        if every > 0 and last_seq // every > (first_seq - 1) // every:
            _auto_snapshot(session)
        events.emit(
            "message.added",
            namespace=session.namespace,
            session_id=session.pk,
            counts={"messages": count, "tokens": tokens},
            ids={"first_seq": first_seq, "last_seq": last_seq},
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        _schedule_after_append(session, first_seq=first_seq, last_seq=last_seq)
    return rows


def _message_row(
    session: MemorySession,
    seq: int,
    clean: dict[str, Any],
    token_count: int,
    group_seq: int,
    now: dt.datetime,
) -> Message:
    return Message(
        session=session,
        namespace=session.namespace,
        seq=seq,
        role=clean["role"],
        data=clean,
        token_count=token_count,
        tool_call_id=clean.get("tool_call_id") or "",
        tool_call_ids=conversation.tool_call_ids(clean),
        group_seq=group_seq,
        created_at=now,
    )


def _append_one_postgres(
    session: MemorySession, clean: dict[str, Any], token_count: int, now: dt.datetime
) -> Message | None:
    """One message in one statement: the counter UPDATE and the INSERT share a round trip.

    The hot path of a chat turn on PostgreSQL. The message is encrypted for its row, so its
    seq is known before the statement: the next after ``session.last_seq`` as this process
    last saw it, and the UPDATE applies only if that is still the session's ``last_seq``.
    None (nothing written) when it is not: another process appended since, and the caller
    takes the general path. A tool result's group is looked up first (the session lock is
    held, so no append can come in between); any other message heads its own group.
    """
    head = None
    if clean["role"] == "tool":
        head = _open_calls(session, [clean], first_seq=None).get(clean["tool_call_id"])
    seq = session.last_seq + 1
    row = _message_row(session, seq, clean, token_count, head or seq, now)
    meta = Message._meta
    quote = connection.ops.quote_name
    fields = insert_fields()
    # Plain columns go to the driver as they are; only the encrypted message and the JSON list
    # of call ids need their field's conversion (this runs on every chat turn).
    values = {f.name: getattr(row, f.attname) for f in fields}
    for name in ("data", "tool_call_ids"):
        field = Message._meta.get_field(name)
        values[name] = field.get_db_prep_save(field.pre_save(row, True), connection)  # type: ignore[union-attr]
    columns = ", ".join(quote(f.column) for f in fields)
    select = ", ".join(
        "s.last_seq" if f.name == "seq" else
        ("COALESCE(%s, s.last_seq)" if f.name == "group_seq" else "%s")
        for f in fields
    )  # fmt: skip
    params = [
        seq,
        token_count,
        now,
        session.pk,
        seq - 1,
        *[head if f.name == "group_seq" else values[f.name] for f in fields if f.name != "seq"],
    ]
    sessions = quote(MemorySession._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH s AS (UPDATE {sessions} SET last_seq = %s, "
            "message_count = message_count + 1, token_count = token_count + %s, updated_at = %s "
            "WHERE id = %s AND last_seq = %s RETURNING last_seq, message_count, token_count) "
            f"INSERT INTO {quote(meta.db_table)} ({columns}) SELECT {select} FROM s "
            "RETURNING id, seq, (SELECT message_count FROM s), (SELECT token_count FROM s)",
            params,
        )
        result = cursor.fetchone()
    if result is None:  # stale last_seq (or a deleted session, which the general path reports)
        return None
    row.pk, row.seq, session.message_count, session.token_count = result
    row.group_seq = head or row.seq
    row._state.adding = False
    row._state.db = connection.alias
    session.last_seq = row.seq
    session.updated_at = now
    return row


def _schedule_after_append(session: MemorySession, *, first_seq: int, last_seq: int) -> None:
    """Queue learning / summarising when their triggers are crossed (after commit)."""
    learn_every = app_settings.LEARN_EVERY
    if learn_every > 0 and last_seq // learn_every > (first_seq - 1) // learn_every:
        jobs.schedule("learn", session.pk, last_seq)
    threshold = app_settings.SUMMARISE_AT_TOKENS
    if threshold > 0 and session.token_count > threshold:
        jobs.schedule("summarise", session.pk)


def _auto_snapshot(session: MemorySession) -> None:
    snapshot = take_snapshot_locked(
        session, label=f"automatic at seq {session.last_seq}", kind="automatic"
    )
    apply_retention_locked(session, protect={snapshot.pk})


def _open_calls(
    session: MemorySession, batch: list[dict[str, Any]], first_seq: int | None
) -> dict[str, int]:
    """Map call ids answered in ``batch`` but made before it to the seq of the calling message.

    ``first_seq`` is the batch's first seq, or None when the batch is not stored yet.
    """
    made_here = {call_id for m in batch for call_id in conversation.tool_call_ids(m)}
    wanted = {
        m["tool_call_id"]
        for m in batch
        if m["role"] == "tool" and m["tool_call_id"] not in made_here
    }
    if not wanted:
        return {}
    found: dict[str, int] = {}
    earlier = Message.objects.filter(session=session, role="assistant")
    if first_seq is not None:
        earlier = earlier.filter(seq__lt=first_seq)
    recent = earlier.order_by("-seq").values_list("seq", "tool_call_ids")[:OPEN_CALL_LOOKBACK]
    for seq, call_ids in recent:
        for call_id in call_ids or ():
            if call_id in wanted and call_id not in found:
                found[call_id] = seq
        if len(found) == len(wanted):
            break
    return found


def session_trim(
    *, session: MemorySession, max_tokens: int, archive: bool | None = None
) -> TrimResult:
    """Take everything outside a ``max_tokens`` budget out of the live history, in one transaction.

    What stays is exactly what ``context_window`` would pack (system messages, then whole tool
    groups newest first). ``TRIM_MODE`` decides whether the rest is archived or deleted; when a
    summariser is configured (``SUMMARISE_AT_TOKENS``) it is archived and a summarisation is
    queued, which deletes it afterwards in delete mode. ``archive=True`` forces archiving.
    """
    max_tokens = clean_count(max_tokens, field="max_tokens")
    summarising = app_settings.SUMMARISE_AT_TOKENS > 0
    mode = "archive" if archive or summarising else app_settings.TRIM_MODE
    now = timezone.now()
    with session_lock(session):
        touch_session(session)
        rows = list(
            Message.objects.live()
            .filter(session=session)
            .values_list("seq", "role", "token_count", "group_seq")
        )
        items = [
            conversation.PackItem(seq, role, tokens, group) for seq, role, tokens, group in rows
        ]
        kept = set(conversation.pack(items, max_tokens=max_tokens)) if items else set()
        removed = [(seq, tokens) for seq, _, tokens, _ in rows if seq not in kept]
        removed_seqs = [seq for seq, _ in removed]
        removed_tokens = sum(tokens for _, tokens in removed)
        for start in range(0, len(removed_seqs), SEQ_CHUNK):
            chunk = Message.objects.filter(
                session=session, seq__in=removed_seqs[start : start + SEQ_CHUNK]
            )
            if mode == "delete":
                chunk.delete()
            else:
                chunk.update(archived_at=now)
        if removed:
            bump_counters(session, seqs=0, messages=-len(removed), tokens=-removed_tokens, now=now)
        events.emit(
            "session.trimmed",
            namespace=session.namespace,
            session_id=session.pk,
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


def session_clear(*, session: MemorySession) -> int:
    """Delete every message of ``session`` (live and archived) and its summary; return the count.

    ``last_seq`` is kept, so seqs are never reused after a clear.
    """
    with session_lock(session):
        touch_session(session)
        deleted, _ = Message.objects.filter(session=session).delete()
        MemorySession.objects.filter(pk=session.pk).update(
            message_count=0, token_count=0, summary=None, summary_upto_seq=0
        )
        events.emit(
            "session.cleared",
            namespace=session.namespace,
            session_id=session.pk,
            counts={"deleted": deleted},
        )
    session.message_count = 0
    session.token_count = 0
    session.summary = None
    session.summary_upto_seq = 0
    return deleted


def session_delete(*, session: MemorySession) -> dict[str, int]:
    """Delete ``session`` with its messages and snapshots; facts learned from it stay (their
    source session becomes empty). Returns the rows deleted per table."""

    with session_lock(session):
        counts = {
            "message": Message.objects.filter(session=session).delete()[0],
            "snapshot": Snapshot.objects.filter(session=session).delete()[0],
        }
        MemorySession.objects.filter(pk=session.pk).delete()
        events.emit(
            "session.deleted",
            namespace=session.namespace,
            session_id=session.pk,
            counts=counts,
        )
    return counts
