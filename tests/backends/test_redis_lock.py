"""RedisLock against real redis-server processes: exclusion, leases, Redis Cluster, outages."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, connections

from tests.backends.redis_servers import (
    RedisClusterServers,
    RedisServer,
    free_port,
    redis_cluster,
    redis_server,
    require_redis_server,
)
from tests.conftest import user
from tests.races import Door
from ttmemory import memory
from ttmemory.backends.locks import RedisLock, get_lock, reset_lock
from ttmemory.backends.redis_client import session_key
from ttmemory.exceptions import LockTimeout
from ttmemory.models import Message

REPO = Path(__file__).resolve().parents[2]
LOGGER = "ttmemory.backends.locks.redis"
# Bound on every "wait until" loop: a broken build fails instead of hanging.
WAIT = 15.0

ConfigureLock = Callable[..., RedisLock]


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    with redis_cluster(tmp_path_factory.mktemp("redis-cluster")) as servers:
        yield servers


@pytest.fixture
def redis_url(standalone: RedisServer) -> str:
    """The shared standalone server, emptied for this test."""
    client = standalone.client()
    client.flushall()
    client.close()
    return standalone.url


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test's own, which it may stop and restart."""
    with redis_server(tmp_path / "own-redis") as server:
        yield server


@pytest.fixture
def use_redis(settings: Any) -> Iterator[ConfigureLock]:
    """Configure ``TTMEMORY["LOCK"]`` as a RedisLock with the given options; return the lock."""

    def configure(url: str, **options: Any) -> RedisLock:
        settings.TTMEMORY = {
            **settings.TTMEMORY,
            # The episodic index job takes the session lock too (after the first append and
            # every MESSAGE_INDEX_EVERY); these tests count the appends' own acquisitions.
            "MESSAGE_SEARCH_INDEX": False,
            "LOCK": {
                "BACKEND": "ttmemory.backends.locks.RedisLock",
                "OPTIONS": {"url": url, **options},
            },
        }
        lock = get_lock()
        assert isinstance(lock, RedisLock)
        return lock

    yield configure
    reset_lock()


def run_threads(target: Callable[[int], None], count: int) -> list[BaseException]:
    """Run ``target(n)`` in ``count`` threads, each closing its own connection; return errors."""
    errors: list[BaseException] = []

    def wrapper(n: int) -> None:
        try:
            target(n)
        except BaseException as exc:  # collected and asserted in the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=wrapper, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive(), "a writer thread hung"
    return errors


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def log_lines(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and text in r.getMessage()]


def race_in_rounds(rounds: int, body: Callable[[int], None]) -> list[BaseException]:
    """Two threads run ``body(round_no)`` for each round, starting each round together."""
    start = threading.Barrier(2)

    def target(n: int) -> None:
        for round_no in range(rounds):
            start.wait(WAIT)
            body(round_no)

    return run_threads(target, 2)


def test_one_holder_at_a_time(
    transactional_db: Any, redis_url: str, use_redis: ConfigureLock, standalone: RedisServer
) -> None:
    """A read-modify-write of a Redis counter that only the lock protects, with a switch point
    inside: the holder waits until the other thread has asked for the lock before writing."""
    lock = use_redis(redis_url)
    client = standalone.client()
    door = Door()
    rounds = 20
    state = {"inside": 0, "most_inside": 0}

    def body(round_no: int) -> None:
        door.arrive()
        with get_lock().locked(4242, timeout=10):
            state["inside"] += 1
            state["most_inside"] = max(state["most_inside"], state["inside"])
            value = int(client.get("counter") or 0)
            door.wait_for_more_than(2 * round_no + 1)
            client.set("counter", value + 1)
            state["inside"] -= 1

    assert race_in_rounds(rounds, body) == []
    print(f"overlap: {door.overlaps} critical sections with the other thread at the lock")
    assert (int(client.get("counter") or 0), state["most_inside"]) == (2 * rounds, 1)
    assert door.overlaps == 2 * rounds
    assert (lock.stats.acquired, lock.stats.fallbacks) == (2 * rounds, 0)
    client.close()


