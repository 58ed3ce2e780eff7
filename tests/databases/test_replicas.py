"""ttmemory.routers.ReplicaRouter against a real streaming standby of the embedded PostgreSQL.

The standby (tests/standby.py) is a ``pg_basebackup -R`` copy of the running server, streaming
on loopback; the ``replica`` alias of the test settings is pointed at it. Replication on this
machine is fast but not instant: a read on the standby right after a write misses it most of
the time (the first test shows it with read-your-writes switched off), which is what the
router must hide from the caller that wrote.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection, connections
from django.db.models import Model
from django.test.utils import CaptureQueriesContext

from tests.conftest import user
from tests.standby import Standby
from ttmemory import memory, routers
from ttmemory.models import MemorySession

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL standby"),
    pytest.mark.django_db(transaction=True, databases=["default", "replica"]),
]

ROUTER = "ttmemory.routers.ReplicaRouter"
ROUNDS = 40
WRITES = 90
READERS = 2
DEADLINE = 120.0  # seconds for a threaded test, which takes a few


class WithoutReadYourWrites(routers.ReplicaRouter):
    """The router with read-your-writes removed: every read forgets the caller's writes."""

    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        routers._wrote_at.set(0.0)
        return super().db_for_read(model, **hints)


@pytest.fixture(scope="module")
def standby(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Standby]:
    """One standby for the module, copied once the test database exists (so it holds it)."""
    server = Standby(connections["default"].settings_dict).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def routed(standby: Standby, settings: Any) -> Iterator[Standby]:
    """The router installed, ``replica`` pointing at the standby (in every thread)."""
    settings.DATABASE_ROUTERS = [ROUTER]
    settings.TTMEMORY = {**settings.TTMEMORY, "READ_REPLICAS": ["replica"]}
    replica = connections.settings["replica"]  # new threads build their connection from it
    saved = dict(replica)
    connections["replica"].close()
    replica.clear()
    replica.update(standby.settings(connections["default"].settings_dict))
    connections["replica"].settings_dict = replica
    routers._down_until.clear()
    try:
        yield standby
    finally:
        connections["replica"].close()
        replica.clear()
        replica.update(saved)
        connections["replica"].settings_dict = connections["default"].settings_dict
        routers._down_until.clear()
        for alias in ("default", "replica"):  # this thread's connections outlive the test
            wrappers = connections[alias].execute_wrappers
            wrappers[:] = [w for w in wrappers if w.__module__ != routers.__name__]


