"""Write-path benchmark: ttmemory's append and newest-window read against the issue-16 baseline
(``bench/raw.py``: advisory lock + max(seq)+1 insert on one psycopg connection per writer).

Both sides run in the same process, alternately, so drift in a shared machine hits both.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from django.db import close_old_connections, connection
from django.test.utils import override_settings

from bench.raw import RawSessions, Timing, _concurrent, paired, sample_message
from ttmemory import jobs, selectors, services
from ttmemory.models import MemorySession, Message

WRITERS = 16
ADDS_PER_WRITER = 10


def raw_params() -> dict[str, Any]:
    """Connection parameters of Django's connection, for the baseline's own psycopg connections
    (``options`` kept, so a ``synchronous_commit`` set there applies to both sides)."""
    return {
        k: v
        for k, v in connection.get_connection_params().items()
        if k in {"dbname", "user", "password", "host", "port", "options"}
    }


def concurrent_ours(session: MemorySession, writers: int, adds: int) -> float:
    """Wall microseconds of ``writers`` threads (own connections) appending ``adds`` each."""

    def connect() -> Any:
        close_old_connections()
        connection.ensure_connection()
        return connection  # this thread's

    def add(_: Any, message: dict[str, Any]) -> None:
        services.message_add(session=session, message=message)

    return _concurrent(writers, adds, connect=connect, add=add)


def concurrent_raw(raw: RawSessions, key: str, writers: int, adds: int) -> float:
    """The same on the baseline, each thread on a psycopg connection of its own."""

    def add(conn: Any, message: dict[str, Any]) -> None:
        raw.add(key, [message], conn)

    return _concurrent(writers, adds, connect=raw.connect, add=add)


def core_settings() -> dict[str, Any]:
    """ttmemory's defaults with no background trigger (learning, summaries, auto snapshots):
    this measures the session layer, as bench/session_memory.py does."""
    from django.conf import settings

    return {
        **getattr(settings, "TTMEMORY", {}),
        "LEARN_EVERY": 0,
        "LEARN_IDLE_SECONDS": 0,
        "SUMMARISE_AT_TOKENS": 0,
        "AUTO_SNAPSHOT_EVERY": 0,
    }


def run(
    *,
    runs: int,
    rounds: int,
    curve: list[int],
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """Every operation of issue 16 on the configured database; samples in microseconds."""
    with override_settings(DEBUG=False, TTMEMORY=core_settings()):
        return _run(runs=runs, rounds=rounds, curve=curve, progress=progress)


def _run(
    *, runs: int, rounds: int, curve: list[int], progress: Callable[[str], None]
) -> dict[str, Any]:
    namespace = f"bench-write-{uuid.uuid4().hex[:8]}"
    raw = RawSessions(raw_params())
    out: dict[str, Any] = {"rows": {}, "checks": {}, "curve": []}
    try:
        one = sample_message(1)
        ours_session = services.session_open(namespace=namespace, key="add")
        for _ in range(10):  # warm up both paths (connections, prepared statements, tokenizer)
            services.message_add(session=ours_session, message=one)
            raw.add("add", [one])
        hundred = [sample_message(i) for i in range(100)]

        def settle() -> None:
            # The index jobs of the last append (INDEX_IN_BACKGROUND), untimed: they would run
            # during the next timed call, ours or the baseline's (this process).
            jobs.drain(60)

        def appends(suffix: str) -> None:
            """Time add 1 and add 100 in one call into the rows named with ``suffix``."""
            progress(f"add 1{suffix}")
            ours, base = paired(
                lambda: services.message_add(session=ours_session, message=one),
                lambda: raw.add("add", [one]),
                runs,
                settle=settle,
            )
            out["rows"][f"add 1{suffix}"] = (ours.as_dict(), base.as_dict())
            progress(f"add 100 in one call{suffix}")
            ours, base = paired(
                lambda: services.message_add_many(session=ours_session, messages=hundred),
                lambda: raw.add("add", hundred),
                max(5, runs // 8),
                settle=settle,
            )
            out["rows"][f"add 100 in one call{suffix}"] = (ours.as_dict(), base.as_dict())

        appends("")
        # The same two appends with the message_index job queued to a worker (what a Celery
        # deployment pays on the request) instead of run inline after commit (no broker).
        previous = jobs.get_dispatcher()
        jobs.set_dispatcher(lambda name, args: None)
        try:
            appends(", index job run by a worker")
        finally:
            jobs.set_dispatcher(previous)

        progress("newest 1,000 of 2,000")
        thousand_two = [sample_message(i) for i in range(2000)]
        read_session = services.session_open(namespace=namespace, key="read")
        for start in range(0, 2000, 500):
            services.message_add_many(
                session=read_session, messages=thousand_two[start : start + 500]
            )
            raw.add("read", thousand_two[start : start + 500])
        ours, base = paired(
            lambda: selectors.message_recent(session=read_session, limit=1000),
            lambda: raw.newest("read", 1000),
            max(5, runs // 8),
        )
        out["rows"]["newest 1,000 of 2,000"] = (ours.as_dict(), base.as_dict())

        gap_free = True
        for suffix, worker in (("", False), (", index job run by a worker", True)):
            progress(f"{WRITERS} writers x {ADDS_PER_WRITER} adds{suffix}")
            previous = jobs.get_dispatcher()
            if worker:
                jobs.set_dispatcher(lambda name, args: None)
            try:
                ours_t, base_t, indexed_t, stored = _concurrent_rounds(
                    raw, namespace, rounds, suffix
                )
            finally:
                jobs.set_dispatcher(previous)
            gap_free = gap_free and stored
            out["rows"][f"{WRITERS} writers x {ADDS_PER_WRITER} adds, wall{suffix}"] = (
                ours_t.as_dict(),
                base_t.as_dict(),
            )
            if not worker:
                row = f"{WRITERS} writers x {ADDS_PER_WRITER} adds, wall until indexed"
                out["rows"][row] = (indexed_t.as_dict(), base_t.as_dict())
        out["checks"]["concurrent appends all stored, seqs 1..160 gap-free (both sides)"] = gap_free
        if curve:
            out["curve"] = _curve(raw, namespace, curve, runs, progress)
    finally:
        raw.close()
        MemorySession.objects.filter(namespace=namespace).delete()
    return out


def _concurrent_rounds(
    raw: RawSessions, namespace: str, rounds: int, suffix: str
) -> tuple[Timing, Timing, Timing, bool]:
    """``rounds`` of 16 writers x 10 on each side (alternating which goes first): ours, raw,
    ours until the burst's messages are indexed too; whether every append of every round was
    stored with seqs 1..160 on both sides."""
    ours_t, base_t, indexed_t = Timing(), Timing(), Timing()
    gap_free = True
    for r in range(rounds):
        key = f"conc-{r}{suffix}"
        session = services.session_open(namespace=namespace, key=key)
        sides = [("ours", ours_t), ("raw", base_t)]
        for side, timing in sides if r % 2 == 0 else reversed(sides):
            if side == "raw":
                timing.samples.append(concurrent_raw(raw, key, WRITERS, ADDS_PER_WRITER))
                continue
            timing.samples.append(concurrent_ours(session, WRITERS, ADDS_PER_WRITER))
            # The index jobs the burst left (they yield to the appends in flight) run here,
            # never inside raw's timing; the time to the burst indexed is reported beside.
            start = time.perf_counter_ns()
            jobs.drain(60)
            indexed_t.samples.append(timing.samples[-1] + (time.perf_counter_ns() - start) / 1000)
        want = list(range(1, WRITERS * ADDS_PER_WRITER + 1))
        got = list(
            Message.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)
        )
        gap_free = gap_free and got == want and raw.seqs(key) == want
    return ours_t, base_t, indexed_t, gap_free


def _curve(
    raw: RawSessions, namespace: str, sizes: list[int], runs: int, progress: Callable[[str], None]
) -> list[dict[str, Any]]:
    """Append one and newest 100 as one session grows to each of ``sizes`` messages."""
    session = services.session_open(namespace=namespace, key="curve")
    have = 0
    points = []
    one = sample_message(7)
    for size in sizes:
        progress(f"cost curve: grow to {size:,} messages")
        batch = 1000
        while have < size:
            n = min(batch, size - have)
            services.message_add_many(
                session=session, messages=[sample_message(have + i) for i in range(n)]
            )
            raw.bulk("curve", n, start=have + 1)
            have += n
        # The raw side keeps max(seq)+1 continuous with the COPYed rows.
        add_ours, add_raw = paired(
            lambda: services.message_add(session=session, message=one),
            lambda: raw.add("curve", [one]),
            runs // 2,
        )
        have += runs // 2
        read_ours, read_raw = paired(
            lambda: selectors.message_recent(session=session, limit=100),
            lambda: raw.newest("curve", 100),
            runs // 2,
        )
        start = time.perf_counter_ns()
        selectors.message_search(namespace=namespace, query="blue jacket Lisbon", k=10)
        search_us = (time.perf_counter_ns() - start) / 1000
        points.append(
            {
                "messages": size,
                "add 1": (add_ours.as_dict(), add_raw.as_dict()),
                "newest 100": (read_ours.as_dict(), read_raw.as_dict()),
                "first message_search after growing (us)": search_us,
            }
        )
    return points
