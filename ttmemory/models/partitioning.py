"""Messages in a table partitioned by hash of session (PostgreSQL, opt-in): the DDL.

With ``TTMEMORY["PARTITIONED_HISTORY"] = {"by": "hash", "partitions": N}``, ``ttmemory_message``
is a declaratively partitioned table (``PARTITION BY HASH (session_id)``) with N partitions.
Django's model does not change, and neither does any statement: every read and write of a
chat turn names its session, so PostgreSQL prunes it to the one partition holding that session,
whose indexes stay the size of a fraction of the history.

PostgreSQL requires every unique constraint of a partitioned table to include the partition
key. ``(session_id, seq)``, the constraint that makes seqs unique, already does; the primary key
becomes ``(id, session_id)``. ``id`` stays unique (one sequence hands out every id) and Django
keeps using it alone: a lookup by ``id`` probes each partition's primary-key index (it leads
with ``id``). Nothing references a message by ``id`` (the episodic index, snapshots and fact
sources use ``(session, seq)``), so no foreign key has to change; a foreign key from another
table to ``Message`` could not be kept (it would need ``(id, session_id)``), and the conversion
refuses to run while one exists, naming it.

The conversion, by the migration (a fresh or small table) or ``manage.py ttmemory_partition``
(any size, with progress), runs in one transaction holding an EXCLUSIVE lock: reads go on,
writes wait until it commits; on any error nothing has changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.apps import apps
from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ttmemory.conf import app_settings
from ttmemory.models import holds
from ttmemory.models.operations import DatabaseOperation, Editor, State

logger = logging.getLogger(__name__)

PARTITION_KEY = "session_id"
# The migration converts a table of at most this many messages (a few seconds); a larger one
# is left to `manage.py ttmemory_partition`, which shows progress (check ttmemory.W060).
MIGRATE_MAX_ROWS = 100_000
# Messages copied per statement by the conversion.
COPY_BATCH = 50_000


class PartitioningError(Exception):
    """The message table cannot be converted as asked (nothing was changed)."""


def message_table() -> str:
    return str(apps.get_model("ttmemory", "Message")._meta.db_table)


def configured_partitions() -> int | None:
    """Partitions asked for by ``PARTITIONED_HISTORY`` (None: a plain table)."""
    config = app_settings.PARTITIONED_HISTORY
    return None if config is None else int(config["partitions"])


def message_partitions(connection: BaseDatabaseWrapper) -> int | None:
    """Hash partitions of the message table: 0 for a plain table, None when it does not exist
    (or the database is not PostgreSQL)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.partstrat, (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = c.oid) "
            "FROM pg_class c LEFT JOIN pg_partitioned_table p ON p.partrelid = c.oid "
            "WHERE c.oid = to_regclass(%s)",
            [connection.ops.quote_name(message_table())],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return int(row[1]) if row[0] is not None else 0


