"""Session locks on the database: across OS processes, dead holders, timeouts, serial outcomes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from ttmemory import memory
from ttmemory.backends.locks import (
    DatabaseLeaseLock,
    LocalLock,
    PostgresAdvisoryLock,
    get_lock,
    session_lock,
)
from ttmemory.exceptions import LockTimeout
from ttmemory.models import MemorySession, Message, SessionLease, Snapshot

ROOT = Path(__file__).resolve().parents[2]
postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL advisory locks"
)


def worker(mode: str, session: MemorySession, arg: str) -> subprocess.Popen[str]:
    from django.conf import settings

    overrides = {k: v for k, v in settings.TTMEMORY.items() if k != "ENCRYPTION_KEYS"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.locks.worker",
            mode,
            connection.settings_dict["NAME"],
            str(session.pk),
            arg,
        ],
        cwd=ROOT,
        env={**os.environ, "TTM_OVERRIDES": json.dumps(overrides)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out


def test_the_default_lock_fits_the_database(db: Any) -> None:
    expected = PostgresAdvisoryLock if connection.vendor == "postgresql" else DatabaseLeaseLock
    assert type(get_lock()) is expected


def test_appends_and_rollbacks_racing_in_two_processes_end_in_a_serial_state(
    transactional_db: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MAX_SNAPSHOTS_PER_SESSION": 1000}
    session = memory.session_open(namespace="race", key="chat")
    memory.message_add_many(
        session=session, messages=[{"role": "user", "content": f"seed{i}"} for i in range(5)]
    )

    appender = worker("append", session, "60")
    roller = worker("rollback", session, "15")
    appended = dict(line.split(" ", 1) for line in finish(appender).splitlines())
    finish(roller)

    rows = list(
        Message.objects.live().filter(session=session).order_by("seq").values_list("seq", "data")
    )
    seqs = [seq for seq, _ in rows]
    assert len(seqs) == len(set(seqs))
    # Every seq names one message forever: restored messages are the ones first written there.
    for seq, data in rows:
        if str(seq) in appended:
            assert data["content"] == appended[str(seq)]
    # Serial outcome: the state is the last rollback's target plus every append made after it.
    last_safety = Snapshot.objects.filter(session=session, kind="safety").order_by("-pk").first()
    assert last_safety is not None
    target_pk = int(last_safety.label.rsplit(" ", 1)[1])
    target = Snapshot.objects.get(pk=target_pk)
    expected = [m["seq"] for m in target.payload["messages"]] + sorted(
        int(seq) for seq in appended if int(seq) > last_safety.upto_seq
    )
    assert seqs == expected
    stored = MemorySession.objects.get(pk=session.pk)
    tokens = sum(
        Message.objects.live().filter(session=session).values_list("token_count", flat=True)
    )
    assert (stored.message_count, stored.token_count) == (len(rows), tokens)
    assert len(appended) == 60


@postgres_only
def test_terminating_the_holders_connection_frees_the_lock_at_once(transactional_db: Any) -> None:
    session = memory.session_open(namespace="dead", key="chat")
    holder = worker("hold", session, "60")
    assert holder.stdout is not None
    backend_pid = int(holder.stdout.readline())

    with pytest.raises(LockTimeout, match=f"session {session.pk}"), session_lock(session):
        pass
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [backend_pid])

    memory.message_add(session=session, message={"role": "user", "content": "after"})
    holder.kill()
    holder.communicate(timeout=30)
    assert Message.objects.filter(session=session).count() == 1


@postgres_only
def test_a_lock_timeout_is_clear_and_leaves_the_transaction_usable(
    transactional_db: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "LOCK_TIMEOUT": 0.3}
    session = memory.session_open(namespace="timeout", key="chat")
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with session_lock(session):
            held.set()
            release.wait(30)
        connections.close_all()

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait(30)
    try:
        with pytest.raises(LockTimeout, match=r"0\.3s"):
            memory.message_add(session=session, message={"role": "user", "content": "blocked"})
        assert get_lock().stats.timeouts == 1
    finally:
        release.set()
        thread.join()
    memory.message_add(session=session, message={"role": "user", "content": "later"})
    assert [m["content"] for m in memory.message_recent(session=session)] == ["later"]


def contend(lock: DatabaseLeaseLock, session_id: int, timeout: float) -> BaseException | None:
    """Try the lock from another thread (its own connection); return what it raised."""
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

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join(30)
    return outcome[0]


def test_an_expired_lease_is_taken_over_and_a_live_one_is_not(transactional_db: Any) -> None:
    lock = DatabaseLeaseLock()
    session = memory.session_open(namespace="lease", key="chat")
    now = timezone.now()
    SessionLease.objects.create(
        session_id=session.pk,
        token="dead-holder",
        acquired_at=now,
        expires_at=now - timedelta(seconds=1),
    )

    with lock.locked(session.pk, timeout=1):
        assert not SessionLease.objects.filter(token="dead-holder").exists()
        assert isinstance(contend(lock, session.pk, 0.2), LockTimeout)
    assert lock.stats.extra["takeovers"] == 1
    assert not SessionLease.objects.filter(session_id=session.pk).exists()
    assert contend(lock, session.pk, 1) is None


def test_a_long_operations_lease_blocks_writers_until_it_ends(transactional_db: Any) -> None:
    lock = DatabaseLeaseLock()
    session = memory.session_open(namespace="lease-long", key="chat")

    with lock.lease(session.pk, timeout=1):
        failure = contend(lock, session.pk, 0.2)
        assert isinstance(failure, LockTimeout)
        assert "database lease" in str(failure)
    assert contend(lock, session.pk, 1) is None


def test_a_lease_held_by_another_process_blocks_until_released(
    transactional_db: Any, settings: Any
) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "LOCK": {"BACKEND": "ttmemory.backends.locks.DatabaseLeaseLock"},
        "LOCK_TIMEOUT": 0.3,
    }
    session = memory.session_open(namespace="lease-proc", key="chat")
    holder = worker("hold", session, "2")
    assert holder.stdout is not None
    holder.stdout.readline()

    with pytest.raises(LockTimeout):
        memory.message_add(session=session, message={"role": "user", "content": "blocked"})
    finish(holder)
    memory.message_add(session=session, message={"role": "user", "content": "after"})
    assert Message.objects.filter(session=session).count() == 1


def test_the_in_process_lock_serialises_threads(transactional_db: Any) -> None:
    lock = LocalLock()
    counter = {"value": 0, "inside": 0, "max_inside": 0}

    def work() -> None:
        for _ in range(20):
            with lock.locked(1, timeout=5):
                counter["inside"] += 1
                counter["max_inside"] = max(counter["max_inside"], counter["inside"])
                value = counter["value"]
                counter["value"] = value + 1
                counter["inside"] -= 1
        connections.close_all()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (counter["value"], counter["max_inside"]) == (80, 1)
