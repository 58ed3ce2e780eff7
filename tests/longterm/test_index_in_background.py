"""Inline jobs (no worker): the episodic index is written on the process's background thread, so
an append never waits for it, and message_search finds what was appended all the same."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import user
from ttmemory import jobs, memory
from ttmemory.models import MemorySession, MessageEntry

pytestmark = pytest.mark.contract


def entries(session: MemorySession) -> list[int]:
    return sorted(MessageEntry.objects.filter(session_id=session.pk).values_list("seq", flat=True))


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The message_index job waits for ``release`` (10 s at most) before it runs, and records
    the thread it ran on."""
    real = jobs._registry["message_index"]
    state: dict[str, Any] = {"release": threading.Event(), "threads": []}

    def waiting(*args: Any) -> dict[str, Any]:
        state["threads"].append(threading.current_thread().name)
        state["release"].wait(10)
        return real(*args)

    monkeypatch.setitem(jobs._registry, "message_index", waiting)
    yield state
    state["release"].set()
    assert jobs.drain(30)


def test_an_append_returns_before_its_messages_are_indexed_and_they_are_found_at_once(
    transactional_db: Any, held: dict[str, Any]
) -> None:
    session = memory.session_open(namespace="user-1", key="c")
    messages = [user(f"note {n}: the parcel went to locker {n}") for n in range(99)]
    messages.append(user("The spare key is under the blue flower pot."))
    memory.message_add_many(session=session, messages=messages)
    # The append has returned while the index job still waits on the background thread.
    assert entries(session) == []
    hits = memory.message_search(namespace="user-1", query="where is the spare key", k=1)
    assert hits[0].seq == 100 and "spare key" in hits[0].message["content"]

    held["release"].set()
    assert jobs.drain(30)
    assert entries(session) == list(range(1, 101))
    assert held["threads"] == ["ttmemory-index"]
    again = memory.message_search(namespace="user-1", query="where is the spare key", k=1)
    assert [(h.seq, h.score) for h in again] == [(h.seq, h.score) for h in hits]


def test_off_the_job_runs_in_the_appending_thread_after_commit(
    transactional_db: Any, held: dict[str, Any], settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "INDEX_IN_BACKGROUND": False}
    held["release"].set()
    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(session=session, messages=[user("one"), user("two")])
    assert entries(session) == [1, 2]
    assert held["threads"] == [threading.current_thread().name]


def test_a_failing_job_is_logged_and_the_thread_goes_on(
    transactional_db: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = jobs._registry["message_index"]
    calls: list[int] = []

    def failing_once(*args: Any) -> dict[str, Any]:
        calls.append(args[0])
        if len(calls) == 1:
            raise RuntimeError("the index job broke")
        return real(*args)

    monkeypatch.setitem(jobs._registry, "message_index", failing_once)
    first = memory.session_open(namespace="user-1", key="first")
    second = memory.session_open(namespace="user-1", key="second")
    memory.message_add(session=first, message=user("lost for now"))
    assert jobs.drain(30)
    memory.message_add(session=second, message=user("indexed"))
    assert jobs.drain(30)
    assert "the index job broke" in caplog.text
    assert entries(first) == [] and entries(second) == [1]
    # The first session's message is still found (scored from the stored message), and the
    # session's next index job (at its 32nd message: MESSAGE_INDEX_EVERY) indexes it.
    assert memory.message_search(namespace="user-1", query="lost for now", k=1)[0].seq == 1
    memory.message_add_many(session=first, messages=[user(f"more {n}") for n in range(31)])
    assert jobs.drain(30)
    assert entries(first) == list(range(1, 33))


def test_a_forked_child_runs_what_its_parent_had_waiting_when_it_drains() -> None:
    """The parent's thread is busy with one job and two wait; the child, forked meanwhile, has no
    thread of its own until it drains, and its drain runs the two (not the one running in the
    parent) instead of returning at once."""
    from ttmemory.jobs.deferred import Deferred

    running, release = threading.Event(), threading.Event()
    ran: list[tuple[str, tuple[Any, ...]]] = []

    def run(name: str, *args: Any) -> None:
        if name == "first":
            running.set()
            release.wait(10)
        ran.append((name, args))

    deferred = Deferred(run)
    deferred.submit("first", ())
    assert running.wait(10)
    deferred.submit("second", (1,))
    deferred.submit("third", (2,))
    pid = os.fork()
    if pid == 0:  # the child: report by exit status only
        ok = deferred.drain(10) and ran == [("second", (1,)), ("third", (2,))]
        os._exit(0 if ok else 1)
    release.set()
    assert deferred.drain(10)
    assert ran == [("first", ()), ("second", (1,)), ("third", (2,))]
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_job_waits_for_the_change_in_flight_and_not_longer_than_yield_max(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Index work yields to the process's writes: submitted while a change is in flight, a job
    starts when the change ends; a change that lasts past YIELD_MAX does not hold it back."""
    from ttmemory.jobs import deferred as deferred_module

    ran: list[str] = []
    deferred = deferred_module.Deferred(lambda name, *args: ran.append(name))
    with deferred.foreground():
        deferred.submit("during", ())
        time.sleep(0.3)
        assert ran == [], "a job started while a change was in flight"
    assert deferred.drain(10) and ran == ["during"]

    monkeypatch.setattr(deferred_module, "YIELD_MAX", 0.2)
    with deferred.foreground():
        deferred.submit("long", ())
        assert deferred.drain(10), "a job waited past YIELD_MAX for a change still in flight"
    assert ran == ["during", "long"]


def test_every_change_through_the_gate_is_in_flight_for_the_index_thread(
    transactional_db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts: list[int] = []
    real = jobs._background.foreground

    def counting() -> Any:
        counts.append(1)
        return real()

    monkeypatch.setattr(jobs, "foreground", counting)
    session = memory.session_open(namespace="user-1", key="k")
    memory.message_add(session=session, message=user("hello"))
    memory.session_clear(session=session)
    assert len(counts) == 3  # open, append, clear: each a change


def test_a_running_job_pauses_for_a_change_where_it_holds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job on the thread calls pause() between its steps: while a change is in flight it
    makes no progress, after it ends the job goes on; pause() elsewhere returns at once."""
    from ttmemory.jobs import deferred as deferred_module

    steps: list[int] = []
    started = threading.Event()
    holder: dict[str, deferred_module.Deferred] = {}

    def run(name: str, *args: Any) -> None:
        for step in range(40):
            if step == 1:
                started.set()
            holder["d"].pause()
            steps.append(step)
            time.sleep(0.005)

    deferred = holder["d"] = deferred_module.Deferred(run)
    deferred.pause()  # not the thread: returns at once
    with deferred.foreground():
        deferred.submit("job", ())
        time.sleep(0.2)
        assert steps == [], "the job started while a change was in flight"
    assert started.wait(10)
    with deferred.foreground():
        time.sleep(0.05)  # the job reaches its next pause() and waits there
        paused_at = len(steps)
        time.sleep(0.3)
        # At most the step it was in when the change began (a loaded machine may be slow).
        assert len(steps) <= paused_at + 1 < 40, "the job went on while a change was in flight"
    assert deferred.drain(10) and steps == list(range(40))

    monkeypatch.setattr(deferred_module, "YIELD_MAX", 0.1)  # the budget, spent: no more waits
    steps.clear()
    with deferred.foreground():
        deferred.submit("job", ())
        assert deferred.drain(10) and steps == list(range(40))
