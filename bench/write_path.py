"""Write-path benchmark: ttmemory's append and newest-window read against the issue-16 baseline.

The baseline is the minimal raw-SQL session store of issue 16, on one psycopg connection per
writer: per call ``BEGIN; SELECT pg_advisory_xact_lock(<session hash>); INSERT ... SELECT
coalesce(max(seq), 0) + 1 ...`` (one per message, pipelined by ``executemany`` for a batch) with
the message as JSON, ``COMMIT`` (with the server's ``synchronous_commit``, on by default: the
commit waits for the WAL flush). No encryption, no token counting, no validation, no counters.

Both sides run in the same process, alternately, so drift in a shared machine hits both.
"""

from __future__ import annotations

import io
import json
import statistics
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import close_old_connections, connection
from django.test.utils import override_settings

from bench.session_memory import sample_message
from ttmemory import jobs, selectors, services
from ttmemory.models import MemorySession, Message

RAW_TABLE = "ttmemory_bench_write_raw"
WRITERS = 16
ADDS_PER_WRITER = 10


@dataclass
class Timing:
    """Samples of one side of one operation, in microseconds."""

    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def quantile(self, q: float) -> float:
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]

    def as_dict(self) -> dict[str, float]:
        return {
            "median": self.median,
            "p10": self.quantile(0.1),
            "p90": self.quantile(0.9),
            "mean": statistics.fmean(self.samples),
            "runs": len(self.samples),
        }


def raw_params() -> dict[str, Any]:
    """Connection parameters of Django's connection, for the baseline's own psycopg connections
    (``options`` kept, so a ``synchronous_commit`` set there applies to both sides)."""
    return {
        k: v
        for k, v in connection.get_connection_params().items()
        if k in {"dbname", "user", "password", "host", "port", "options"}
    }


class RawSessions:
    """Issue 16's minimal baseline: one psycopg connection, advisory lock + max(seq)+1 insert."""

    def __init__(self) -> None:
        import psycopg

        self.params = raw_params()
        self.conn = psycopg.connect(**self.params)
        with self.conn.transaction():
            self.conn.execute(f"DROP TABLE IF EXISTS {RAW_TABLE}")
            self.conn.execute(
                f"CREATE TABLE {RAW_TABLE} (id BIGSERIAL PRIMARY KEY, session_key TEXT NOT NULL, "
                "seq BIGINT NOT NULL, content JSONB NOT NULL, "
                "created_at TIMESTAMPTZ NOT NULL DEFAULT now(), UNIQUE (session_key, seq))"
            )

    def connect(self) -> Any:
        import psycopg

        return psycopg.connect(**self.params)

    @staticmethod
    def lock_key(session_key: str) -> int:
        return zlib.crc32(session_key.encode())

    def add(self, session_key: str, messages: list[dict[str, Any]], conn: Any = None) -> None:
        conn = conn or self.conn
        sql = (
            f"INSERT INTO {RAW_TABLE} (session_key, seq, content) SELECT %s, "
            f"coalesce(max(seq), 0) + 1, %s::jsonb FROM {RAW_TABLE} WHERE session_key = %s"
        )
        with conn.transaction(), conn.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (self.lock_key(session_key),))
            rows = [(session_key, json.dumps(m), session_key) for m in messages]
            if len(rows) == 1:
                cursor.execute(sql, rows[0])
            else:
                cursor.executemany(sql, rows)

    def newest(self, session_key: str, limit: int) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            f"SELECT content FROM {RAW_TABLE} WHERE session_key = %s ORDER BY seq DESC LIMIT %s",
            (session_key, limit),
        ).fetchall()
        self.conn.commit()
        out = [r[0] for r in rows]
        out.reverse()
        return out

    def seqs(self, session_key: str) -> list[int]:
        rows = self.conn.execute(
            f"SELECT seq FROM {RAW_TABLE} WHERE session_key = %s ORDER BY seq", (session_key,)
        ).fetchall()
        self.conn.commit()
        return [r[0] for r in rows]

    def bulk(self, session_key: str, count: int, start: int = 1) -> None:
        """COPY ``count`` messages in (the cost curve's big sessions)."""
        buffer = io.StringIO()
        for i in range(start, start + count):
            payload = json.dumps(sample_message(i)).replace("\\", "\\\\")
            buffer.write(f"{session_key}\t{i}\t{payload}\n")
        with (
            self.conn.transaction(),
            self.conn.cursor() as cursor,
            cursor.copy(f"COPY {RAW_TABLE} (session_key, seq, content) FROM STDIN") as copy,
        ):
            copy.write(buffer.getvalue())

    def close(self) -> None:
        with self.conn.transaction():
            self.conn.execute(f"DROP TABLE IF EXISTS {RAW_TABLE}")
        self.conn.close()


