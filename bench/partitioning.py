"""Partitioned history benchmark: append and newest-window latency as the message table grows.

Run once per layout on a fresh PostgreSQL database (a plain table, then one partitioned by hash
of session): the history is grown by COPY to each size in turn (100k ... 5M messages), and at
each size real ``message_add`` calls append to, and real ``message_recent`` calls read the
newest window of, sessions picked at random over the whole history (old and new alike, so
index inserts land all over the (session, seq) index, not only at its hot right edge).

Bulk rows are what appends would have stored: sessions of ``PER_SESSION`` messages with
gap-free seqs and consistent counters. The newest ``SEALED_TAIL`` messages of each session are
encrypted for their row (the window decrypts them); older ones reuse one ciphertext, which no
measured statement decrypts (encrypting 5M rows in Python would cost more than the COPY).
The episodic index (MESSAGE_SEARCH_INDEX) is off: it is another table, measured elsewhere.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction
from django.test.utils import override_settings
from django.utils import timezone

from ttmemory import selectors, services
from ttmemory.conf import app_settings
from ttmemory.models import MemorySession, Message
from ttmemory.models.partitioning import message_partitions

PER_SESSION = 200
SEALED_TAIL = 30
TOKENS = 40
WINDOW = 20
# Operations of each kind run first and not counted (connection, caches, plans).
WARMUP = 20
# Sessions whose window SELECT and an INSERT run under EXPLAIN (ANALYZE, BUFFERS).
PLANNED = 100


def text(i: int) -> str:
    return (
        f"Turn {i}: the customer asked about order #{1000 + i}, shipping to Lisbon on Friday, "
        "and whether the blue jacket in size M is back in stock; the agent checked the "
        "warehouse feed and the delivery options before answering in two short sentences."
    )


def message(i: int) -> dict[str, Any]:
    return {"role": "user" if i % 2 == 0 else "assistant", "content": text(i)}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": statistics.median(values),
        "p90_ms": percentile(values, 0.9),
        "p99_ms": percentile(values, 0.99),
        "min_ms": min(values),
    }


def table_size() -> dict[str, int]:
    """Bytes of the message table and its partitions: heap (with TOAST) and indexes."""
    with connection.cursor() as cursor:
        cursor.execute(
            # A plain table is no partition tree: count it by itself (partitioned parents
            # have no storage of their own, so counting them adds nothing).
            "SELECT COALESCE(sum(pg_table_size(c.oid)), 0), "
            "COALESCE(sum(pg_indexes_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.oid = to_regclass(%s) OR c.oid IN (SELECT relid FROM pg_partition_tree(%s))",
            [Message._meta.db_table, Message._meta.db_table],
        )
        heap, indexes = cursor.fetchone()
    return {"table_bytes": int(heap), "index_bytes": int(indexes)}


def load(sessions: int, *, namespace: str, first_key: int) -> float:
    """Add ``sessions`` sessions of ``PER_SESSION`` messages with COPY; returns seconds."""
    started = time.perf_counter()
    now = timezone.now()
    MemorySession.objects.bulk_create(
        [
            MemorySession(
                namespace=namespace,
                key=f"s{first_key + n}",
                message_count=PER_SESSION,
                token_count=PER_SESSION * TOKENS,
                last_seq=PER_SESSION,
                created_at=now,
                updated_at=now,
            )
            for n in range(sessions)
        ],
        batch_size=2000,
    )
    keys = [f"s{first_key + n}" for n in range(sessions)]
    ids = list(
        MemorySession.objects.filter(namespace=namespace, key__in=keys).values_list("id", flat=True)
    )
    field = Message._meta.get_field("data")
    filler = field.seal(message(0), (namespace, 0, 0)).blob  # type: ignore[union-attr]
    columns = (
        "session_id, namespace, seq, role, data, token_count, tool_call_id, tool_call_ids, "
        "group_seq, created_at"
    )
    table = connection.ops.quote_name(Message._meta.db_table)
    stamp = now.isoformat()
    # COPY's text format, built as strings: write_row per message cost more than the COPY.
    filler_text = "\\\\x" + filler.hex()
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for session_id in ids:
                lines = []
                for seq in range(1, PER_SESSION + 1):
                    if seq > PER_SESSION - SEALED_TAIL:
                        sealed = field.seal(message(seq), (namespace, session_id, seq))
                        blob = "\\\\x" + sealed.blob.hex()  # type: ignore[union-attr]
                    else:
                        blob = filler_text
                    role = "user" if seq % 2 == 0 else "assistant"
                    lines.append(
                        f"{session_id}\t{namespace}\t{seq}\t{role}\t{blob}\t{TOKENS}\t\t[]\t"
                        f"{seq}\t{stamp}\n"
                    )
                copy.write("".join(lines))
    return time.perf_counter() - started


def measure(
    namespace: str, total_sessions: int, *, runs: int, rng: random.Random
) -> dict[str, Any]:
    """Time ``runs`` appends and ``runs`` newest-window reads on random sessions."""
    appends: list[float] = []
    windows: list[float] = []
    picked = [f"s{rng.randrange(total_sessions)}" for _ in range(runs + WARMUP)]
    for n, key in enumerate(picked):
        session = MemorySession.objects.get(namespace=namespace, key=key)
        started = time.perf_counter()
        services.message_add(session=session, message=message(10_000 + n))
        if n >= WARMUP:
            appends.append((time.perf_counter() - started) * 1000)
    for n, key in enumerate(
        reversed(picked)
    ):  # not the order just appended: the rows are not all hot
        session = MemorySession.objects.get(namespace=namespace, key=key)
        started = time.perf_counter()
        window = selectors.message_recent(session=session, limit=WINDOW)
        if n >= WARMUP:
            windows.append((time.perf_counter() - started) * 1000)
        assert len(window) == WINDOW
    server = server_work(namespace, picked[WARMUP : WARMUP + PLANNED])
    return {"append": summary(appends), "window": summary(windows), **server}


class _RollBack(Exception):
    pass


def _explain(cursor: Any, sql: str, params: list[Any] | tuple[Any, ...]) -> tuple[float, int]:
    """(execution ms, shared buffers touched) of ``sql`` run under EXPLAIN ANALYZE."""
    cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params)
    plan = cursor.fetchone()[0]
    top = (json.loads(plan) if isinstance(plan, str) else plan)[0]
    node = top["Plan"]
    return float(top["Execution Time"]), int(node["Shared Hit Blocks"] + node["Shared Read Blocks"])


def server_work(namespace: str, keys: list[str]) -> dict[str, Any]:
    """What the server itself spends on the two statements that grow with the table, free of
    this shared machine's client-side noise: buffers touched (deterministic for a given index
    shape) and execution time of the window SELECT and of a message INSERT (rolled back)."""
    table = connection.ops.quote_name(Message._meta.db_table)
    window_ms, window_buffers, insert_ms, insert_buffers = [], [], [], []
    for n, key in enumerate(keys):
        session = MemorySession.objects.get(namespace=namespace, key=key)
        query = Message.objects.live().filter(session=session).order_by("-seq")[:WINDOW]
        sql, params = query.values_list("seq", "data").query.sql_with_params()
        with connection.cursor() as cursor:
            ms, buffers = _explain(cursor, sql, params)
            window_ms.append(ms)
            window_buffers.append(buffers)
            try:
                with transaction.atomic():
                    ms, buffers = _explain(
                        cursor,
                        f"INSERT INTO {table} (session_id, namespace, seq, role, data, "
                        "token_count, tool_call_id, tool_call_ids, group_seq, created_at) "
                        "VALUES (%s, %s, %s, 'user', %s, 40, '', '[]', %s, now())",
                        [session.pk, namespace, 10**9 + n, b"x" * 300, 10**9 + n],
                    )
                    raise _RollBack
            except _RollBack:
                pass
            insert_ms.append(ms)
            insert_buffers.append(buffers)
    return {
        "server": {
            "window_ms": statistics.median(window_ms),
            "window_buffers": statistics.median(window_buffers),
            "insert_ms": statistics.median(insert_ms),
            "insert_buffers": statistics.median(insert_buffers),
            "statements": len(keys),
        }
    }


def run(
    *,
    sizes: list[int],
    runs: int,
    seed: int = 1,
    progress: Callable[[str], None] = lambda message: None,
) -> dict[str, Any]:
    """Grow the history through ``sizes`` (messages), measuring at each; returns the result."""
    if connection.vendor != "postgresql":
        raise RuntimeError("partitioned history is PostgreSQL's: run on PostgreSQL")
    if Message.objects.exists():
        raise RuntimeError(
            "the message table is not empty: run on a fresh database "
            "(TTMEMORY_EMBEDDED_DB=<new name> or DATABASE_URL)"
        )
    namespace = f"bench-partition-{uuid.uuid4().hex[:8]}"
    rng = random.Random(seed)
    partitions = message_partitions(connection) or 0
    results = []
    loaded = 0
    with override_settings(TTMEMORY={**app_settings.user_settings, "MESSAGE_SEARCH_INDEX": False}):
        for size in sizes:
            sessions = (size - loaded * PER_SESSION) // PER_SESSION
            if sessions > 0:
                progress(f"loading {sessions * PER_SESSION} messages with COPY (to {size})")
                seconds = load(sessions, namespace=namespace, first_key=loaded)
                loaded += sessions
                progress(f"  {sessions * PER_SESSION / seconds:,.0f} messages/s; VACUUM ANALYZE")
            else:
                seconds = 0.0
            with connection.cursor() as cursor:
                cursor.execute(
                    f"VACUUM ANALYZE {connection.ops.quote_name(Message._meta.db_table)}"
                )
                cursor.execute(
                    f"SELECT count(*) FROM {connection.ops.quote_name(Message._meta.db_table)}"
                )
                count = int(cursor.fetchone()[0])
            progress(f"measuring at {count:,} messages ({runs} appends, {runs} windows)")
            timings = measure(namespace, loaded, runs=runs, rng=rng)
            size_info = table_size()
            results.append(
                {
                    "messages": count,
                    "sessions": loaded,
                    "load_seconds": seconds,
                    **timings,
                    **size_info,
                }
            )
            progress(
                f"  append median {timings['append']['median_ms']:.2f} ms, window median "
                f"{timings['window']['median_ms']:.2f} ms, "
                f"{(size_info['table_bytes'] + size_info['index_bytes']) / 2**20:,.0f} MiB"
            )
    return {
        "environment": {
            "database": connection.vendor,
            "server": connection.connection.info.server_version,
            "partitions": partitions,
            "per_session": PER_SESSION,
            "runs": runs,
            "window": WINDOW,
            "cpus": os.cpu_count(),
        },
        "rows": results,
    }
