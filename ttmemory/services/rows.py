"""Row helpers shared by the session and snapshot services: message INSERTs and session counters.

Called only inside a service's transaction and session lock.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from typing import Any

from django.db import connection
from django.utils import timezone

from ttmemory.backends.locks.database import advisory_key
from ttmemory.models import MemorySession, Message
from ttmemory.models.binding import binding_cursor
from ttmemory.services.episodes import index_behind_locked

# Rows per statement when a statement names many seqs (SQLite limits bound parameters).
SEQ_CHUNK = 900

INSERT_FIELDS = (
    "session",
    "namespace",
    "seq",
    "role",
    "data",
    "token_count",
    "tool_call_id",
    "tool_call_ids",
    "group_seq",
    "created_at",
)
# A message's own state (what a snapshot keeps and restores): everything but its session.
MESSAGE_STATE_FIELDS = INSERT_FIELDS[2:]
# Rows per INSERT statement: 10 parameters each, well under SQLite's 32,766.
INSERT_CHUNK = 500


def insert_fields() -> list[Any]:
    """The concrete fields an INSERT of a message writes, in ``INSERT_FIELDS`` order."""
    return [Message._meta.get_field(name) for name in INSERT_FIELDS]


def insert_messages(rows: list[Message], *, fresh: bool = False) -> None:
    """INSERT ... RETURNING id for ``rows``, setting their pks.

    One multi-row statement built from the fields' own ``pre_save`` and ``get_db_prep_save``
    (so encryption, bound to each row's namespace, session and seq, and JSON encoding are the
    fields'), without ``bulk_create``'s per-call machinery. The appends' rows on databases
    other than PostgreSQL (``append_rows``), and copies of stored messages (a restore, a
    fork). Every row's ``seq`` must be set. ``fresh``: new seqs (an append), which the
    ``message_index`` job reaches by itself; else (a restore, a fork) the session's index mark
    moves back before them (``services.episodes.index_behind_locked``).
    """
    stored = rows
    meta = Message._meta
    fields = insert_fields()
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    placeholder = "(" + ", ".join(["%s"] * len(fields)) + ")"
    table = quote(meta.db_table)
    if connection.vendor == "postgresql" and rows:
        _insert_unnest(rows, fields, f"INSERT INTO {table} ({columns})")
        rows = []  # done
    for start in range(0, len(rows), INSERT_CHUNK):
        chunk = rows[start : start + INSERT_CHUNK]
        params: list[Any] = []
        for row in chunk:
            params.extend(f.get_db_prep_save(f.pre_save(row, True), connection) for f in fields)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES "
                f"{', '.join([placeholder] * len(chunk))} RETURNING id, seq",
                params,
            )
            ids = dict((seq, pk) for pk, seq in cursor.fetchall())
        for row in chunk:
            row.pk = ids[row.seq]
            row._state.adding = False
            row._state.db = connection.alias
    if stored and not fresh:
        index_behind_locked(stored[0].session, [row.seq for row in stored])


# PostgreSQL array type of each column of INSERT_FIELDS, for the unnest INSERT.
_ARRAY_TYPES = {
    "session": "bigint[]",
    "namespace": "text[]",
    "seq": "bigint[]",
    "role": "text[]",
    "data": "bytea[]",
    "token_count": "integer[]",
    "tool_call_id": "text[]",
    "tool_call_ids": "text[]",
    "group_seq": "bigint[]",
    "created_at": "timestamptz[]",
}


def _insert_unnest(rows: list[Message], fields: list[Any], insert: str) -> None:
    """One ``INSERT ... SELECT FROM unnest(<one array per column>)`` for any number of rows.

    Ten parameters whatever the batch: a VALUES list of 100 rows has 1,000 placeholders, which
    cost psycopg more to split and bind than the server to run. Only the encrypted message
    goes through its field (AES-GCM bound to the row's namespace, session and seq); the other
    columns are plain values.
    """
    with binding_cursor() as (cursor, mark):
        select, source, arrays = unnest_source(rows, fields, mark)
        cursor.execute(f"{insert} SELECT {select} FROM {source} RETURNING id, seq", arrays)
        ids = dict((seq, pk) for pk, seq in cursor.fetchall())
    for row in rows:
        row.pk = ids[row.seq]
        row._state.adding = False
        row._state.db = connection.alias


def unnest_source(rows: list[Message], fields: list[Any], mark: str) -> tuple[str, str, list[Any]]:
    """``(select list, FROM item, parameters)`` reading ``rows`` from one array per column.

    The FROM item is ``unnest(...) AS u(c0, c1, ...)``; the message is sealed here for its
    row (the rows' seqs must be set). One row is read from one ``VALUES`` row of plain
    parameters instead: binding ten one-element arrays cost psycopg more than the row.
    """
    data = Message._meta.get_field("data")
    sealed = [data.get_db_prep_save(data.pre_save(row, True), connection) for row in rows]
    arrays: list[list[Any]] = []
    for f in fields:
        if f.name == "data":
            arrays.append(sealed)
        elif f.name == "tool_call_ids":
            arrays.append([json.dumps(row.tool_call_ids) for row in rows])
        else:
            arrays.append([getattr(row, f.attname) for row in rows])
    select, source = _unnest_shape(tuple(f.name for f in fields), len(rows) == 1, mark)
    if len(rows) == 1:
        return select, source, [a[0] for a in arrays]
    return select, source, arrays


@functools.cache
def _unnest_shape(names: tuple[str, ...], single: bool, mark: str) -> tuple[str, str]:
    """``unnest_source``'s select list and FROM item: text that depends on the columns alone
    (built once, not on every append)."""
    select = ", ".join(
        f"u.c{i}::jsonb" if n == "tool_call_ids" else f"u.c{i}" for i, n in enumerate(names)
    )
    aliases = ", ".join(f"c{i}" for i in range(len(names)))
    if single:
        values = ", ".join(f"{mark}::{_ARRAY_TYPES[n][:-2]}" for n in names)
        return select, f"(VALUES ({values})) AS u({aliases})"
    unnest = ", ".join(f"{mark}::{_ARRAY_TYPES[n]}" for n in names)
    return select, f"unnest({unnest}) AS u({aliases})"


def append_rows(
    session: MemorySession,
    rows: list[Message],
    *,
    tokens: int,
    now: dt.datetime,
    lock_held: bool,
) -> tuple[int, int] | None:
    """Store an append's ``rows`` (sealed here for their seqs, the next after
    ``session.last_seq``) and move the session's counters; the new ``(message_count,
    token_count)``, or None when nothing was written.

    The dialect's part of ``services.sessions._append``. PostgreSQL: one statement (counter
    UPDATE and an INSERT from one array per column, ``unnest_source``). Unless ``lock_held``,
    that statement also tries the session's advisory lock (``pg_try_advisory_xact_lock``) and
    moves the counters only if the lock was free. Elsewhere (``lock_held`` only): the UPDATE
    and ``insert_messages``. Either way the counters move, and the rows are written, only if
    ``last_seq`` is still ``session.last_seq``: None (nothing written) otherwise, or when the
    session row is gone. The statement reads nothing but the session row, which its UPDATE
    re-checks at its newest version, so taking the lock inside it is the same as taking it
    before.
    """
    quote = connection.ops.quote_name
    sessions = quote(MemorySession._meta.db_table)
    count = len(rows)
    first = session.last_seq + 1
    if connection.vendor != "postgresql":
        assert lock_held, "only PostgreSQL takes the session lock inside the append"
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {sessions} SET last_seq = %s, message_count = message_count + %s, "
                "token_count = token_count + %s, updated_at = %s WHERE id = %s AND last_seq = %s "
                "RETURNING message_count, token_count",
                [first + count - 1, count, tokens, now, session.pk, first - 1],
            )
            counters = cursor.fetchone()
        if counters is None:
            return None
        insert_messages(rows, fresh=True)
        return int(counters[0]), int(counters[1])
    fields = insert_fields()
    with binding_cursor(prepare=True) as (cursor, mark):
        select, source, arrays = unnest_source(rows, fields, mark)
        cursor.execute(
            _append_statement(select, source, lock_held=lock_held, mark=mark),
            [
                *(() if lock_held else advisory_key(session.pk)),
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
    if len(result) != count:  # a busy lock or a moved last_seq (or a deleted session)
        return None
    ids = {seq: pk for pk, seq, _, _ in result}
    for row in rows:
        row.pk = ids[row.seq]
        row._state.adding = False
        row._state.db = connection.alias
    return int(result[0][2]), int(result[0][3])


@functools.cache
def _append_statement(select: str, source: str, *, lock_held: bool, mark: str) -> str:
    """The PostgreSQL append statement of ``append_rows`` for one shape of its FROM item
    (one row or many, the placeholder): its text depends on that alone, so it is built once
    rather than on every append."""
    quote = connection.ops.quote_name
    sessions = quote(MemorySession._meta.db_table)
    columns = ", ".join(quote(f.column) for f in insert_fields())
    locking, locked = "", ""
    if not lock_held:
        locking = f"l AS (SELECT pg_try_advisory_xact_lock({mark}, {mark}) AS ok), "
        locked = " AND (SELECT ok FROM l)"
    return (
        f"WITH {locking}"
        f"s AS (UPDATE {sessions} SET last_seq = {mark}, "
        f"message_count = message_count + {mark}, token_count = token_count + {mark}, "
        f"updated_at = {mark} WHERE id = {mark} AND last_seq = {mark}{locked} "
        "RETURNING message_count, token_count) "
        f"INSERT INTO {quote(Message._meta.db_table)} ({columns}) SELECT {select} "
        f"FROM s, {source} "
        "RETURNING id, seq, (SELECT message_count FROM s), (SELECT token_count FROM s)"
    )


def bump_counters(
    session: MemorySession,
    *,
    seqs: int,
    messages: int,
    tokens: int,
    now: dt.datetime,
    history: bool = False,
) -> int:
    """Reserve ``seqs`` new seqs, add to the live counters; return the new ``last_seq``.

    A single UPDATE ... RETURNING: the row lock it takes (PostgreSQL) or the write lock
    (SQLite) serialises concurrent appends, so seqs are unique and gap-free, and a rollback
    of the surrounding transaction returns the seqs. ``history=True`` (a trim) also moves
    ``history_version`` on, voiding a summary being computed from the old archive.
    """
    table = connection.ops.quote_name(MemorySession._meta.db_table)
    version = ", history_version = history_version + 1" if history else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET last_seq = last_seq + %s, message_count = message_count + %s, "
            f"token_count = token_count + %s, updated_at = %s{version} WHERE id = %s "
            f"RETURNING last_seq, message_count, token_count",
            [seqs, messages, tokens, now, session.pk],
        )
        row = cursor.fetchone()
    if row is None:
        raise MemorySession.DoesNotExist(f"session {session.pk} no longer exists")
    session.last_seq, session.message_count, session.token_count = row
    session.updated_at = now
    return int(row[0])


def touch_session(session: MemorySession) -> None:
    """Refresh the counters from the row, writing it first so SQLite takes its write lock now."""
    bump_counters(session, seqs=0, messages=0, tokens=0, now=timezone.now())
