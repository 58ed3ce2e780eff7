"""A stateful property test: random append / trim / snapshot / rollback / undo / clear /
summarise steps, each from one of two database connections, against a plain Python model.

After every step the live history (seq and content, read through the other connection),
the counters and ``message_recent`` must equal the model's. Each connection keeps its own
``MemorySession`` object, as two processes would, so nothing may trust stale fields. One step
runs two writers at once: a rollback on one connection pauses inside its critical section
until an append on the other has asked for the lock, so they provably contend; the append
must land after the rollback, whole (the lock makes them serial).
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from django.db import connection
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.races import Door
from ttmemory import memory
from ttmemory.backends.locks import get_lock
from ttmemory.models import MemorySession, Message, Snapshot
from ttmemory.services import snapshots as snapshot_services
from ttmemory.services.learning import session_summarise

pytestmark = pytest.mark.contract

T = TypeVar("T")
KEEP_TOKENS = 40
names = itertools.count()


class Connection:
    """One thread with its own database connection, running one call at a time."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1)

    def run(self, call: Callable[[], T]) -> T:
        return self.pool.submit(call).result(timeout=60)

    def close(self) -> None:
        self.pool.submit(lambda: connection.close()).result(timeout=60)
        self.pool.shutdown()


@dataclass
class Model:
    """What the history must be: live (seq, content, tokens), the highest seq ever given."""

    live: list[tuple[int, str, int]] = field(default_factory=list)
    last_seq: int = 0

    def keep_newest(self, max_tokens: int) -> None:
        """Plain user messages are one group each: newest first while they fit, at least one."""
        kept: list[tuple[int, str, int]] = []
        used = 0
        for row in reversed(self.live):
            if kept and used + row[2] > max_tokens:
                break
            if not kept and row[2] > max_tokens:
                kept.append(row)
                break
            kept.append(row)
            used += row[2]
        self.live = list(reversed(kept))


@dataclass
class Snap:
    pk: int
    live: list[tuple[int, str, int]]


CONNECTIONS: list[Connection] = []


@dataclass
class Race:
    """The step in which two writers contend: who rolls back, who appends, and what happened
    inside the critical section (monotonic ns, taken under the lock)."""

    roller: int = -1
    appender: int = -1
    door: Door = field(default_factory=Door)
    inside_end: int = 0
    got: int = 0


RACE = Race()
#: Per racing step: the append asked for the lock while the rollback held it, and got it after.
CONTENDED: list[bool] = []


class SessionMachine(RuleBasedStateMachine):
    snapshots = Bundle("snapshots")

    def __init__(self) -> None:
        super().__init__()
        self.model = Model()
        key = f"chat-{next(names)}"
        # Each connection opens the session itself: its own object, as in another process.
        self.sessions = [
            c.run(lambda: memory.session_open(namespace="prop", key=key)) for c in CONNECTIONS
        ]
        self.safeties: list[Snap] = []

    def on(self, conn: int, call: Callable[[MemorySession], T]) -> T:
        session = self.sessions[conn]
        return CONNECTIONS[conn].run(lambda: call(session))

    @rule(conn=st.integers(0, 1), sizes=st.lists(st.integers(0, 20), min_size=1, max_size=4))
    def append(self, conn: int, sizes: list[int]) -> None:
        texts = [
            f"m{self.model.last_seq + i + 1} " + "word " * size for i, size in enumerate(sizes)
        ]
        messages = [{"role": "user", "content": text} for text in texts]
        if len(messages) == 1:
            rows = [self.on(conn, lambda s: memory.message_add(session=s, message=messages[0]))]
        else:
            rows = self.on(conn, lambda s: memory.message_add_many(session=s, messages=messages))
        for row, text in zip(rows, texts, strict=True):
            self.model.last_seq += 1
            assert row.seq == self.model.last_seq
            self.model.live.append((row.seq, text, row.token_count))

    @rule(conn=st.integers(0, 1), max_tokens=st.integers(0, 80))
    def trim(self, conn: int, max_tokens: int) -> None:
        self.on(conn, lambda s: memory.session_trim(session=s, max_tokens=max_tokens))
        self.model.keep_newest(max_tokens)

    @rule(target=snapshots, conn=st.integers(0, 1))
    def snapshot(self, conn: int) -> Snap:
        snapshot = self.on(conn, lambda s: memory.snapshot_create(session=s, label="prop"))
        return Snap(snapshot.pk, copy.copy(self.model.live))

    @rule(conn=st.integers(0, 1), snap=snapshots)
    def rollback(self, conn: int, snap: Snap) -> None:
        self._rollback(conn, snap)

    @precondition(lambda self: bool(self.safeties))
    @rule(conn=st.integers(0, 1))
    def undo(self, conn: int) -> None:
        self._rollback(conn, self.safeties.pop())

    def _rollback(self, conn: int, snap: Snap) -> None:
        safety = self.on(
            conn,
            lambda s: memory.snapshot_rollback(
                session=s, snapshot=Snapshot.objects.get(pk=snap.pk)
            ),
        )
        assert safety is not None
        self.safeties.append(Snap(safety.pk, copy.copy(self.model.live)))
        self.model.live = copy.copy(snap.live)

    @rule(conn=st.integers(0, 1), snap=snapshots, size=st.integers(0, 20))
    def append_racing_a_rollback(self, conn: int, snap: Snap, size: int) -> None:
        """Two writers at once: the rollback (on ``conn``) holds the lock until the append (on
        the other connection) has asked for it; the append lands after the rollback."""
        global RACE
        text = f"m{self.model.last_seq + 1} raced " + "word " * size
        roller, appender = self.sessions[conn], self.sessions[1 - conn]
        RACE = Race()
        snapshot = Snapshot.objects.get(pk=snap.pk)

        def roll() -> Snapshot | None:
            RACE.roller = threading.get_ident()
            return memory.snapshot_rollback(session=roller, snapshot=snapshot)

        def append() -> Any:
            RACE.appender = threading.get_ident()
            # Ask only once the rollback is inside its critical section.
            with RACE.door._changed:
                assert RACE.door._changed.wait_for(lambda: RACE.inside_end >= 0, timeout=30)
            return memory.message_add(session=appender, message={"role": "user", "content": text})

        RACE.inside_end = -1  # the rollback sets 0 once inside (see paused_restore)
        rolled = CONNECTIONS[conn].pool.submit(roll)
        appended = CONNECTIONS[1 - conn].pool.submit(append)
        safety, row = rolled.result(timeout=60), appended.result(timeout=60)
        assert safety is not None
        self.safeties.append(Snap(safety.pk, copy.copy(self.model.live)))
        self.model.live = copy.copy(snap.live)
        self.model.last_seq += 1
        assert row.seq == self.model.last_seq
        self.model.live.append((row.seq, text, row.token_count))
        # The append asked while the rollback held the lock, and got it only after the
        # rollback's last moment inside (checked at the end: the model speaks first).
        CONTENDED.append(RACE.door.overlaps == 1 and RACE.got > RACE.inside_end > 0)

    @rule(conn=st.integers(0, 1))
    def clear(self, conn: int) -> None:
        self.on(conn, lambda s: memory.session_clear(session=s))
        self.model.live = []

    @rule(conn=st.integers(0, 1))
    def summarise(self, conn: int) -> None:
        self.on(conn, lambda s: session_summarise(session_id=s.pk))
        if sum(row[2] for row in self.model.live) > KEEP_TOKENS:
            self.model.keep_newest(KEEP_TOKENS)

    @invariant()
    def history_matches_the_model(self) -> None:
        session_id = self.sessions[0].pk

        def read() -> tuple[list[tuple[int, str]], list[str], tuple[int, int, int]]:
            rows = Message.objects.live().filter(session_id=session_id).order_by("seq")
            live = [(row.seq, row.data["content"]) for row in rows]
            recent = [m["content"] for m in memory.message_recent(session=self.sessions[1])]
            stored = MemorySession.objects.get(pk=session_id)
            return live, recent, (stored.message_count, stored.token_count, stored.last_seq)

        live, recent, counters = CONNECTIONS[1].run(read)
        expected = [(seq, text) for seq, text, _ in self.model.live]
        assert live == expected
        assert recent == [text for _, text in expected]
        tokens = sum(row[2] for row in self.model.live)
        assert counters == (len(expected), tokens, self.model.last_seq)


