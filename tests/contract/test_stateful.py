"""A stateful property test: random append / trim / snapshot / rollback / undo / clear /
summarise steps, each from one of two database connections, against a plain Python model.

After every step the live history (seq and content, read through the other connection),
the counters and ``message_recent`` must equal the model's. Each connection keeps its own
``MemorySession`` object, as two processes would, so nothing may trust stale fields.
"""

from __future__ import annotations

import copy
import itertools
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

from ttmemory import memory
from ttmemory.models import MemorySession, Message, Snapshot
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
def connections() -> Iterator[list[Connection]]:
    CONNECTIONS[:] = [Connection(), Connection()]
    yield CONNECTIONS
    for conn in CONNECTIONS:
        conn.close()
    CONNECTIONS.clear()


def test_every_sequence_of_writes_from_two_connections_matches_the_model(
    transactional_db: Any, settings: Any, connections: list[Connection]
) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "MAX_SNAPSHOTS_PER_SESSION": 1000,
        "SUMMARY_KEEP_TOKENS": KEEP_TOKENS,
        "SUMMARISE_AT_TOKENS": 0,
        "TRIM_MODE": "archive",
    }
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