def partition_message_table(
    connection: BaseDatabaseWrapper,
    *,
    partitions: int,
    batch_size: int = COPY_BATCH,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Rebuild the message table partitioned by hash of session into ``partitions`` tables.

    Works from a plain table or from one partitioned differently. In one transaction: lock
    (EXCLUSIVE: readers go on, writers wait), create the partitioned table and its partitions,
    copy the rows by ranges of ``batch_size`` ids (``on_start(total)``, then ``on_batch(rows)``
    after each), check the count, drop the old table, and give the new one the old one's
    name, sequence, constraints and indexes (the primary key gains ``session_id``).
    Returns the rows copied. Raises PartitioningError (nothing changed) on a database other
    than PostgreSQL, a missing table, a foreign key pointing at it, or a unique constraint
    without ``session_id``.
    """
    if connection.vendor != "postgresql":
        raise PartitioningError("partitioned history needs PostgreSQL")
    table = message_table()
    quote = connection.ops.quote_name
    old = quote(table)
    new_name = f"{table}_partitioned"
    new = quote(new_name)
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if message_partitions(connection) is None:
            raise PartitioningError(f"{table} does not exist: run migrate first")
        # Deferred foreign-key checks of rows written earlier in this transaction would make
        # PostgreSQL refuse to drop the table ("pending trigger events"): run them now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"LOCK TABLE {old} IN EXCLUSIVE MODE")
        cursor.execute(
            "SELECT conname, conrelid::regclass::text FROM pg_constraint "
            "WHERE confrelid = to_regclass(%s) AND contype = 'f'",
            [old],
        )
        referencing = cursor.fetchall()
        if referencing:
            names = ", ".join(f"{name} on {source}" for name, source in referencing)
            raise PartitioningError(
                f"foreign keys point at {table} ({names}): a partitioned table can only be "
                f"referenced by (id, {PARTITION_KEY}); remove them first"
            )
        constraints = _constraints(cursor, old)
        indexes = _plain_indexes(cursor, old)
        cursor.execute(
            f"CREATE TABLE {new} (LIKE {old} INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
            f"INCLUDING STORAGE) PARTITION BY HASH ({quote(PARTITION_KEY)})"
        )
        for remainder in range(partitions):
            part = quote(f"{table}_h{partitions}_{remainder}")
            cursor.execute(
                f"CREATE TABLE {part} PARTITION OF {new} "
                f"FOR VALUES WITH (MODULUS {partitions}, REMAINDER {remainder})"
            )
        # ids keep coming from one sequence (a partitioned identity column needs PostgreSQL
        # 17; a sequence default works from 11), starting after every id handed out so far.
        sequence = quote(f"{new_name}_id_seq")
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [old])
        (old_sequence,) = cursor.fetchone() or (None,)
        issued = 0
        if old_sequence:
            cursor.execute(
                f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {old_sequence}"
            )
            issued = int(cursor.fetchone()[0])
        cursor.execute(f"SELECT count(*), min(id), max(id) FROM {old}")
        total, low, high = cursor.fetchone()
        issued = max(issued, high or 0)
        cursor.execute(f"ALTER TABLE {new} ALTER COLUMN id DROP DEFAULT")
        cursor.execute(f"CREATE SEQUENCE {sequence} AS bigint OWNED BY {new}.id")
        if issued:
            cursor.execute("SELECT setval(%s, %s, true)", [sequence, issued])
        # Inlined, not bound: DDL takes no parameters under server-side binding.
        cursor.execute(
            f"ALTER TABLE {new} ALTER COLUMN id SET DEFAULT nextval('{sequence}'::regclass)"
        )
        columns = ", ".join(quote(name) for name in _columns(cursor, new))
        if on_start is not None:
            on_start(int(total))
        copied = 0
        if total:
            for start in range(int(low), int(high) + 1, batch_size):
                cursor.execute(
                    f"INSERT INTO {new} ({columns}) SELECT {columns} FROM {old} "
                    "WHERE id >= %s AND id < %s",
                    [start, start + batch_size],
                )
                copied += cursor.rowcount
                if on_batch is not None:
                    on_batch(cursor.rowcount)
        if copied != total:
            raise PartitioningError(f"copied {copied} of {total} messages")
        # Triggers go with the old table: the legal-hold ones (0023) are created again below.
        cursor.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname LIKE %s",
            [old, "ttm_hold_%"],
        )
        guarded = int(cursor.fetchone()[0]) > 0
        cursor.execute(f"DROP TABLE {old}")
        cursor.execute(f"ALTER TABLE {new} RENAME TO {old}")
        cursor.execute(f"ALTER SEQUENCE {sequence} RENAME TO {quote(f'{table}_id_seq')}")
        for name, definition in constraints:
            cursor.execute(f"ALTER TABLE {old} ADD CONSTRAINT {quote(name)} {definition}")
        for definition in indexes:
            cursor.execute(definition)
        if guarded:
            parts = [quote(f"{table}_h{partitions}_{r}") for r in range(partitions)]
            for statement in holds.message_table_sql(old, parts):
                cursor.execute(statement)
        cursor.execute(f"ANALYZE {old}")
    return copied


def _constraints(cursor: Any, table: str) -> list[tuple[str, str]]:
    """``(name, definition)`` of the table's primary key, unique and foreign-key constraints,
    the primary key widened to include the partition key; a unique constraint without it is
    refused (it could not be kept)."""
    cursor.execute(
        "SELECT c.conname, c.contype, pg_get_constraintdef(c.oid), "
        "ARRAY(SELECT a.attname::text FROM unnest(c.conkey) k JOIN pg_attribute a "
        "ON a.attrelid = c.conrelid AND a.attnum = k) "
        "FROM pg_constraint c WHERE c.conrelid = to_regclass(%s) AND c.contype IN ('p', 'u', 'f') "
        "ORDER BY c.contype DESC, c.conname",
        [table],
    )
    found = []
    for name, kind, definition, columns in cursor.fetchall():
        if kind == "p" and PARTITION_KEY not in columns:
            definition = f"PRIMARY KEY ({', '.join([*columns, PARTITION_KEY])})"
        elif kind == "u" and PARTITION_KEY not in columns:
            raise PartitioningError(
                f"unique constraint {name} ({', '.join(columns)}) does not include "
                f"{PARTITION_KEY}, which PostgreSQL requires on a partitioned table"
            )
        found.append((name, definition))
    return found


def _plain_indexes(cursor: Any, table: str) -> list[str]:
    """``CREATE INDEX`` statements of the table's indexes that back no constraint."""
    cursor.execute(
        "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i WHERE i.indrelid = to_regclass(%s) "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) "
        "ORDER BY i.indexrelid",
        [table],
    )
    # An index of a partitioned table is defined ON ONLY it; recreated, it covers the partitions.
    return [str(row[0]).replace(" ON ONLY ", " ON ", 1) for row in cursor.fetchall()]