@pytest.fixture
def race_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside the rollback's critical section of the racing step: wait until the append has
    asked for the lock, and note the time just before leaving it; note when the append got
    the lock. Other steps pass straight through."""
    real_restore = snapshot_services.restore_locked

    def paused_restore(session: MemorySession, payload: dict[str, Any]) -> None:
        if threading.get_ident() != RACE.roller:
            return real_restore(session, payload)
        with RACE.door._changed:
            RACE.inside_end = 0
            RACE.door._changed.notify_all()
        RACE.door.wait_for_more_than(0)
        real_restore(session, payload)
        RACE.inside_end = time.monotonic_ns()  # still under the lock: the commit follows
        return None

    monkeypatch.setattr(snapshot_services, "restore_locked", paused_restore)
    lock = get_lock()
    for name in ("locked", "wait_reading"):
        real = getattr(lock, name, None)
        if real is None:
            continue

        def asking(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            if threading.get_ident() != RACE.appender:
                return _real(*args, **kwargs)
            RACE.door.arrive()
            if _name == "wait_reading":
                row = _real(*args, **kwargs)
                RACE.got = time.monotonic_ns()
                return row
            return _timed(_real(*args, **kwargs))

        monkeypatch.setattr(lock, name, asking)


class _timed:
    """A lock's context manager that notes when it was entered (the lock then held)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __enter__(self) -> Any:
        entered = self.inner.__enter__()
        RACE.got = time.monotonic_ns()
        return entered

    def __exit__(self, *exc: Any) -> Any:
        return self.inner.__exit__(*exc)


@pytest.fixture
def connections() -> Iterator[list[Connection]]:
    CONNECTIONS[:] = [Connection(), Connection()]
    yield CONNECTIONS
    for conn in CONNECTIONS:
        conn.close()
    CONNECTIONS.clear()


def test_every_sequence_of_writes_from_two_connections_matches_the_model(
    transactional_db: Any, settings: Any, connections: list[Connection], request: Any
) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "MAX_SNAPSHOTS_PER_SESSION": 1000,
        "SUMMARY_KEEP_TOKENS": KEEP_TOKENS,
        "SUMMARISE_AT_TOKENS": 0,
        "TRIM_MODE": "archive",
    }
    request.getfixturevalue("race_probes")  # after the settings: the lock they configure
    CONTENDED.clear()
    run_state_machine_as_test(
        SessionMachine,
        settings=hypothesis_settings(
            max_examples=40,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
            database=None,
        ),
    )
    print(f"contention: {sum(CONTENDED)} of {len(CONTENDED)} racing steps had two writers at once")
    assert len(CONTENDED) > 0 and all(CONTENDED)