def test_concurrent_appends_through_redis_lose_nothing(
    transactional_db: Any, redis_url: str, use_redis: ConfigureLock, standalone: RedisServer
) -> None:
    """Each append's critical section also takes a ticket from a Redis counter (a
    read-modify-write only the lock protects) and waits for the other writer to ask for the
    lock: the k-th holder gets ticket k and appends seq k."""
    lock = use_redis(redis_url)
    session = memory.session_open(namespace="user-redis", key="chat")
    client = standalone.client()
    door = Door()
    rounds = 20
    mine = threading.local()
    real_locked = lock.locked

    @contextmanager
    def locked_with_ticket(session_id: int, *, timeout: float) -> Iterator[None]:
        door.arrive()
        with real_locked(session_id, timeout=timeout):
            ticket = int(client.get("ticket") or 0) + 1
            door.wait_for_more_than(2 * mine.round_no + 1)
            client.set("ticket", ticket)
            mine.ticket = ticket
            yield

    lock.locked = locked_with_ticket  # type: ignore[method-assign]
    appended: list[tuple[int, int]] = []

    def body(round_no: int) -> None:
        mine.round_no = round_no
        row = memory.message_add(session=session, message=user(f"r{round_no}"))
        appended.append((mine.ticket, row.seq))

    assert race_in_rounds(rounds, body) == []
    print(f"overlap: {door.overlaps} appends with the other writer at the lock")
    assert sorted(appended) == [(n, n) for n in range(1, 2 * rounds + 1)]
    seqs = sorted(Message.objects.filter(session=session).values_list("seq", flat=True))
    assert seqs == list(range(1, 2 * rounds + 1))
    assert door.overlaps == 2 * rounds
    assert (lock.stats.acquired, lock.stats.fallbacks) == (2 * rounds, 0)
    client.close()


