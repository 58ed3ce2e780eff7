"""The append hot path: validate a batch of messages, take the session lock (inside the
writing statement where the database can) and store the batch with gap-free seqs.

``services/sessions.py`` is the public session API that calls it through the gate; the SQL of
each dialect is ``services/rows.py``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init
from django.utils import timezone

from ttmemory import conversation, jobs, telemetry
from ttmemory.backends.locks import get_lock, session_lock_reading
from ttmemory.backends.locks.database import PostgresAdvisoryLock
from ttmemory.conf import app_settings
from ttmemory.exceptions import LockTimeout, MemoryValidationError
from ttmemory.models import MemorySession, Message
from ttmemory.services.gate import Change
from ttmemory.services.rows import append_rows
from ttmemory.services.snapshots import apply_retention_locked, take_snapshot_locked

# Rows per page when an appended tool result looks back for the assistant message that
# called it: small first (the call is almost always a few messages back), then larger, with
# no limit on how far back (a result may come hundreds of messages after its call).
OPEN_CALL_PAGES = (50, 1000)
# Writes of one append under its lock before giving up, should ``last_seq`` keep moving
# meanwhile (only a lock that failed lets it move; each move is another append stored).
WRITE_TRIES = 64


def append_messages(
    gate: Change, messages: Sequence[Mapping[str, Any]], *, many: bool
) -> list[Message]:
    """The one append: every message that enters a session is stored here, one message as a
    batch of one (``message_add``, ``message_add_many``, and through them their async twins,
    the REST API, the OpenAI Agents session, MCP's ``append_messages`` and ``turn_add``), inside
    their gate (``gate.session``; the gate takes no lock: this takes it, below).

    Validation and token counts for the whole batch first (nothing written on an error).
    Then, where the database can take the session lock inside the statement that writes
    (PostgreSQL with its advisory lock) and nothing must be read under the lock first (no
    tool result answering a call made before the batch, no automatic snapshot due), one
    statement with no lock held: rows sealed for the seqs after ``last_seq`` as this process
    last saw it, and the statement writes only if the lock was free and ``last_seq`` is still
    that (``rows.append_rows``). Otherwise, or when that lost: the session lock, with
    ``last_seq`` read under it (on PostgreSQL by the statement that waits), the call ids the
    batch answers looked up, the rows sealed and written by the same dialect statement, and
    the automatic snapshot when due. The event and the background triggers follow the commit.
    """
    session = gate.session
    assert session is not None
    max_bytes = app_settings.MAX_MESSAGE_BYTES
    encoding = app_settings.TOKENIZER
    prepared: list[tuple[dict[str, Any], int]] = []
    for index, raw in enumerate(messages):
        field = f"messages[{index}]" if many else "message"
        clean, _ = conversation.validate_message(raw, max_bytes=max_bytes, field=field)
        prepared.append((clean, conversation.count_message_tokens(clean, encoding=encoding)))
    cleaned = [clean for clean, _ in prepared]
    tokens = sum(t for _, t in prepared)
    started = time.perf_counter()
    now = timezone.now()
    earlier = _answered_elsewhere(cleaned)
    stored = None
    if _lock_in_statement(session, len(cleaned), earlier):
        stored = _write(session, prepared, tokens, now, {}, lock_held=False)
    if stored is None:
        with session_lock_reading(session, read=_last_seq_sql(), params=[session.pk]) as row:
            open_calls = _open_calls(session, cleaned) if earlier else {}
            _check_results_answer_calls(cleaned, open_calls, many=many)
            for _ in range(WRITE_TRIES):
                if row is None:
                    raise MemorySession.DoesNotExist(f"session {session.pk} no longer exists")
                session.last_seq = row[0]
                stored = _write(session, prepared, tokens, now, open_calls, lock_held=True)
                if stored is not None:
                    break
                # last_seq moved under the lock: a lock that failed (a Redis lock's partial
                # outage). The statement wrote nothing; read it again and write after it.
                row = _last_seq_row(session)
            else:
                raise LockTimeout(
                    f"session {session.pk} kept changing while its lock was held "
                    f"({WRITE_TRIES} tries): is the lock backend failing?"
                )
            if _snapshot_due(stored[0].seq - 1, len(stored)):
                _auto_snapshot(session)
    _added(gate, session, stored[0].seq, stored[-1].seq, tokens, started)
    return stored


def _added(
    gate: Change,
    session: MemorySession,
    first_seq: int,
    last_seq: int,
    tokens: int,
    started: float,
) -> None:
    """The event and the background triggers of an append (both after commit)."""
    gate.emit(
        "message.added",
        counts={"messages": last_seq - first_seq + 1, "tokens": tokens},
        ids={"first_seq": first_seq, "last_seq": last_seq},
        duration_ms=(time.perf_counter() - started) * 1000,
    )
    _schedule_after_append(session, first_seq=first_seq, last_seq=last_seq, tokens=tokens)


def _last_seq_sql() -> str:
    table = connection.ops.quote_name(MemorySession._meta.db_table)
    return f"SELECT last_seq FROM {table} WHERE id = %s"


def _last_seq_row(session: MemorySession) -> tuple[Any, ...] | None:
    """The session's ``(last_seq,)`` as stored now; None when the session is gone."""
    with connection.cursor() as cursor:
        cursor.execute(_last_seq_sql(), [session.pk])
        row = cursor.fetchone()
    return None if row is None else tuple(row)


def _snapshot_due(before: int, count: int) -> bool:
    """Whether appending ``count`` messages after seq ``before`` crosses ``AUTO_SNAPSHOT_EVERY``."""
    every = app_settings.AUTO_SNAPSHOT_EVERY
    return every > 0 and (before + count) // every > before // every


def _lock_in_statement(session: MemorySession, count: int, earlier: set[str]) -> bool:
    """Whether the append may take the session lock inside its writing statement.

    PostgreSQL with its advisory lock; no tool result answering a call made before the batch
    (its group is looked up under the lock first; one answering a call of the same batch is
    grouped in Python); no automatic snapshot due (taken under the lock).
    """
    if connection.vendor != "postgresql" or earlier:
        return False
    if _snapshot_due(session.last_seq, count):
        return False
    return type(get_lock()) is PostgresAdvisoryLock


def _write(
    session: MemorySession,
    prepared: Sequence[tuple[dict[str, Any], int]],
    tokens: int,
    now: dt.datetime,
    open_calls: Mapping[str, int],
    *,
    lock_held: bool,
) -> list[Message] | None:
    """Seal and store the batch for the seqs after ``session.last_seq`` (``rows.append_rows``)
    and update ``session``'s counters; None: nothing written (``lock_held`` False only: a busy
    lock or a moved ``last_seq``)."""
    first = session.last_seq + 1
    cleaned = [clean for clean, _ in prepared]
    groups = conversation.assign_groups(cleaned, first_seq=first, open_calls=open_calls)
    rows = [
        _message_row(session, first + index, clean, token_count, groups[index], now)
        for index, (clean, token_count) in enumerate(prepared)
    ]
    counters = append_rows(session, rows, tokens=tokens, now=now, lock_held=lock_held)
    if counters is None:
        return None
    if not lock_held:
        _lock_taken_in_statement()
    session.message_count, session.token_count = counters
    session.last_seq = rows[-1].seq
    session.updated_at = now
    return rows


def _lock_taken_in_statement() -> None:
    taken = get_lock()
    taken.stats.acquired += 1
    # Taken inside the statement without waiting: an empty wait span and a zero wait
    # sample keep the lock's traces and metrics true on this one-round-trip path too.
    with telemetry.lock_wait(backend=type(taken).__name__):
        pass


def _message_row(
    session: MemorySession,
    seq: int,
    clean: dict[str, Any],
    token_count: int,
    group_seq: int,
    now: dt.datetime,
) -> Message:
    values = {
        "session_id": session.pk,
        "namespace": session.namespace,
        "seq": seq,
        "role": clean["role"],
        "data": clean,
        "token_count": token_count,
        "tool_call_id": clean.get("tool_call_id") or "",
        "tool_call_ids": conversation.tool_call_ids(clean),
        "group_seq": group_seq,
        "created_at": now,
    }
    if pre_init.has_listeners(Message) or post_init.has_listeners(Message):
        row = Message(**values)
    else:
        # Model.__init__ sets each field through its descriptor, a large share of an append's
        # Python time (bench/write_path.py); nobody listens to its signals here, so the
        # instance gets its field values as from_db would, every other one its default.
        row = Message.__new__(Message)
        row._state = ModelState()
        state = row.__dict__
        for field in Message._meta.concrete_fields:
            name = field.attname
            state[name] = values[name] if name in values else field.get_default()
    Message.session.field.set_cached_value(row, session)
    return row


def _schedule_after_append(
    session: MemorySession, *, first_seq: int, last_seq: int, tokens: int
) -> None:
    """Queue indexing / learning / summarising when an append crosses their triggers (after
    commit). The episodic index is caught up by the ``message_index`` job, not here.

    Summarising is queued once per crossing of ``SUMMARISE_AT_TOKENS`` (the append that takes
    the live tokens over it), not on every later append while the summary is being made; if
    that summary never lands (the LLM is down past its retries), crossing the next multiple of
    the threshold queues it again.
    """
    index_every = app_settings.MESSAGE_INDEX_EVERY
    if app_settings.MESSAGE_SEARCH_INDEX and (
        first_seq == 1 or last_seq // index_every > (first_seq - 1) // index_every
    ):
        jobs.schedule("message_index", session.pk, False)  # this session only: no sweep
    learn_every = app_settings.LEARN_EVERY
    if learn_every > 0 and last_seq // learn_every > (first_seq - 1) // learn_every:
        jobs.schedule("learn", session.pk, last_seq)
    threshold = app_settings.SUMMARISE_AT_TOKENS
    before, after = session.token_count - tokens, session.token_count
    if threshold > 0 and after > threshold and (before - 1) // threshold < (after - 1) // threshold:
        jobs.schedule("summarise", session.pk)


def _auto_snapshot(session: MemorySession) -> None:
    snapshot = take_snapshot_locked(
        session, label=f"automatic at seq {session.last_seq}", kind="automatic"
    )
    apply_retention_locked(session, protect={snapshot.pk})


def _answered_elsewhere(batch: list[dict[str, Any]]) -> set[str]:
    """Call ids that tool results of ``batch`` answer and no earlier message of it made."""
    made: set[str] = set()
    wanted: set[str] = set()
    for message in batch:
        if message["role"] == "tool" and message["tool_call_id"] not in made:
            wanted.add(message["tool_call_id"])
        made.update(conversation.tool_call_ids(message))
    return wanted


def _open_calls(session: MemorySession, batch: list[dict[str, Any]]) -> dict[str, int]:
    """Map call ids answered in ``batch`` but made before it to the seq of the calling message.

    Pages back through the session's assistant messages with tool calls (archived ones
    included), newest first, as far as it takes: no limit on how long after its call a result
    may come. Call it holding the session lock, before the batch is stored.
    """
    wanted = _answered_elsewhere(batch)
    if not wanted:
        return {}
    found: dict[str, int] = {}
    earlier = Message.objects.filter(session=session, role="assistant").exclude(tool_call_ids=[])
    below: int | None = None
    for page in itertools.count():
        size = OPEN_CALL_PAGES[min(page, len(OPEN_CALL_PAGES) - 1)]
        rows = earlier if below is None else earlier.filter(seq__lt=below)
        recent = list(rows.order_by("-seq").values_list("seq", "tool_call_ids")[:size])
        for seq, call_ids in recent:
            for call_id in call_ids or ():
                if call_id in wanted and call_id not in found:
                    found[call_id] = seq
            if len(found) == len(wanted):
                return found
        if len(recent) < size:  # reached the session's first message
            break
        below = recent[-1][0]
    return found


def _check_results_answer_calls(
    batch: list[dict[str, Any]], open_calls: Mapping[str, int], *, many: bool
) -> None:
    """Refuse a tool result that answers no call: one made earlier in ``batch`` or found by
    ``_open_calls``. Such a result could never be shown to a model (repair drops it)."""
    made = set(open_calls)
    for index, message in enumerate(batch):
        if message["role"] == "tool" and message["tool_call_id"] not in made:
            field = f"messages[{index}]" if many else "message"
            raise MemoryValidationError(
                f"{field}.tool_call_id",
                f"{message['tool_call_id']!r} answers no tool call of this session (none in "
                "this request before it, none in its history).",
            )
        made.update(conversation.tool_call_ids(message))