def replica_reads(counter: list[int]) -> Callable[..., Any]:
    """An execute wrapper counting the ttmemory reads a replica connection served."""

    def count(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        result = execute(sql, params, many, context)
        if '"ttmemory_message"' in sql:
            counter.append(1)
        return result

    return count


def read_own_writes(session: MemorySession) -> tuple[int, int]:
    """Append ROUNDS messages, each read back at once: (stale reads, reads on the replica)."""
    stale = on_replica = 0
    for turn in range(ROUNDS):
        memory.message_add(session=session, message=user(f"turn {turn}"))
        with CaptureQueriesContext(connections["replica"]) as replica:
            window = memory.message_recent(session=session, limit=3)
        stale += not window or window[-1]["content"] != f"turn {turn}"
        on_replica += any('"ttmemory_message"' in q["sql"] for q in replica.captured_queries)
    return stale, on_replica


def test_a_caller_reads_its_own_write_at_once_and_the_replica_serves_reads(
    routed: Standby, settings: Any
) -> None:
    session = memory.session_open(namespace="ryw", key="chat")
    stale, on_replica = read_own_writes(session)
    print(f"read-your-writes: {stale}/{ROUNDS} stale, {on_replica}/{ROUNDS} read on the replica")
    assert stale == 0
    assert on_replica > 0, "the replica served no read: the router never used it"

    # With the standby's replay paused it lags for certain: read-your-writes then reads the
    # primary (after its bounded wait), and the same loop without it reads the stale standby.
    with paused_replay():
        stale, on_replica = read_own_writes(memory.session_open(namespace="ryw", key="paused"))
        print(f"replay paused: {stale}/{ROUNDS} stale, {on_replica}/{ROUNDS} on the replica")
        assert stale == 0 and on_replica == 0
        settings.DATABASE_ROUTERS = [f"{__name__}.WithoutReadYourWrites"]
        stale, on_replica = read_own_writes(memory.session_open(namespace="ryw", key="naive"))
        print(f"without it: {stale}/{ROUNDS} stale, {on_replica}/{ROUNDS} read on the replica")
    assert on_replica == ROUNDS
    assert stale == ROUNDS, "the standby served every write although its replay was paused"


@contextmanager
def paused_replay() -> Iterator[None]:
    """The standby stops replaying WAL (it keeps receiving it) until the block ends."""
    with connections["replica"].cursor() as cursor:
        cursor.execute("SELECT pg_wal_replay_pause()")
    try:
        yield
    finally:
        with connections["replica"].cursor() as cursor:
            cursor.execute("SELECT pg_wal_replay_resume()")


def test_a_raw_sql_write_no_router_sees_is_read_back_too(routed: Standby) -> None:
    session = memory.session_open(namespace="ryw", key="raw")
    table = connection.ops.quote_name(MemorySession._meta.db_table)
    for n in range(1, ROUNDS + 1):
        routers._wrote_at.set(0.0)  # only the raw write below can mark this caller
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET message_count = %s WHERE id = %s", [n, session.pk])
        assert MemorySession.objects.get(pk=session.pk).message_count == n


def test_writes_and_transactions_go_to_the_primary(routed: Standby, settings: Any) -> None:
    # The episodic index job that an append queues runs after commit as a caller of its own
    # (its reads may use the replica, read-your-writes applying): kept out of this count.
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_INDEX": False}
    session = memory.session_open(namespace="ryw", key="tx")
    assert session._state.db == "default"
    with CaptureQueriesContext(connections["replica"]) as replica:
        memory.message_add_many(session=session, messages=[user("a"), user("b")])
        memory.snapshot_create(session=session)
        memory.session_trim(session=session, max_tokens=1)
    assert replica.captured_queries == []
    fresh = MemorySession.objects.get(pk=session.pk)  # this caller wrote: read the primary
    assert fresh.last_seq == 2


def run_threads(*targets: Callable[[], None]) -> None:
    threads = [threading.Thread(target=target) for target in targets]
    deadline = time.monotonic() + DEADLINE
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck"


class History:
    """A writer appending and reading back its own window while readers read the session."""

    def __init__(self, session: MemorySession) -> None:
        self.session = session
        self.written = 0
        self.done = threading.Event()
        self.errors: list[str] = []
        self.reads: list[list[str]] = []
        self.replica_reads: list[int] = []
        self.stale_own_reads = 0

    def writer(self, on_write: Callable[[int], None] = lambda n: None) -> None:
        try:
            for n in range(WRITES):
                memory.message_add(session=self.session, message=user(f"m{n}"))
                self.written = n + 1
                if memory.message_recent(session=self.session, limit=1)[0]["content"] != f"m{n}":
                    self.stale_own_reads += 1
                on_write(n + 1)
        except Exception as exc:  # reported by the test
            self.errors.append(f"writer: {exc!r}")
        finally:
            self.done.set()
            connections.close_all()

    def reader(self) -> None:
        try:
            with connections["replica"].execute_wrapper(replica_reads(self.replica_reads)):
                while not self.done.is_set():
                    self.reads.append(
                        [m["content"] for m in memory.message_recent(session=self.session)]
                    )
        except Exception as exc:
            self.errors.append(f"reader: {exc!r}")
        finally:
            connections.close_all()

    def check(self) -> list[str]:
        assert not self.errors, self.errors
        final = [m["content"] for m in memory.message_recent(session=self.session)]
        assert final == [f"m{n}" for n in range(WRITES)]
        assert self.stale_own_reads == 0, "the writer missed its own write"
        assert all(read == final[: len(read)] for read in self.reads), "a read was no prefix"
        return final


def test_readers_on_the_replica_only_see_prefixes_of_the_history(routed: Standby) -> None:
    session = memory.session_open(namespace="ryw", key="prefixes")
    history = History(session)
    run_threads(history.writer, *([history.reader] * READERS))
    history.check()
    behind = sum(1 for read in history.reads if len(read) < WRITES)
    print(f"{len(history.reads)} reads, {len(history.replica_reads)} on the replica")
    assert history.replica_reads, "the replica served no read"
    assert behind > 0, "every read came after the last write: nothing raced"


def test_killing_the_standby_mid_run_falls_back_to_the_primary_without_errors(
    routed: Standby, caplog: pytest.LogCaptureFixture
) -> None:
    """Last in the module: it kills the module's standby."""
    session = memory.session_open(namespace="ryw", key="killed")
    history = History(session)
    killed_at: list[tuple[int, int]] = []

    def kill_a_third_through(written: int) -> None:
        if written == WRITES // 3:
            killed_at.append((written, len(history.replica_reads)))
            routed.kill()

    run_threads(lambda: history.writer(kill_a_third_through), *([history.reader] * READERS))
    history.check()
    assert killed_at, "the standby was never killed"
    _, replica_reads_before = killed_at[0]
    print(
        f"{len(history.reads)} reads; {replica_reads_before} on the replica before the kill, "
        f"{len(history.replica_reads) - replica_reads_before} after it (in flight)"
    )
    assert replica_reads_before > 0, "the replica served no read before it was killed"
    assert routers.replica_is_down("replica")
    assert any("read replica 'replica' failed" in r.getMessage() for r in caplog.records)
    # Reads after the kill came from the primary: the writes made after it are visible.
    assert any(len(read) > WRITES // 3 + 5 for read in history.reads)