def paired(ours: Callable[[], Any], raw: Callable[[], Any], runs: int) -> tuple[Timing, Timing]:
    """Time both sides alternately ``runs`` times (which goes first alternates too)."""
    a, b = Timing(), Timing()
    for i in range(runs):
        order = ((ours, a), (raw, b)) if i % 2 == 0 else ((raw, b), (ours, a))
        for fn, timing in order:
            start = time.perf_counter_ns()
            fn()
            timing.samples.append((time.perf_counter_ns() - start) / 1000)
    return a, b


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


def _concurrent(
    writers: int,
    adds: int,
    *,
    connect: Callable[[], Any],
    add: Callable[[Any, dict[str, Any]], None],
) -> float:
    """Wall microseconds of ``writers`` threads, each on ``connect()``'s connection, calling
    ``add(connection, message)`` ``adds`` times: from when all are connected to the last end."""
    barrier = threading.Barrier(writers + 1)
    errors: list[BaseException] = []

    def work(w: int) -> None:
        conn = None
        try:
            conn = connect()
            barrier.wait()
            for i in range(adds):
                add(conn, sample_message(w * 1000 + i))
        except BaseException as exc:
            errors.append(exc)
        finally:
            if conn is not None:
                conn.close()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter_ns()
    for t in threads:
        t.join()
    wall = (time.perf_counter_ns() - start) / 1000
    if errors:
        raise errors[0]
    return wall


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
    raw = RawSessions()
    out: dict[str, Any] = {"rows": {}, "checks": {}, "curve": []}
    try:
        one = sample_message(1)
        ours_session = services.session_open(namespace=namespace, key="add")
        for _ in range(10):  # warm up both paths (connections, prepared statements, tokenizer)
            services.message_add(session=ours_session, message=one)
            raw.add("add", [one])
        hundred = [sample_message(i) for i in range(100)]

        def appends(suffix: str) -> None:
            """Time add 1 and add 100 in one call into the rows named with ``suffix``."""
            progress(f"add 1{suffix}")
            ours, base = paired(
                lambda: services.message_add(session=ours_session, message=one),
                lambda: raw.add("add", [one]),
                runs,
            )
            out["rows"][f"add 1{suffix}"] = (ours.as_dict(), base.as_dict())
            progress(f"add 100 in one call{suffix}")
            ours, base = paired(
                lambda: services.message_add_many(session=ours_session, messages=hundred),
                lambda: raw.add("add", hundred),
                max(5, runs // 8),
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
                ours_t, base_t, stored = _concurrent_rounds(raw, namespace, rounds, suffix)
            finally:
                jobs.set_dispatcher(previous)
            gap_free = gap_free and stored
            out["rows"][f"{WRITERS} writers x {ADDS_PER_WRITER} adds, wall{suffix}"] = (
                ours_t.as_dict(),
                base_t.as_dict(),
            )
        out["checks"]["concurrent appends all stored, seqs 1..160 gap-free (both sides)"] = gap_free
        if curve:
            out["curve"] = _curve(raw, namespace, curve, runs, progress)
    finally:
        raw.close()
        MemorySession.objects.filter(namespace=namespace).delete()
    return out


def _concurrent_rounds(
    raw: RawSessions, namespace: str, rounds: int, suffix: str
) -> tuple[Timing, Timing, bool]:
    """``rounds`` of 16 writers x 10 on each side (alternating which goes first); whether
    every append of every round was stored with seqs 1..160 on both sides."""
    ours_t, base_t = Timing(), Timing()
    gap_free = True
    for r in range(rounds):
        key = f"conc-{r}{suffix}"
        session = services.session_open(namespace=namespace, key=key)
        sides = [("ours", ours_t), ("raw", base_t)]
        for side, timing in sides if r % 2 == 0 else reversed(sides):
            timing.samples.append(
                concurrent_ours(session, WRITERS, ADDS_PER_WRITER)
                if side == "ours"
                else concurrent_raw(raw, key, WRITERS, ADDS_PER_WRITER)
            )
        want = list(range(1, WRITERS * ADDS_PER_WRITER + 1))
        got = list(
            Message.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)
        )
        gap_free = gap_free and got == want and raw.seqs(key) == want
    return ours_t, base_t, gap_free


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
