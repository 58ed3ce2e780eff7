"""FactGeneration: a number per namespace that changes with every change to its recallable facts.

Recall keeps each namespace's fact vectors and BM25 statistics in process memory
(``ttmemory.longterm.vector_cache``) and must know, on every query, whether they are still what
the database holds. The database tells it: triggers on the fact table, created by migration
0019 (``FactGenerationTriggers``), give the namespace's row a new ``generation`` in the same
transaction as any insert, delete or update of a column recall's vector list or statistics
depend on (namespace, kind, embedding, its model and dimension, ``superseded_by``,
``valid_to``, ``expires_at``, id; and ``term_count`` since migration 0020), by whatever code
path: the ORM, bulk operations, the admin, raw SQL, another process. An update of anything else
(metadata, recall counts, the text re-encrypted with the same words) leaves it alone, so
recall's own bookkeeping never invalidates it.

A generation is never reused: PostgreSQL draws it from a sequence started at a random value,
SQLite from ``random() | 1`` (odd, so never 0). A missing row (0 to readers) means "unknown":
nothing is cached for it. The migration writes a row for every namespace that has facts;
``namespace_erase`` deletes the row with the facts; a TRUNCATE of the fact table (PostgreSQL)
deletes every row.

PostgreSQL: statement-level triggers with transition tables, one upsert per namespace a
statement touched (sorted by namespace, so two bulk statements lock rows in one order), not one
per row. They are ``ENABLE ALWAYS``: writes applied by logical replication bump it too. The row
is locked from the write to the commit, so writes of facts to ONE namespace commit one at a time
(writes to different namespaces do not wait for each other). SQLite: row-level triggers (SQLite
has no others); one writer at a time anyway.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

from ttmemory.models.operations import StatementsOperation


class FactGeneration(models.Model):
    """The current generation of one namespace's recallable facts (written by triggers only)."""

    namespace = models.CharField(max_length=255, primary_key=True)
    generation = models.BigIntegerField()

    class Meta:
        verbose_name = "fact generation"

    def __str__(self) -> str:
        return f"generation {self.generation} of {self.namespace}"


#: The fact columns whose change can change what recall keeps per namespace and generation:
#: its vector list (candidates._current and the vector query's own filters) and, from version 2
#: (migration 0020), its BM25 statistics (count and mean ``term_count``, ``recall``). What the
#: UPDATE triggers compare, by the version of the triggers (``FactGenerationTriggers``).
WATCHED_BY_VERSION: dict[int, tuple[str, ...]] = {
    1: (
        "id",
        "namespace",
        "kind",
        "embedding",
        "embedding_model",
        "embedding_dim",
        "superseded_by_id",
        "valid_to",
        "expires_at",
    ),
}
WATCHED_BY_VERSION[2] = (*WATCHED_BY_VERSION[1], "term_count")
VERSION = 2

FACT_TABLE = "ttmemory_fact"
GENERATION_TABLE = "ttmemory_factgeneration"
SEQUENCE = "ttmemory_factgeneration_seq"
FUNCTION = "ttmemory_fact_generation"
TRIGGERS = {
    "insert": "ttm_fact_generation_insert",
    "update": "ttm_fact_generation_update",
    "delete": "ttm_fact_generation_delete",
    "truncate": "ttm_fact_generation_truncate",
}


def _postgresql_upsert(source: str) -> str:
    return (
        f"INSERT INTO {GENERATION_TABLE} (namespace, generation) "
        f"SELECT d.namespace, nextval('{SEQUENCE}') FROM (SELECT DISTINCT namespace "
        f"FROM ({source}) s ORDER BY namespace) d "
        "ON CONFLICT (namespace) DO UPDATE SET generation = excluded.generation;"
    )


def _postgresql_function(columns: tuple[str, ...]) -> str:
    changed = " OR ".join(f"n.{c} IS DISTINCT FROM o.{c}" for c in columns)
    updated = (
        "SELECT coalesce(n.namespace, o.namespace) AS namespace FROM ttm_new n "
        f"FULL JOIN ttm_old o ON o.id = n.id WHERE {changed} "
        "UNION ALL SELECT o.namespace FROM ttm_new n "
        f"JOIN ttm_old o ON o.id = n.id WHERE n.namespace IS DISTINCT FROM o.namespace"
    )
    return f"""
CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {_postgresql_upsert("SELECT namespace FROM ttm_new")}
    ELSIF TG_OP = 'DELETE' THEN
        {_postgresql_upsert("SELECT namespace FROM ttm_old")}
    ELSIF TG_OP = 'UPDATE' THEN
        {_postgresql_upsert(updated)}
    ELSE
        DELETE FROM {GENERATION_TABLE};
    END IF;
    RETURN NULL;
END
$body$"""


def _postgresql_forwards(columns: tuple[str, ...]) -> list[str]:
    run = f"FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()"
    return [
        f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE}",
        # A random start: a database created again (tests, a restore) never repeats the numbers
        # a running process may still hold.
        f"SELECT setval('{SEQUENCE}', 1 + floor(random() * 4e18)::bigint)",
        _postgresql_function(columns),
        f"CREATE TRIGGER {TRIGGERS['insert']} AFTER INSERT ON {FACT_TABLE} "
        f"REFERENCING NEW TABLE AS ttm_new {run}",
        f"CREATE TRIGGER {TRIGGERS['update']} AFTER UPDATE ON {FACT_TABLE} "
        f"REFERENCING OLD TABLE AS ttm_old NEW TABLE AS ttm_new {run}",
        f"CREATE TRIGGER {TRIGGERS['delete']} AFTER DELETE ON {FACT_TABLE} "
        f"REFERENCING OLD TABLE AS ttm_old {run}",
        f"CREATE TRIGGER {TRIGGERS['truncate']} AFTER TRUNCATE ON {FACT_TABLE} {run}",
        *(f"ALTER TABLE {FACT_TABLE} ENABLE ALWAYS TRIGGER {name}" for name in TRIGGERS.values()),
        f"INSERT INTO {GENERATION_TABLE} (namespace, generation) "
        f"SELECT namespace, nextval('{SEQUENCE}') FROM (SELECT DISTINCT namespace "
        f"FROM {FACT_TABLE} ORDER BY namespace) d ON CONFLICT (namespace) DO NOTHING",
    ]


