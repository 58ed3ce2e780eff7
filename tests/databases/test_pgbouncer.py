"""ttmemory behind PgBouncer in transaction mode: nothing left on a shared server connection,
and the system check that names the options which break there.

The contract, lock and API concurrency suites run through PgBouncer too, in a pass of their own
(``TTMEMORY_TEST_POOLER=pgbouncer``, see ./dev and tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection, connections

from tests.pgbouncer import PgBouncer, running_pgbouncer
from ttmemory import jobs, memory
from ttmemory.checks import check_pooling, pooling_problems

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="PgBouncer")


@pytest.fixture
def pooled(transactional_db: Any, settings: Any) -> Iterator[PgBouncer]:
    """The default database reached through a PgBouncer with ONE server connection, as
    docs/scaling.md configures it: whatever one transaction leaves there, the next one meets."""
    database = connections.settings["default"]  # every thread's connection is built from it
    saved = dict(database)
    with running_pgbouncer(saved, pool_size=1) as bouncer:
        connections["default"].close()
        database.update(bouncer.settings(saved), DISABLE_SERVER_SIDE_CURSORS=True)
        settings.TTMEMORY = {**settings.TTMEMORY, "POOLED": True}
        try:
            yield bouncer
        finally:
            connections["default"].close()
            database.clear()
            database.update(saved)


def leftovers(bouncer: PgBouncer, dbname: str) -> dict[str, Any]:
    """What the pool's one server connection carries into the next client's transaction."""
    with psycopg.connect(bouncer.dsn(dbname), autocommit=True) as client:
        row = client.execute(
            "SELECT current_setting('hnsw.ef_search', true),"
            " current_setting('hnsw.iterative_scan', true),"
            " current_setting('lock_timeout'), current_setting('synchronous_commit'),"
            " (SELECT count(*) FROM pg_locks"
            "   WHERE locktype = 'advisory' AND pid = pg_backend_pid()),"
            " (SELECT count(*) FROM pg_prepared_statements),"
            " (SELECT count(*) FROM pg_cursors), pg_backend_pid()"
        ).fetchone()
    assert row is not None
    names = ("ef_search", "iterative_scan", "lock_timeout", "synchronous_commit")
    names += ("advisory_locks", "prepared", "cursors", "pid")
    return dict(zip(names, row, strict=True))


@postgres_only
def test_memory_operations_leave_nothing_on_the_pooled_server_connection(
    pooled: PgBouncer, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_EXACT_LIMIT": 0}  # the HNSW search path
    dbname = connections["default"].settings_dict["NAME"]
    before = leftovers(pooled, dbname)

    session = memory.session_open(namespace="pooled", key="chat")
    memory.message_add_many(
        session=session,
        messages=[{"role": "user", "content": f"I live in Lisbon, turn {i}"} for i in range(5)],
    )
    snapshot = memory.snapshot_create(session=session)
    memory.message_add(session=session, message={"role": "assistant", "content": "noted"})
    memory.snapshot_rollback(session=session, snapshot=snapshot)
    memory.fact_remember(namespace="pooled", text="The user lives in Lisbon")
    result = memory.fact_recall(namespace="pooled", query="where does the user live", k=3)
    assert [fact.text for fact, _ in result.hits] == ["The user lives in Lisbon"]
    assert memory.context_window(session=session, max_tokens=200)
    assert list(memory.message_recent(session=session, limit=2))
    assert jobs.drain(30)  # the index jobs, on the background thread, through the same pool

    after = leftovers(pooled, dbname)
    assert after["pid"] == before["pid"], "the pool of one did not reuse its server connection"
    assert pooled.server_connections(dbname) == 1
    assert after["ef_search"] in (None, "40"), after  # pgvector's default: no session SET
    assert after["iterative_scan"] in (None, "off"), after
    assert (after["lock_timeout"], after["synchronous_commit"]) == ("0", "on"), after
    assert (after["advisory_locks"], after["prepared"], after["cursors"]) == (0, 0, 0), after


@postgres_only
def test_prepared_statements_break_behind_the_pooler_and_django_default_does_not(
    db: Any,
) -> None:
    """Why W061 exists: with psycopg's statement preparation on (the embedded default's
    prepare_threshold), clients sharing a pool meet each other's prepared statements."""
    dbname = connections["default"].settings_dict["NAME"]
    with running_pgbouncer(connections["default"].settings_dict, pool_size=1) as bouncer:
        clients = [
            psycopg.connect(bouncer.dsn(dbname), autocommit=True, prepare_threshold=0)
            for _ in range(2)
        ]
        with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
            for n in range(5):
                for client in clients:
                    client.execute("SELECT %s::int", [n]).fetchone()
        for client in clients:
            client.close()
        clients = [
            psycopg.connect(bouncer.dsn(dbname), autocommit=True, prepare_threshold=None)
            for _ in range(2)
        ]
        for n in range(20):
            for client in clients:
                assert client.execute("SELECT %s::int", [n]).fetchone() == (n,)
        for client in clients:
            client.close()


EMBEDDED = {
    "ENGINE": "django.db.backends.postgresql",
    "NAME": "ttmemory",
    "OPTIONS": {"server_side_binding": True, "prepare_threshold": 5},
}
RECIPE = {
    "ENGINE": "django.db.backends.postgresql",
    "NAME": "ttmemory",
    "HOST": "127.0.0.1",
    "PORT": "6432",
    "DISABLE_SERVER_SIDE_CURSORS": True,
}


def test_pooled_settings_warn_about_prepared_statements_and_server_side_cursors() -> None:
    found = pooling_problems({"default": EMBEDDED})
    assert [w.id for w in found] == ["ttmemory.W061", "ttmemory.W062"]
    assert "prepare_threshold" in found[0].msg and "'default'" in found[0].msg
    assert "DISABLE_SERVER_SIDE_CURSORS" in (found[1].hint or "")
    assert pooling_problems({"default": RECIPE}) == []
    # A test mirror and another database engine are not connections of their own.
    mirror = {**EMBEDDED, "TEST": {"MIRROR": "default"}}
    sqlite = {"ENGINE": "django.db.backends.sqlite3", "NAME": "x"}
    assert pooling_problems({"default": RECIPE, "replica": mirror, "other": sqlite}) == []


@pytest.mark.filterwarnings("ignore:Overriding setting DATABASES")
def test_the_check_speaks_only_when_pooled_is_set(settings: Any) -> None:
    settings.DATABASES = {**settings.DATABASES, "default": EMBEDDED}
    settings.TTMEMORY = {**settings.TTMEMORY, "POOLED": False}
    assert check_pooling() == []
    settings.TTMEMORY = {**settings.TTMEMORY, "POOLED": True}
    assert [w.id for w in check_pooling()] == ["ttmemory.W061", "ttmemory.W062"]
    settings.TTMEMORY = {**settings.TTMEMORY, "POOLED": "yes"}
    assert check_pooling() == []  # a bad value is E027's, reported by check_options
