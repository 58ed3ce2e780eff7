"""Every session lock holds until the OUTERMOST transaction ends, and past its lease.

The REST API and the admin wrap a rollback and its audit entry in one transaction around the
service, so the lock must outlive the service's own block. Each test contends from another
thread (its own connection), as another writer would.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection, connections, transaction

from tests.backends.redis_servers import RedisServer, redis_server
from ttmemory import memory
from ttmemory.backends.locks import (
    DatabaseLeaseLock,
    LocalLock,
    PostgresAdvisoryLock,
    RedisLock,
    SessionLock,
)
from ttmemory.exceptions import LockTimeout

# Bound on every wait for another thread: a broken lock fails the test instead of hanging it.
WAIT = 20.0
BACKENDS = ["local", "lease", "advisory", "redis"]


class Boom(Exception):
    pass


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis-scope")) as server:
        yield server


@pytest.fixture
def make_lock(request: pytest.FixtureRequest) -> Iterator[Callable[..., SessionLock]]:
    made: list[SessionLock] = []

    def make(name: str, **options: Any) -> SessionLock:
        lock: SessionLock
        if name == "local":
            lock = LocalLock()
        elif name == "lease":
            lock = DatabaseLeaseLock()
        elif name == "advisory":
            if connection.vendor != "postgresql":
                pytest.skip("PostgreSQL advisory locks")
            lock = PostgresAdvisoryLock()
        else:
            server = request.getfixturevalue("redis")
            client = server.client()
            client.flushall()
            client.close()
            lock = RedisLock(url=server.url, **options)
        made.append(lock)
        return lock

    yield make
    for lock in made:
        lock.close()


def contend(lock: SessionLock, session_id: int, timeout: float) -> BaseException | None:
    """Take the lock from another thread; return what that raised (None: it got the lock)."""
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            with lock.locked(session_id, timeout=timeout):
                pass
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(WAIT)
    assert outcome, "the other writer neither got the lock nor gave up within its timeout"
    return outcome[0]


def wait_past(seconds: float) -> None:
    """Let ``seconds`` of wall-clock time go by (a lease to outlive; nothing is timed)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.05)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lock_inside_a_callers_transaction_is_held_until_that_commits(
    transactional_db: Any, make_lock: Callable[..., SessionLock], backend: str
) -> None:
    lock = make_lock(backend)
    session = memory.session_open(namespace="scope", key="outer")

    with transaction.atomic():  # as the API's rollback + audit entry
        with lock.locked(session.pk, timeout=1):
            pass
        # The service's block is over; its writes are not committed yet.
        while_open = contend(lock, session.pk, 0.3)

    assert isinstance(while_open, LockTimeout)
    assert contend(lock, session.pk, 5) is None  # committed: released


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_outer_rollback_releases_the_lock(
    transactional_db: Any, make_lock: Callable[..., SessionLock], backend: str
) -> None:
    lock = make_lock(backend)
    session = memory.session_open(namespace="scope", key="rollback")

    with pytest.raises(Boom), transaction.atomic():
        with lock.locked(session.pk, timeout=1):
            pass
        raise Boom

    assert contend(lock, session.pk, 5) is None
    if isinstance(lock, RedisLock):
        client = lock._get_client()
        assert client.get(lock.key(session.pk)) is None  # nothing left to expire by lease


@pytest.mark.parametrize("backend", BACKENDS)
def test_taking_the_lock_again_in_the_same_transaction_does_not_wait_for_itself(
    transactional_db: Any, make_lock: Callable[..., SessionLock], backend: str
) -> None:
    lock = make_lock(backend)
    session = memory.session_open(namespace="scope", key="again")

    with transaction.atomic():
        with lock.locked(session.pk, timeout=0.2), lock.locked(session.pk, timeout=0.2):
            pass
        with lock.locked(session.pk, timeout=0.2):
            lock.hold(session.pk, timeout=0.2)
        assert isinstance(contend(lock, session.pk, 0.2), LockTimeout)

    assert contend(lock, session.pk, 5) is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_hold_locks_sessions_until_the_transaction_ends(
    transactional_db: Any, make_lock: Callable[..., SessionLock], backend: str
) -> None:
    lock = make_lock(backend)
    sessions = [memory.session_open(namespace="scope", key=f"many-{i}") for i in range(3)]

    with transaction.atomic():
        for session in sessions:
            lock.hold(session.pk, timeout=1)
        blocked = [contend(lock, session.pk, 0.2) for session in sessions]

    assert all(isinstance(outcome, LockTimeout) for outcome in blocked)
    assert [contend(lock, session.pk, 5) for session in sessions] == [None, None, None]


