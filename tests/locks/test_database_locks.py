"""Session locks on the database: across OS processes, dead holders, timeouts, serial outcomes."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from tests.races import Door
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


def worker(
    mode: str, session: MemorySession, arg: str, rendezvous: Path | None = None
) -> subprocess.Popen[str]:
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
            *([str(rendezvous)] if rendezvous else []),
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


ROUNDS = 15


def test_appends_and_rollbacks_racing_in_two_processes_end_in_a_serial_state(
    transactional_db: Any, settings: Any, tmp_path: Path
) -> None:
    """Each rollback pauses inside its critical section until the other process asks for the
    lock, so every round races; the history must still be one some serial order produces."""
    settings.TTMEMORY = {**settings.TTMEMORY, "MAX_SNAPSHOTS_PER_SESSION": 1000}
    session = memory.session_open(namespace="race", key="chat")
    memory.message_add_many(
        session=session, messages=[{"role": "user", "content": f"seed{i}"} for i in range(5)]
    )

    appender = worker("append", session, str(ROUNDS), tmp_path)
    roller = worker("rollback", session, str(ROUNDS), tmp_path)
    rollbacks = [json.loads(line) for line in finish(roller).splitlines()]
    appends = [json.loads(line) for line in finish(appender).splitlines()]
    assert (len(rollbacks), len(appends)) == (ROUNDS, ROUNDS * 4)

    # The race happened: in each round the appender asked for the lock while the rollback
    # held it, and got it only after the rollback's last moment inside the critical section
    # (a time taken under the lock, so a real lock orders them in every round).
    waited = sum(
        1
        for rollback, append in zip(rollbacks, appends[3::4], strict=True)
        if rollback["inside"] < append["asked"] < rollback["last_inside"] < append["got"]
    )
    safeties = [Snapshot.objects.get(pk=r["safety"]) for r in rollbacks]
    marks = [s.upto_seq for s in safeties]
    appended = {a["seq"]: a["content"] for a in appends}
    between = sum(
        1 for low, high in itertools.pairwise(marks) if any(low < seq <= high for seq in appended)
    )
    print(f"overlap: {waited}/{ROUNDS} appends waited on a rollback holding the lock; "
          f"{between}/{ROUNDS - 1} gaps between rollbacks had appends")  # fmt: skip

    # Every rollback started from a serial state: the previous rollback's target plus every
    # append that landed after it, with counters that match.
    def target_of(safety: Snapshot) -> Snapshot:
        return Snapshot.objects.get(pk=int(safety.label.rsplit(" ", 1)[1]))

    def seqs_of(snapshot: Snapshot) -> list[int]:
        return [m["seq"] for m in snapshot.payload["messages"]]

    for before, after in itertools.pairwise(safeties):
        landed = sorted(seq for seq in appended if before.upto_seq < seq <= after.upto_seq)
        assert seqs_of(after) == seqs_of(target_of(before)) + landed
        messages = after.payload["messages"]
        assert after.payload["message_count"] == len(messages)
        assert after.payload["token_count"] == sum(m["token_count"] for m in messages)

    rows = list(
        Message.objects.live().filter(session=session).order_by("seq").values_list("seq", "data")
    )
    seqs = [seq for seq, _ in rows]
    assert len(seqs) == len(set(seqs))
    # Every seq names one message forever: restored messages are the ones first written there.
    for seq, data in rows:
        if seq in appended:
            assert data["content"] == appended[seq]
    # Serial outcome: the state is the last rollback's target plus every append made after it.
    last = safeties[-1]
    assert seqs == seqs_of(target_of(last)) + sorted(s for s in appended if s > last.upto_seq)
    stored = MemorySession.objects.get(pk=session.pk)
    tokens = sum(
        Message.objects.live().filter(session=session).values_list("token_count", flat=True)
    )
    assert (stored.message_count, stored.token_count) == (len(rows), tokens)
    # Checked last, so a mutant shows the state it leaves: every round raced.
    assert (waited, between > 0) == (ROUNDS, True)


REWIND_ROUNDS = 8


def test_rewinds_racing_appends_in_another_process_lose_no_append_made_after_them(
    transactional_db: Any, settings: Any, tmp_path: Path
) -> None:
    """Each rewind pauses inside its critical section until the other process asks for the
    lock, so every round races; an append that waited for a rewind lands after it and stays,
    and the history is always one some serial order of rewinds and appends produces."""
    settings.TTMEMORY = {**settings.TTMEMORY, "MAX_SNAPSHOTS_PER_SESSION": 1000}
    session = memory.session_open(namespace="race", key="rewind")
    memory.message_add_many(
        session=session, messages=[{"role": "user", "content": f"seed{i}"} for i in range(5)]
    )

    appender = worker("append", session, str(REWIND_ROUNDS), tmp_path)
    rewinder = worker("rewind", session, str(REWIND_ROUNDS), tmp_path)
    rewinds = [json.loads(line) for line in finish(rewinder).splitlines()]
    appends = [json.loads(line) for line in finish(appender).splitlines()]
    assert (len(rewinds), len(appends)) == (REWIND_ROUNDS, REWIND_ROUNDS * 4)

    waited = [
        append
        for rewind, append in zip(rewinds, appends[3::4], strict=True)
        if rewind["inside"] < append["asked"] < rewind["last_inside"] < append["got"]
    ]
    print(f"overlap: {len(waited)}/{REWIND_ROUNDS} appends waited on a rewind holding the lock")
    safeties = [Snapshot.objects.get(pk=r["safety"]) for r in rewinds]
    appended = {a["seq"]: a["content"] for a in appends}

    def seqs_of(snapshot: Snapshot) -> list[int]:
        return [m["seq"] for m in snapshot.payload["messages"]]

    # Each rewind started from the previous rewind's cut plus every append that landed since.
    cuts = [
        [seq for seq in seqs_of(safety) if seq <= rewind["to_seq"]]
        for safety, rewind in zip(safeties, rewinds, strict=True)
    ]
    for i, (before, after) in enumerate(itertools.pairwise(safeties)):
        landed = sorted(seq for seq in appended if before.upto_seq < seq <= after.upto_seq)
        assert seqs_of(after) == cuts[i] + landed
    rows = list(
        Message.objects.live().filter(session=session).order_by("seq").values_list("seq", "data")
    )
    seqs = [seq for seq, _ in rows]
    last = safeties[-1]
    assert seqs == cuts[-1] + sorted(s for s in appended if s > last.upto_seq)
    for seq, data in rows:
        if seq in appended:
            assert data["content"] == appended[seq]
    # No append committed after a rewind was lost: the one that waited for rewind R is in the
    # state rewind R+1 started from (or in the final state).
    for round_no, append in enumerate(appends[3::4]):
        later = seqs_of(safeties[round_no + 1]) if round_no + 1 < REWIND_ROUNDS else seqs
        assert append["seq"] > safeties[round_no].upto_seq
        assert append["seq"] in later
    stored = MemorySession.objects.get(pk=session.pk)
    tokens = sum(
        Message.objects.live().filter(session=session).values_list("token_count", flat=True)
    )
    assert (stored.message_count, stored.token_count) == (len(rows), tokens)
    assert len(waited) == REWIND_ROUNDS  # checked last, so a mutant shows the state it leaves


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
    with held_elsewhere(session):
        with pytest.raises(LockTimeout, match=r"0\.3s"):
            memory.message_add(session=session, message={"role": "user", "content": "blocked"})
        assert get_lock().stats.timeouts == 1
    memory.message_add(session=session, message={"role": "user", "content": "later"})
    assert [m["content"] for m in memory.message_recent(session=session)] == ["later"]


@postgres_only
@pytest.mark.parametrize("outcome", ["waits", "times out"])
def test_a_contended_wait_in_the_callers_transaction_puts_its_lock_timeout_back(
    transactional_db: Any, settings: Any, outcome: str
) -> None:
    # The wait sets lock_timeout for itself and puts the caller's back in the statement that
    # takes the lock (or, on a timeout, by the rollback of its savepoint): either way the
    # caller's transaction goes on with its own setting.
    from django.db import transaction

    settings.TTMEMORY = {**settings.TTMEMORY, "LOCK_TIMEOUT": 0.3 if outcome == "times out" else 30}
    session = memory.session_open(namespace="timeout", key=f"setting-{outcome}")
    # Warm (the tokenizer loads on first use), so the append below reaches the lock while it is
    # held (shown to fail with the setting not put back after the wait).
    memory.message_add(session=session, message={"role": "user", "content": "first"})
    with held_elsewhere(session) as release:
        timer = threading.Timer(1.0, release.set)
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '7s'")
                if outcome == "times out":
                    with pytest.raises(LockTimeout):
                        memory.message_add(
                            session=session, message={"role": "user", "content": "x"}
                        )
                else:
                    timer.start()
                    memory.message_add(session=session, message={"role": "user", "content": "x"})
                with connection.cursor() as cursor:
                    cursor.execute("SELECT current_setting('lock_timeout')")
                    assert cursor.fetchone() == ("7s",)
        finally:
            timer.cancel()
    stored = [m["content"] for m in memory.message_recent(session=session)]
    assert stored == (["first"] if outcome == "times out" else ["first", "x"])


@contextmanager
def held_elsewhere(session: MemorySession) -> Iterator[threading.Event]:
    """Hold ``session``'s lock in another thread (its own connection) for the block; yields the
    event that releases it (set on leaving, if the block did not)."""
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
        yield release
    finally:
        release.set()
        thread.join()


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
    door = Door()
    rounds = 40
    start = threading.Barrier(2)
    state = {"value": 0, "inside": 0, "most_inside": 0}

    def work() -> None:
        try:
            for round_no in range(rounds):
                start.wait(30)
                door.arrive()
                with lock.locked(1, timeout=30):
                    state["inside"] += 1
                    state["most_inside"] = max(state["most_inside"], state["inside"])
                    value = state["value"]
                    # The other thread of this round has asked for the lock before we write.
                    door.wait_for_more_than(2 * round_no + 1)
                    state["value"] = value + 1
                    state["inside"] -= 1
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    print(f"overlap: {door.overlaps} critical sections with the other thread at the lock")
    assert (state["value"], state["most_inside"]) == (2 * rounds, 1)
    assert door.overlaps == 2 * rounds
