"""An append racing the expiry of its session, on a real second thread and connection: it lands
before (the session lives on, whole) or it waits for the expiry and gets a clear error."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections

from tests.conftest import user
from tests.retention.conftest import Clock
from ttmemory import jobs, memory
from ttmemory.backends.locks import get_lock
from ttmemory.models import MemorySession, Message
from ttmemory.services.prune import prune_expired

WAIT = 20.0


def asks_for_the_session_lock(sql: str) -> bool:
    """The append's first statement that waits for the expiry: the advisory lock on
    PostgreSQL, the write transaction (the lease lock's) on SQLite."""
    return "advisory_xact_lock" in sql or sql.startswith("BEGIN")


class Appender(threading.Thread):
    """Appends one message on its own connection when told to; says when it asks for the lock."""

    def __init__(self, session: MemorySession) -> None:
        super().__init__(daemon=True)
        self.session = session
        self.go = threading.Event()
        self.asking = threading.Event()
        self.done = threading.Event()
        self.outcome: list[object] = []

    def run(self) -> None:
        def watch(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
            if asks_for_the_session_lock(sql):
                self.asking.set()
            return execute(sql, *args)

        try:
            assert self.go.wait(WAIT)
            with connection.execute_wrapper(watch):
                self.outcome.append(memory.message_add(session=self.session, message=user("late")))
        except Exception as exc:
            self.outcome.append(exc)
        finally:
            self.done.set()
            connections.close_all()


@pytest.fixture
def idle(transactional_db: Any, clock: Clock, lifetimes: Any) -> MemorySession:
    lifetimes(SESSION_TTL=dt.timedelta(days=1))
    session = memory.session_open(namespace="race", key="chat")
    memory.message_add_many(session=session, messages=[user("a"), user("b")])
    clock.advance(days=2)
    return session


def test_an_append_arriving_inside_the_expiry_gets_a_clear_error(idle: MemorySession) -> None:
    appender = Appender(idle)
    appender.start()
    overlaps: list[str] = []

    def let_the_append_in(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
        # Inside the expiry's transaction, locks held, the session found still idle.
        if sql.startswith('DELETE FROM "ttmemory_message"') and not overlaps:
            appender.go.set()
            assert appender.asking.wait(WAIT), "the append never asked for the session's lock"
            overlaps.append("the append asked for the lock while the expiry held it")
        return execute(sql, *args)

    with connection.execute_wrapper(let_the_append_in):
        report = prune_expired()
    appender.join(WAIT)

    assert overlaps, "no overlap: the append never ran inside the expiry"
    assert report.counts["memory_session"] == 1
    (error,) = appender.outcome
    assert isinstance(error, MemorySession.DoesNotExist)
    assert f"session {idle.pk} no longer exists" in str(error)
    assert not MemorySession.objects.filter(pk=idle.pk).exists()
    assert not Message.objects.filter(session_id=idle.pk).exists()  # nothing half-written


def test_an_append_landing_first_keeps_the_session_alive(idle: MemorySession) -> None:
    appender = Appender(idle)
    appender.start()
    overlaps: list[str] = []

    def append_first(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
        # The expiry has listed the session as idle and is about to take its lock.
        if asks_for_the_session_lock(sql) and not overlaps:
            appender.go.set()
            assert appender.done.wait(WAIT), "the append did not finish"
            overlaps.append("the append committed between the listing and the lock")
        return execute(sql, *args)

    with connection.execute_wrapper(append_first):
        report = prune_expired()
    appender.join(WAIT)

    assert overlaps, "no overlap: the append did not land between listing and locking"
    (message,) = appender.outcome
    assert isinstance(message, Message) and message.seq == 3
    assert report.counts == {}
    assert [m["content"] for m in memory.message_recent(session=idle)] == ["a", "b", "late"]


def test_a_session_whose_lock_stays_busy_is_left_for_the_next_run(
    transactional_db: Any, clock: Clock, lifetimes: Any
) -> None:
    lifetimes(SESSION_TTL=dt.timedelta(days=1), LOCK_TIMEOUT=0)
    busy = memory.session_open(namespace="race", key="busy")
    free = memory.session_open(namespace="race", key="free")
    for session in (busy, free):
        memory.message_add_many(session=session, messages=[user("a"), user("b")])
    assert jobs.drain(30)  # the index jobs hold each session's lock for a moment
    clock.advance(days=2)
    holding, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        lock = get_lock()
        try:
            # SQLite: a committed lease (a long operation's); PostgreSQL: an open transaction.
            if connection.vendor == "sqlite":
                held = lock.lease(busy.pk, timeout=WAIT)  # type: ignore[attr-defined]
            else:
                held = lock.locked(busy.pk, timeout=WAIT)
            with held:
                holding.set()
                release.wait(WAIT)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_lock, daemon=True)
    holder.start()
    assert holding.wait(WAIT)
    try:
        report = prune_expired(batch_size=2)
    finally:
        release.set()
        holder.join(WAIT)

    assert report.skipped == 1 and report.counts["memory_session"] == 1
    assert MemorySession.objects.filter(pk=busy.pk).exists()
    assert not MemorySession.objects.filter(pk=free.pk).exists()
    assert prune_expired(batch_size=2).counts["memory_session"] == 1
    assert not MemorySession.objects.filter(pk=busy.pk).exists()