def test_hold_outside_a_transaction_is_refused(
    transactional_db: Any, make_lock: Callable[..., SessionLock]
) -> None:
    lock = make_lock("local")
    with pytest.raises(transaction.TransactionManagementError, match="atomic"):
        lock.hold(1, timeout=1)


# -- leases: an operation longer than LOCK_LEASE keeps its lock --------------------------------


def test_a_redis_lock_held_by_an_outer_transaction_is_renewed_past_its_lease(
    transactional_db: Any, make_lock: Callable[..., SessionLock]
) -> None:
    lock = make_lock("redis", lease=0.3)
    assert isinstance(lock, RedisLock)
    session = memory.session_open(namespace="lease", key="redis")
    client = lock._get_client()

    with transaction.atomic():
        with lock.locked(session.pk, timeout=1):
            token = client.get(lock.key(session.pk))
        wait_past(1.0)  # more than three leases after the inner block ended
        blocked = contend(lock, session.pk, 0.3)
        assert client.get(lock.key(session.pk)) == token
    assert isinstance(blocked, LockTimeout)
    assert lock.stats.extra["renewals"] >= 1
    assert client.get(lock.key(session.pk)) is None


def test_a_database_lock_held_past_lock_lease_keeps_other_writers_out(
    transactional_db: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "LOCK_LEASE": 0.3}
    lock = DatabaseLeaseLock()
    session = memory.session_open(namespace="lease", key="database")

    with lock.locked(session.pk, timeout=1):
        wait_past(1.0)  # a big rollback, longer than three leases
        blocked = contend(lock, session.pk, 0.3)

    assert isinstance(blocked, LockTimeout)
    assert contend(lock, session.pk, 5) is None


def test_a_long_operations_lease_is_renewed_while_held(
    transactional_db: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "LOCK_LEASE": 0.3}
    lock = DatabaseLeaseLock()
    session = memory.session_open(namespace="lease", key="long")

    try:
        with lock.lease(session.pk, timeout=1):
            wait_past(1.0)
            blocked = contend(lock, session.pk, 0.3)
    finally:
        lock.close()

    assert isinstance(blocked, LockTimeout)
    assert lock.stats.extra.get("renewals", 0) >= 1
    assert contend(lock, session.pk, 5) is None


def test_a_lease_inside_a_transaction_is_refused(transactional_db: Any) -> None:
    lock = DatabaseLeaseLock()
    with (
        pytest.raises(transaction.TransactionManagementError, match="several transactions"),
        transaction.atomic(),
        lock.lease(1, timeout=1),
    ):
        pass  # pragma: no cover - never entered


# -- PostgreSQL: a server-set lock_timeout is left alone ---------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL lock_timeout")
def test_waiting_for_the_advisory_lock_leaves_the_servers_lock_timeout(
    transactional_db: Any,
) -> None:
    lock = PostgresAdvisoryLock()
    session = memory.session_open(namespace="lock-timeout", key="chat")
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with lock.locked(session.pk, timeout=1):
            held.set()
            release.wait(WAIT)
        connections.close_all()

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    assert held.wait(WAIT)
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '7s'")  # as postgresql.conf or ALTER ROLE would
    try:
        # The holder lets go once this connection is seen waiting, so the wait path runs.
        waiter = threading.Thread(target=release_when_waiting, args=(release,), daemon=True)
        waiter.start()
        with lock.locked(session.pk, timeout=10), connection.cursor() as cursor:
            cursor.execute("SHOW lock_timeout")
            inside = cursor.fetchone()
        waiter.join(WAIT)
        thread.join(WAIT)
        assert inside == ("7s",)
    finally:
        release.set()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")


def release_when_waiting(release: threading.Event) -> None:
    """Set ``release`` once some backend waits for an advisory lock (bounded)."""
    end = time.monotonic() + WAIT
    try:
        while time.monotonic() < end and not release.is_set():
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                )
                row = cursor.fetchone()
            if row and row[0]:
                break
            time.sleep(0.01)
    finally:
        release.set()
        connections.close_all()
