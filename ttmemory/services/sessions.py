"""Session memory writes: open a session, append messages, trim and clear its history."""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from django.db import connection, transaction
from django.db.models import F
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init
from django.utils import timezone

from ttmemory import conversation, events, jobs, telemetry
from ttmemory.backends.locks import get_lock, session_lock
from ttmemory.backends.locks.database import PostgresAdvisoryLock, advisory_key
from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message, Snapshot
from ttmemory.models.binding import binding_cursor
from ttmemory.results import TrimResult
from ttmemory.selectors.retention import legal_hold_find
from ttmemory.selectors.sessions import pack_items
from ttmemory.services.episodes import index_delete_locked
from ttmemory.services.holds import refuse_if_held
from ttmemory.services.rows import (
    SEQ_CHUNK,
    bump_counters,
    insert_fields,
    insert_messages,
    touch_session,
    unnest_source,
)
from ttmemory.services.snapshots import apply_retention_locked, take_snapshot_locked
from ttmemory.validation import clean_count, clean_json_object, clean_key, clean_namespace

# Rows per page when an appended tool result looks back for the assistant message that
# called it: small first (the call is almost always a few messages back), then larger, with
# no limit on how far back (a result may come hundreds of messages after its call).
OPEN_CALL_PAGES = (50, 1000)


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
    namespace = clean_namespace(namespace, field="namespace")
    key = clean_key(key, field="key")
    stored = {} if metadata is None else clean_json_object(metadata, field="metadata")
    session, created = MemorySession.objects.get_or_create(
        namespace=namespace, key=key, defaults={"metadata": stored}
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
    return _append(session, [message], many=False)[0]


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
        prepared.append((clean, conversation.count_message_tokens(clean, encoding=encoding)))

    count = len(prepared)
    tokens = sum(t for _, t in prepared)
    started = time.perf_counter()
    now = timezone.now()
    tried = _one_statement_applies(session, prepared, count)
    if tried:
        stored = _append_in_one_statement(session, prepared, tokens, now, lock=True)
        if stored is None:  # the lock was busy or last_seq stale: wait, then one statement
            stored = _append_after_wait(session, prepared, tokens, now)
        if stored is not None:
            _added(session, stored[0].seq, stored[-1].seq, tokens, started)
            return stored
    with session_lock(session):
        one = None
        # After a failed one-statement try the session's last_seq is almost surely stale
        # (another writer appended): straight to the counters then, one round trip less.
        if count == 1 and not tried and connection.vendor == "postgresql":
            one = _append_one_postgres(
                session, prepared[0][0], prepared[0][1], now, many=many, lock=False
            )
        if one is not None:
            rows = [one]
            last_seq = first_seq = one.seq
        else:
            cleaned = [clean for clean, _ in prepared]
            open_calls = _open_calls(session, cleaned)
            _check_results_answer_calls(cleaned, open_calls, many=many)
            last_seq = bump_counters(session, seqs=count, messages=count, tokens=tokens, now=now)
            first_seq = last_seq - count + 1
            groups = conversation.assign_groups(cleaned, first_seq=first_seq, open_calls=open_calls)
            rows = [
                _message_row(session, first_seq + index, clean, token_count, groups[index], now)
                for index, (clean, token_count) in enumerate(prepared)
            ]
            insert_messages(rows, fresh=True)
        every = app_settings.AUTO_SNAPSHOT_EVERY
        if every > 0 and last_seq // every > (first_seq - 1) // every:
            _auto_snapshot(session)
        _added(session, first_seq, last_seq, tokens, started)
    return rows


def _added(
    session: MemorySession, first_seq: int, last_seq: int, tokens: int, started: float
) -> None:
    """The event and the background triggers of an append (both after commit)."""
    events.emit(
        "message.added",
        namespace=session.namespace,
        session_id=session.pk,
        counts={"messages": last_seq - first_seq + 1, "tokens": tokens},
        ids={"first_seq": first_seq, "last_seq": last_seq},
        duration_ms=(time.perf_counter() - started) * 1000,
    )
    _schedule_after_append(session, first_seq=first_seq, last_seq=last_seq, tokens=tokens)


def _one_statement_applies(
    session: MemorySession, prepared: Sequence[tuple[dict[str, Any], int]], count: int
) -> bool:
    """Whether the messages can be appended by one statement that also takes the lock.

    PostgreSQL with its advisory lock, no tool result answering a call made before the batch
    (its group is looked up under the lock first; one answering a call of the same batch is
    grouped in Python) and no automatic snapshot due (taken under the lock).
    """
    if connection.vendor != "postgresql":
        return False
    if count == 1:
        if prepared[0][0]["role"] == "tool":
            return False
    elif _answered_elsewhere([clean for clean, _ in prepared]):
        return False
    every = app_settings.AUTO_SNAPSHOT_EVERY
    if every > 0 and (session.last_seq + count) // every > session.last_seq // every:
        return False
    return type(get_lock()) is PostgresAdvisoryLock


def _append_after_wait(
    session: MemorySession,
    prepared: Sequence[tuple[dict[str, Any], int]],
    tokens: int,
    now: dt.datetime,
) -> list[Message] | None:
    """A contended append: wait for the lock, then append in one statement.

    After a lost one-statement try (the lock was busy, or another writer appended since this
    process last saw the session): the statement that waits for the advisory lock also reads
    the session's ``last_seq`` once the lock is held (``PostgresAdvisoryLock.wait_reading``),
    so the messages are sealed for the right seqs and stored with the counters by the
    one-statement append, and the lock is held for that statement and the COMMIT only (the
    baseline's INSERT and COMMIT), not for a counter UPDATE, an INSERT and the COMMIT. None
    (nothing written) if the session row is gone or the statement found ``last_seq`` moved,
    which the lock rules out: the caller's general path then decides.
    """
    lock = get_lock()
    assert isinstance(lock, PostgresAdvisoryLock)  # _one_statement_applies said so
    table = connection.ops.quote_name(MemorySession._meta.db_table)
    with transaction.atomic():
        with telemetry.lock_wait(backend=type(lock).__name__):
            row = lock.wait_reading(
                session.pk,
                timeout=app_settings.LOCK_TIMEOUT,
                read=f"SELECT last_seq FROM {table} WHERE id = %s",
                params=[session.pk],
            )
        if row is None:
            return None
        session.last_seq = row[0]
        return _append_in_one_statement(session, prepared, tokens, now, lock=False)


def _append_in_one_statement(
    session: MemorySession,
    prepared: Sequence[tuple[dict[str, Any], int]],
    tokens: int,
    now: dt.datetime,
    *,
    lock: bool,
) -> list[Message] | None:
    """One message or a batch in one statement (``lock``: trying the advisory lock in it);
    None: nothing written (a busy lock, a stale ``last_seq``, a deleted session)."""
    if len(prepared) == 1:
        clean, token_count = prepared[0]
        one = _append_one_postgres(session, clean, token_count, now, lock=lock)
        return None if one is None else [one]
    return _append_many_postgres(session, prepared, tokens, now, lock=lock)


def _append_many_postgres(
    session: MemorySession,
    prepared: Sequence[tuple[dict[str, Any], int]],
    tokens: int,
    now: dt.datetime,
    *,
    lock: bool,
) -> list[Message] | None:
    """A batch in one statement: lock, counters and every row in one round trip.

    ``_append_one_postgres(lock=True)`` for many messages: the seqs are the next after
    ``session.last_seq`` as this process last saw it (each message is encrypted for its row
    before the statement), the statement takes the session's advisory lock with
    ``pg_try_advisory_xact_lock``, moves the counters only if the lock was free and
    ``last_seq`` is still what was seen, and inserts the rows from one array per column only
    if it did. None (nothing written) otherwise: the caller takes the general path. No tool
    result of the batch answers a call made before it (``_one_statement_applies``).
    """
    cleaned = [clean for clean, _ in prepared]
    count = len(cleaned)
    first = session.last_seq + 1
    groups = conversation.assign_groups(cleaned, first_seq=first, open_calls={})
    rows = [
        _message_row(session, first + index, clean, token_count, groups[index], now)
        for index, (clean, token_count) in enumerate(prepared)
    ]
    quote = connection.ops.quote_name
    fields = insert_fields()
    columns = ", ".join(quote(f.column) for f in fields)
    sessions = quote(MemorySession._meta.db_table)
    with binding_cursor(prepare=True) as (cursor, mark):
        select, source, arrays = unnest_source(rows, fields, mark)
        locking = f"l AS (SELECT pg_try_advisory_xact_lock({mark}, {mark}) AS ok), "
        cursor.execute(
            f"WITH {locking if lock else ''}"
            f"s AS (UPDATE {sessions} SET last_seq = {mark}, "
            f"message_count = message_count + {mark}, token_count = token_count + {mark}, "
            f"updated_at = {mark} WHERE id = {mark} AND last_seq = {mark}"
            f"{' AND (SELECT ok FROM l)' if lock else ''} "
            "RETURNING message_count, token_count) "
            f"INSERT INTO {quote(Message._meta.db_table)} ({columns}) SELECT {select} "
            f"FROM s, {source} "
            "RETURNING id, seq, (SELECT message_count FROM s), (SELECT token_count FROM s)",
            [
                *(advisory_key(session.pk) if lock else ()),
                first + count - 1,
                count,
                tokens,
                now,
                session.pk,
                first - 1,
                *arrays,
            ],
        )
        result = cursor.fetchall()
    if len(result) != count:  # a busy lock or a stale last_seq (or a deleted session)
        return None
    if lock:
        _lock_taken_in_statement()
    ids = {seq: pk for pk, seq, _, _ in result}
    for row in rows:
        row.pk = ids[row.seq]
        row._state.adding = False
        row._state.db = connection.alias
    session.message_count, session.token_count = result[0][2], result[0][3]
    session.last_seq = first + count - 1
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
        # Model.__init__ cost 40 us a row (a third of the Python time of an append of 100),
        # setting each field through its descriptor; nobody listens to its signals here, so
        # the instance gets its field values as from_db would, every other one its default.
        row = Message.__new__(Message)
        row._state = ModelState()
        state = row.__dict__
        for field in Message._meta.concrete_fields:
            name = field.attname
            state[name] = values[name] if name in values else field.get_default()
    Message.session.field.set_cached_value(row, session)
    return row


def _append_one_postgres(
    session: MemorySession,
    clean: dict[str, Any],
    token_count: int,
    now: dt.datetime,
    *,
    many: bool = False,
    lock: bool,
) -> Message | None:
    """One message in one statement: the counter UPDATE and the INSERT share a round trip.

    The hot path of a chat turn on PostgreSQL. The message is encrypted for its row, so its
    seq is known before the statement: the next after ``session.last_seq`` as this process
    last saw it, and the UPDATE applies only if that is still the session's ``last_seq``.
    None (nothing written) when it is not: another process appended since, and the caller
    takes the general path. A tool result's group is looked up first (the session lock is
    held, so no append can come in between); any other message heads its own group.

    ``lock=True`` (no session lock held yet; not for a tool result): the statement also takes
    the session's advisory lock with ``pg_try_advisory_xact_lock`` before its UPDATE, so
    outside a transaction the whole append (lock, counters, row, commit) is one round trip,
    as serialised as the locked path: the lock is held until the statement's transaction
    ends, and the UPDATE applies only if the lock was free (else None, and the caller waits
    for the lock on the general path). The statement reads nothing but the session row, which
    its UPDATE re-checks at its newest version, so taking the lock inside it is the same as
    taking it before.
    """
    head = None
    if clean["role"] == "tool":
        open_calls = _open_calls(session, [clean])
        _check_results_answer_calls([clean], open_calls, many=many)
        head = open_calls[clean["tool_call_id"]]
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
    locking, locked = "", ""
    if lock:
        locking = "WITH l AS (SELECT pg_try_advisory_xact_lock(%s, %s) AS ok), "
        locked = " AND (SELECT ok FROM l)"
        params[:0] = advisory_key(session.pk)
    sql = (
        f"{locking or 'WITH '}s AS (UPDATE {sessions} SET last_seq = %s, "
        "message_count = message_count + 1, token_count = token_count + %s, updated_at = %s "
        f"WHERE id = %s AND last_seq = %s{locked} "
        "RETURNING last_seq, message_count, token_count) "
        f"INSERT INTO {quote(meta.db_table)} ({columns}) SELECT {select} FROM s "
        "RETURNING id, seq, (SELECT message_count FROM s), (SELECT token_count FROM s)"
    )
    with binding_cursor(prepare=True) as (cursor, mark):
        cursor.execute(sql.replace("%s", mark), params)
        result = cursor.fetchone()
    if result is None:  # stale last_seq, a busy lock (or a deleted session: general path)
        return None
    if lock:
        _lock_taken_in_statement()
    row.pk, row.seq, session.message_count, session.token_count = result
    row.group_seq = head or row.seq
    row._state.adding = False
    row._state.db = connection.alias
    session.last_seq = row.seq
    session.updated_at = now
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
    with session_lock(session):
        if mode == "delete" and legal_hold_find(namespace=session.namespace, session_id=session.pk):
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
        for start in range(0, len(removed_seqs), SEQ_CHUNK):
            chunk = Message.objects.filter(
                session=session, seq__in=removed_seqs[start : start + SEQ_CHUNK]
            )
            if mode == "delete":
                chunk.delete()
                index_delete_locked(session, removed_seqs[start : start + SEQ_CHUNK])
            else:
                chunk.update(archived_at=now)
        if removed:
            bump_counters(
                session,
                seqs=0,
                messages=-len(removed),
                tokens=-removed_tokens,
                now=now,
                history=True,
            )
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

    ``last_seq`` is kept, so seqs are never reused after a clear. Raises ``LegalHoldError``
    (nothing deleted) while the session or its namespace is under legal hold.
    """
    with session_lock(session):
        refuse_if_held(namespace=session.namespace, session_id=session.pk, action="clear")
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


def message_pop(*, session: MemorySession) -> dict[str, Any] | None:
    """Delete the newest live message of ``session`` and return it (None when there is none).

    Under the session lock, in one transaction; the counters drop by the message and its
    tokens, and ``last_seq`` is kept, so its seq is never reused. Inside the caller's own
    ``transaction.atomic()`` the lock stays held until that commits: the OpenAI Agents session
    pops one item off a message holding several and appends the rest back as one step.
    """
    with session_lock(session):
        row = Message.objects.live().filter(session=session).order_by("-seq").first()
        if row is None:
            return None
        refuse_if_held(namespace=session.namespace, session_id=session.pk, action="pop")
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
        events.emit(
            "message.popped",
            namespace=session.namespace,
            session_id=session.pk,
            ids={"seq": row.seq},
        )
    return dict(row.data)


def session_delete(*, session: MemorySession) -> dict[str, int]:
    """Delete ``session`` with its messages and snapshots; facts learned from it stay (their
    source session becomes empty). Returns the rows deleted per table. Raises
    ``LegalHoldError`` (nothing deleted) while the session or its namespace is under legal hold.
    """
    with session_lock(session):
        refuse_if_held(namespace=session.namespace, session_id=session.pk, action="delete")
        index_delete_locked(session)
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