def _postgresql_backwards() -> list[str]:
    return [
        *(f"DROP TRIGGER IF EXISTS {name} ON {FACT_TABLE}" for name in TRIGGERS.values()),
        f"DROP FUNCTION IF EXISTS {FUNCTION}()",
        f"DROP SEQUENCE IF EXISTS {SEQUENCE}",
    ]


def _sqlite_upsert(namespace: str) -> str:
    return (
        f"INSERT INTO {GENERATION_TABLE} (namespace, generation) VALUES ({namespace}, "
        "random() | 1) ON CONFLICT (namespace) DO UPDATE SET generation = excluded.generation;"
    )


def _sqlite_update_trigger(columns: tuple[str, ...]) -> str:
    changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in columns)
    return (
        f"CREATE TRIGGER {TRIGGERS['update']} AFTER UPDATE OF {', '.join(columns)} "
        f"ON {FACT_TABLE} FOR EACH ROW WHEN {changed} "
        f"BEGIN {_sqlite_upsert('OLD.namespace')} {_sqlite_upsert('NEW.namespace')} END"
    )


def _sqlite_forwards(columns: tuple[str, ...]) -> list[str]:
    return [
        f"CREATE TRIGGER {TRIGGERS['insert']} AFTER INSERT ON {FACT_TABLE} FOR EACH ROW "
        f"BEGIN {_sqlite_upsert('NEW.namespace')} END",
        _sqlite_update_trigger(columns),
        f"CREATE TRIGGER {TRIGGERS['delete']} AFTER DELETE ON {FACT_TABLE} FOR EACH ROW "
        f"BEGIN {_sqlite_upsert('OLD.namespace')} END",
        f"INSERT INTO {GENERATION_TABLE} (namespace, generation) "
        f"SELECT namespace, random() | 1 FROM (SELECT DISTINCT namespace FROM {FACT_TABLE}) "
        "WHERE true ON CONFLICT (namespace) DO NOTHING",
    ]


def _sqlite_backwards() -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {name}" for name in TRIGGERS.values()]


def trigger_sql(vendor: str, *, forwards: bool = True, version: int = VERSION) -> list[str]:
    """The statements that create (or drop) the triggers of ``version`` on ``vendor``; [] where
    there are none (recall then never keeps vectors or statistics in memory there)."""
    columns = WATCHED_BY_VERSION[version]
    if vendor == "postgresql":
        return _postgresql_forwards(columns) if forwards else _postgresql_backwards()
    if vendor == "sqlite":
        return _sqlite_forwards(columns) if forwards else _sqlite_backwards()
    return []


def watch_sql(vendor: str, version: int) -> list[str]:
    """The statements that make the installed triggers compare ``version``'s columns on UPDATE
    (the other triggers are the same in every version)."""
    columns = WATCHED_BY_VERSION[version]
    if vendor == "postgresql":
        return [_postgresql_function(columns)]
    if vendor == "sqlite":
        return [f"DROP TRIGGER IF EXISTS {TRIGGERS['update']}", _sqlite_update_trigger(columns)]
    return []


def triggers_installed(connection: Any) -> bool:
    """All of this database's generation triggers exist (and, on PostgreSQL, are enabled)."""
    wanted = [
        name
        for key, name in TRIGGERS.items()
        if key != "truncate" or connection.vendor == "postgresql"
    ]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass(%s) "
                "AND tgname = ANY(%s) AND tgenabled <> 'D'",
                [FACT_TABLE, wanted],
            )
        elif connection.vendor == "sqlite":
            marks = ", ".join(["%s"] * len(wanted))
            cursor.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s "
                f"AND name IN ({marks})",
                [FACT_TABLE, *wanted],
            )
        else:
            return False
        row = cursor.fetchone()
    return bool(row) and int(row[0]) == len(wanted)


class FactGenerationTriggers(StatementsOperation):
    """Creates the triggers that keep ``FactGeneration`` current (PostgreSQL, SQLite; nothing
    elsewhere) and a row for every namespace that has facts. Reversible: drops them. Changes
    no model state.

    ``version``: which columns the UPDATE trigger compares (``WATCHED_BY_VERSION``). With
    ``previous``, the triggers exist already (created at ``previous``) and only that
    comparison changes; reversing restores ``previous``'s.
    """

    def __init__(self, version: int = 1, previous: int | None = None) -> None:
        self.version = version
        self.previous = previous

    def statements(self, connection: BaseDatabaseWrapper, *, forwards: bool) -> list[str]:
        vendor = connection.vendor
        if self.previous is not None:
            return watch_sql(vendor, self.version if forwards else self.previous)
        return trigger_sql(vendor, forwards=forwards, version=self.version)

    def describe(self) -> str:
        if self.previous is not None:
            return f"Makes the fact generation triggers watch the columns of version {self.version}"
        return "Creates the triggers that keep each namespace's fact generation current"

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs: dict[str, Any] = {}
        if self.version != 1:
            kwargs["version"] = self.version
        if self.previous is not None:
            kwargs["previous"] = self.previous
        return (self.__class__.__name__, [], kwargs)