CHILD = """
import sys, time
import django
django.setup()
from ttmemory.backends.locks import RedisLock
lock = RedisLock(url=sys.argv[1], lease=float(sys.argv[2]))
with lock.locked(int(sys.argv[3]), timeout=5):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_killed_holder_blocks_only_until_its_lease_expires(
    transactional_db: Any,
    redis_url: str,
    use_redis: ConfigureLock,
    standalone: RedisServer,
    tmp_path: Path,
) -> None:
    lock = use_redis(redis_url)
    session_id = 777
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'child.sqlite3'}",
        "PYTHONPATH": str(REPO),
    }
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, redis_url, "2", str(session_id)],
        stdout=subprocess.PIPE,
        cwd=REPO,
        env=env,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "held"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()

    client = standalone.client()
    assert client.pttl(lock.key(session_id)) > 0  # the dead holder's key is still there
    with pytest.raises(LockTimeout), lock.locked(session_id, timeout=0.05):
        pass  # pragma: no cover - never entered

    with lock.locked(session_id, timeout=10):
        assert client.get(lock.key(session_id)) is not None
    assert client.get(lock.key(session_id)) is None
    client.close()


def in_another_thread(
    enter: Callable[[], AbstractContextManager[None]],
) -> BaseException | None:
    """Enter the lock context ``enter()`` gives from a thread of its own; return what it raised."""
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            with enter():
                pass
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join(WAIT)
    assert outcome, "the other thread did not finish"
    return outcome[0]


def test_a_wrong_token_cannot_release(
    redis_url: str, use_redis: ConfigureLock, standalone: RedisServer
) -> None:
    lock = use_redis(redis_url)
    client = standalone.client()
    key = lock.key(12)
    client.set(key, "token-a", px=10_000)

    assert lock._release_token(key, "token-b") is False
    assert client.get(key) == b"token-a"
    assert lock._release_token(key, "token-a") is True
    assert client.get(key) is None
    client.close()


def test_a_live_holder_keeps_its_lock_past_the_lease(
    transactional_db: Any, redis_url: str, use_redis: ConfigureLock, standalone: RedisServer
) -> None:
    lock = use_redis(redis_url, lease=0.5)
    client = standalone.client()
    key = lock.key(55)

    with lock.locked(55, timeout=1):
        token = client.get(key)
        for _ in range(8):  # about two seconds, four leases
            # Another thread: this one's transaction holds the lock and may take it again.
            assert isinstance(in_another_thread(lambda: lock.locked(55, timeout=0.2)), LockTimeout)
            time.sleep(0.05)
        assert client.get(key) == token
        assert lock.stats.extra["renewals"] >= 1

    assert client.get(key) is None
    client.close()


def test_a_lock_lost_while_held_is_reported(
    db: Any,
    redis_url: str,
    use_redis: ConfigureLock,
    standalone: RedisServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    lock = use_redis(redis_url, lease=0.3)
    client = standalone.client()

    with lock.locked(56, timeout=1):
        client.delete(lock.key(56))  # as an eviction or a manual DEL would
        wait_until(lambda: bool(log_lines(caplog, "expired or was taken")), "the renewer's warning")
    client.close()

    assert "session 56" in log_lines(caplog, "expired or was taken")[0]


def test_the_timeout_message_names_the_session_and_the_wait(
    transactional_db: Any, redis_url: str, use_redis: ConfigureLock
) -> None:
    lock = use_redis(redis_url)

    with lock.locked(31, timeout=1):
        failure = in_another_thread(lambda: lock.locked(31, timeout=0.1))

    assert isinstance(failure, LockTimeout)
    message = str(failure)
    assert "session 31" in message
    assert "0.1s" in message
    assert "Redis lock" in message
    assert lock.stats.timeouts == 1


def test_redis_cluster_locks_many_sessions_across_nodes(
    transactional_db: Any, cluster: RedisClusterServers, use_redis: ConfigureLock
) -> None:
    lock = use_redis(cluster.url, cluster=True)
    client = cluster.client()
    nodes = set()

    for session_id in range(1, 201):
        key = lock.key(session_id)
        with lock.locked(session_id, timeout=5):
            assert client.get(key) is not None
        assert client.get(key) is None
        nodes.add(client.get_node_from_key(key).name)
        # Every key of a session lives in one slot, so multi-key scripts work on a cluster.
        keys = [key, session_key(session_id, "cache"), session_key(session_id, "events")]
        slots = {client.execute_command("CLUSTER KEYSLOT", k) for k in keys}
        assert len(slots) == 1
        assert client.eval("return #KEYS", len(keys), *keys) == 3

    client.close()
    assert len(nodes) == 3
    assert (lock.stats.acquired, lock.stats.fallbacks, lock.stats.extra["redis_errors"]) == (
        200,
        0,
        0,
    )


def test_writes_go_on_when_redis_dies(
    transactional_db: Any,
    own_server: RedisServer,
    use_redis: ConfigureLock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    lock = use_redis(own_server.url, breaker_seconds=30)
    session = memory.session_open(namespace="user-outage", key="chat")
    done = threading.Event()
    written: list[str] = []

    def writer(n: int) -> None:
        i = 0
        while not done.is_set():
            text = f"w{n}-{i}"
            memory.message_add(session=session, message=user(text))
            written.append(text)
            i += 1

    errors: list[BaseException] = []
    threads = threading.Thread(target=lambda: errors.extend(run_threads(writer, 4)))
    threads.start()
    try:
        wait_until(lambda: lock.stats.acquired >= 10, "writes through Redis")
        own_server.stop()
        wait_until(lambda: lock.stats.fallbacks >= 10, "writes through the fallback lock")
    finally:
        done.set()
        threads.join(timeout=60)

    assert errors == []
    seqs = sorted(Message.objects.filter(session=session).values_list("seq", flat=True))
    assert seqs == list(range(1, len(written) + 1))
    stored = {m["content"] for m in memory.message_recent(session=session)}
    assert stored == set(written)
    assert len(log_lines(caplog, "Redis unreachable")) == 1
    # Only writers already talking to Redis when it died saw an error; the rest never tried.
    assert lock.stats.extra["redis_errors"] <= 4

    attempts, fallbacks = lock.stats.extra["redis_attempts"], lock.stats.fallbacks
    for i in range(10):
        memory.message_add(session=session, message=user(f"after-{i}"))
    assert lock.stats.extra["redis_attempts"] == attempts  # the breaker is open
    assert lock.stats.fallbacks == fallbacks + 10
    assert len(log_lines(caplog, "Redis unreachable")) == 1


def test_locks_return_to_redis_when_it_is_back(
    transactional_db: Any,
    own_server: RedisServer,
    use_redis: ConfigureLock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    lock = use_redis(own_server.url, breaker_seconds=0.2)
    session = memory.session_open(namespace="user-recovery", key="chat")
    key = lock.key(session.pk)

    memory.message_add(session=session, message=user("before"))
    own_server.stop()
    memory.message_add(session=session, message=user("during"))
    assert lock.stats.fallbacks == 1
    own_server.start()

    client = own_server.client()
    in_redis = False

    def through_redis() -> bool:
        nonlocal in_redis
        with lock.locked(session.pk, timeout=5):
            in_redis = client.get(key) is not None
        return in_redis

    wait_until(through_redis, "a lock held in Redis again")
    memory.message_add(session=session, message=user("after"))
    client.close()

    assert [m["content"] for m in memory.message_recent(session=session)] == [
        "before",
        "during",
        "after",
    ]
    assert len(log_lines(caplog, "Redis unreachable")) == 1
    assert len(log_lines(caplog, "Redis is back")) == 1


@pytest.mark.parametrize("cluster_mode", [False, True], ids=["standalone", "cluster"])
def test_an_unreachable_redis_falls_back_from_the_first_write(
    db: Any, use_redis: ConfigureLock, caplog: pytest.LogCaptureFixture, cluster_mode: bool
) -> None:
    require_redis_server()
    caplog.set_level(logging.WARNING, logger=LOGGER)
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    lock = use_redis(url, cluster=cluster_mode)
    session = memory.session_open(namespace="user-noredis", key="chat")

    for i in range(5):
        memory.message_add(session=session, message=user(f"m{i}"))

    assert len(memory.message_recent(session=session)) == 5
    assert lock.stats.fallbacks == 5
    assert lock.stats.extra["redis_attempts"] == 1
    [warning] = log_lines(caplog, "Redis unreachable")
    assert url in warning
    assert type(lock.fallback).__name__ in warning


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({}, "url"),
        ({"url": "http://127.0.0.1:6379"}, "redis://"),
        ({"url": "redis://127.0.0.1:1/0", "key_prefix": "app{x}"}, "braces"),
        ({"url": "redis://127.0.0.1:1/0", "lease": 0}, "lease"),
        ({"url": "redis://127.0.0.1:1/0", "renew": "yes"}, "renew"),
        ({"url": "redis://127.0.0.1:1/0", "colour": "red"}, "colour"),
        (
            {
                "url": "redis://127.0.0.1:1/0",
                "fallback": {"BACKEND": "ttmemory.backends.locks.RedisLock"},
            },
            "fallback",
        ),
        (
            {"url": "redis://127.0.0.1:1/0", "fallback": {"BACKEND": "no.such.Lock"}},
            "no.such.Lock",
        ),
    ],
)
def test_bad_options_are_reported_with_the_setting_named(
    settings: Any, options: dict[str, Any], complaint: str
) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "LOCK": {"BACKEND": "ttmemory.backends.locks.RedisLock", "OPTIONS": options},
    }
    try:
        with pytest.raises(ImproperlyConfigured, match=complaint) as caught:
            get_lock()
    finally:
        reset_lock()
    assert "TTMEMORY['LOCK']" in str(caught.value)


def test_the_password_never_reaches_the_log(
    db: Any, use_redis: ConfigureLock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    lock = use_redis(f"redis://app:s3cret@127.0.0.1:{free_port()}/0")

    with lock.locked(1, timeout=1):
        pass

    [warning] = log_lines(caplog, "Redis unreachable")
    assert "s3cret" not in warning
    assert "app:***@127.0.0.1" in warning