def _columns(cursor: Any, table: str) -> list[str]:
    cursor.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 "
        "AND NOT attisdropped ORDER BY attnum",
        [table],
    )
    return [str(row[0]) for row in cursor.fetchall()]


class PartitionHistoryIfConfigured(DatabaseOperation):
    """Partition the message table when ``PARTITIONED_HISTORY`` asks for it (read at migrate
    time); nothing on other databases or when it is unset.

    A table of more than ``MIGRATE_MAX_ROWS`` messages is left as it is, with a warning: its
    conversion holds writes for a while and belongs to ``manage.py ttmemory_partition``, run in
    a quiet hour. Changes no model state; reversing it leaves the table as it is (the model
    works on either layout).
    """

    def database_forwards(
        self, app_label: str, schema_editor: Editor, from_state: State, to_state: State
    ) -> None:
        connection = schema_editor.connection
        wanted = configured_partitions()
        if connection.vendor != "postgresql" or wanted is None:
            return
        if message_partitions(connection) == wanted:
            return
        table = connection.ops.quote_name(message_table())
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT %s) t", [MIGRATE_MAX_ROWS + 1]
            )
            rows = int(cursor.fetchone()[0])
        if rows > MIGRATE_MAX_ROWS:
            logger.warning(
                "PARTITIONED_HISTORY asks for %s partitions but %s holds more than %s "
                "messages: left as it is; run manage.py ttmemory_partition (check ttmemory.W060)",
                wanted,
                message_table(),
                MIGRATE_MAX_ROWS,
            )
            return
        started = time.perf_counter()
        copied = partition_message_table(connection, partitions=wanted)
        logger.info(
            "%s partitioned by hash of session into %s tables (%s messages, %.1f s)",
            message_table(),
            wanted,
            copied,
            time.perf_counter() - started,
        )

    def describe(self) -> str:
        return "Partitions the message table by session when PARTITIONED_HISTORY asks for it"
