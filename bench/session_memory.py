"""Session-memory benchmark: each ttmemory operation beside raw SQL doing the same work.

The raw baselines talk to the same database through the driver directly (psycopg or sqlite3)
on tables of the same shape, storing the message as plain JSON: no ORM, no encryption, no
token counting. Both sides run in the same process, interleaved, so the ratio is fair.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.test.utils import override_settings
from django.utils import timezone

from bench.raw import sample_message
from ttmemory import conversation, jobs, selectors, services
from ttmemory.conf import app_settings
from ttmemory.models import MemorySession

RAW_SESSION = "ttmemory_bench_raw_session"
RAW_MESSAGE = "ttmemory_bench_raw_message"
RAW_SNAPSHOT = "ttmemory_bench_raw_snapshot"
RAW_LEASE = "ttmemory_bench_raw_lease"


@dataclass
class Row:
    operation: str
    ours_us: float
    raw_us: float
    runs: int

    @property
    def ratio(self) -> float:
        return self.ours_us / self.raw_us if self.raw_us else float("inf")


def paired(
    operation: str,
    ours: Callable[[], Any],
    raw: Callable[[], Any],
    runs: int,
    *,
    setup_ours: Callable[[], Any] | None = None,
    setup_raw: Callable[[], Any] | None = None,
) -> Row:
    """Median microseconds of both sides, run alternately so drift in the machine hits both."""
    samples: dict[str, list[float]] = {"ours": [], "raw": []}
    for _ in range(runs):
        for side, fn, setup in (("ours", ours, setup_ours), ("raw", raw, setup_raw)):
            if setup is not None:
                setup()
            start = time.perf_counter_ns()
            fn()
            samples[side].append((time.perf_counter_ns() - start) / 1000)
    return Row(
        operation, statistics.median(samples["ours"]), statistics.median(samples["raw"]), runs
    )


class RawStore:
    """The same operations in plain SQL through the database driver."""

    def __init__(self) -> None:
        self.vendor = connection.vendor
        if self.vendor == "postgresql":
            import psycopg

            params = {
                k: v
                for k, v in connection.get_connection_params().items()
                if k in {"dbname", "user", "password", "host", "port"}
            }
            self.conn: Any = psycopg.connect(**params, autocommit=True)
            self.blob = "BYTEA"
            self.serial = "BIGSERIAL PRIMARY KEY"
        else:
            self.conn = sqlite3.connect(
                connection.settings_dict["NAME"], isolation_level=None, timeout=30
            )
            self.blob = "BLOB"
            self.serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
        self.p = "%s" if self.vendor == "postgresql" else "?"
        self.begin = "BEGIN" if self.vendor == "postgresql" else "BEGIN IMMEDIATE"
        for table in (RAW_MESSAGE, RAW_SESSION, RAW_SNAPSHOT, RAW_LEASE):
            self.execute(f"DROP TABLE IF EXISTS {table}")
        self.execute(
            f"CREATE TABLE {RAW_SNAPSHOT} (id {self.serial}, session_id BIGINT NOT NULL, "
            f"payload {self.blob} NOT NULL)"
        )
        self.execute(
            f"CREATE TABLE {RAW_LEASE} (session_id BIGINT PRIMARY KEY, token VARCHAR(64) NOT NULL)"
        )
        self.execute(
            f"CREATE TABLE {RAW_SESSION} (id {self.serial}, last_seq BIGINT NOT NULL DEFAULT 0, "
            "message_count BIGINT NOT NULL DEFAULT 0, token_count BIGINT NOT NULL DEFAULT 0)"
        )
        self.execute(
            f"CREATE TABLE {RAW_MESSAGE} (id {self.serial}, session_id BIGINT NOT NULL, "
            f"seq BIGINT NOT NULL, role VARCHAR(16) NOT NULL, data {self.blob} NOT NULL, "
            "token_count INTEGER NOT NULL, archived BOOLEAN NOT NULL DEFAULT FALSE, "
            "UNIQUE (session_id, seq))"
        )

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self.conn.execute(sql, params)

    def snapshot(self, session_id: int) -> int:
        """Copy the live rows into one JSON payload row; returns its id."""
        p = self.p
        self.execute(self.begin)
        rows = self.execute(
            f"SELECT seq, role, data, token_count FROM {RAW_MESSAGE} WHERE session_id = {p} "
            "AND NOT archived ORDER BY seq",
            (session_id,),
        ).fetchall()
        payload = json.dumps(
            [[seq, role, json.loads(bytes(data)), tokens] for seq, role, data, tokens in rows]
        ).encode()
        (snapshot_id,) = self.execute(
            f"INSERT INTO {RAW_SNAPSHOT} (session_id, payload) VALUES ({p}, {p}) RETURNING id",
            (session_id, payload),
        ).fetchone()
        self.execute("COMMIT")
        return int(snapshot_id)

    def rollback(self, session_id: int, snapshot_id: int) -> None:
        """Replace the live rows by the snapshot's, in one transaction."""
        p = self.p
        self.execute(self.begin)
        (payload,) = self.execute(
            f"SELECT payload FROM {RAW_SNAPSHOT} WHERE id = {p}", (snapshot_id,)
        ).fetchone()
        messages = json.loads(bytes(payload))
        self.execute(f"DELETE FROM {RAW_MESSAGE} WHERE session_id = {p}", (session_id,))
        sql = (
            f"INSERT INTO {RAW_MESSAGE} (session_id, seq, role, data, token_count) "
            f"VALUES ({p}, {p}, {p}, {p}, {p})"
        )
        rows = [
            (session_id, seq, role, json.dumps(data).encode(), tokens)
            for seq, role, data, tokens in messages
        ]
        if self.vendor == "postgresql":
            with self.conn.cursor() as cursor:
                cursor.executemany(sql, rows)
        else:
            self.conn.executemany(sql, rows)
        self.execute(
            f"UPDATE {RAW_SESSION} SET message_count = {p}, token_count = {p} WHERE id = {p}",
            (len(rows), sum(r[4] for r in rows), session_id),
        )
        self.execute("COMMIT")

    def lock(self, session_id: int) -> None:
        """The database lock of a session around an empty transaction."""
        p = self.p
        if self.vendor == "postgresql":
            self.execute("BEGIN")
            self.execute("SELECT pg_advisory_xact_lock(%s, %s)", (1953787245, session_id))
            self.execute("COMMIT")
        else:  # SQLite: the write transaction is the lock; check no lease is held
            self.execute(self.begin)
            self.execute(f"SELECT token FROM {RAW_LEASE} WHERE session_id = {p}", (session_id,))
            self.execute("COMMIT")

    def close(self) -> None:
        for table in (RAW_MESSAGE, RAW_SESSION, RAW_SNAPSHOT, RAW_LEASE):
            self.execute(f"DROP TABLE IF EXISTS {table}")
        self.conn.close()

    def new_session(self) -> int:
        row = self.execute(f"INSERT INTO {RAW_SESSION} DEFAULT VALUES RETURNING id").fetchone()
        return int(row[0])

    def add(self, session_id: int, messages: list[dict[str, Any]]) -> None:
        p = self.p
        payloads = [json.dumps(m, ensure_ascii=False).encode() for m in messages]
        tokens = [len(b) // 4 for b in payloads]  # the raw side skips tokenizing on purpose
        self.execute(self.begin)
        (last,) = self.execute(
            f"UPDATE {RAW_SESSION} SET last_seq = last_seq + {p}, message_count = message_count "
            f"+ {p}, token_count = token_count + {p} WHERE id = {p} RETURNING last_seq",
            (len(messages), len(messages), sum(tokens), session_id),
        ).fetchone()
        first = last - len(messages) + 1
        rows = [
            (session_id, first + i, m["role"], payloads[i], tokens[i])
            for i, m in enumerate(messages)
        ]
        sql = (
            f"INSERT INTO {RAW_MESSAGE} (session_id, seq, role, data, token_count) "
            f"VALUES ({p}, {p}, {p}, {p}, {p})"
        )
        if self.vendor == "postgresql":
            with self.conn.cursor() as cursor:
                cursor.executemany(sql, rows)
        else:
            self.conn.executemany(sql, rows)
        self.execute("COMMIT")

    def recent(self, session_id: int, limit: int) -> list[dict[str, Any]]:
        p = self.p
        rows = self.execute(
            f"SELECT data FROM {RAW_MESSAGE} WHERE session_id = {p} AND NOT archived "
            f"ORDER BY seq DESC LIMIT {p}",
            (session_id, limit),
        ).fetchall()
        out = [json.loads(bytes(r[0])) for r in rows]
        out.reverse()
        return out

    def window(self, session_id: int, max_tokens: int) -> list[dict[str, Any]]:
        p = self.p
        rows = self.execute(
            f"SELECT data, token_count FROM {RAW_MESSAGE} WHERE session_id = {p} AND NOT archived "
            "ORDER BY seq DESC",
            (session_id,),
        )
        out: list[dict[str, Any]] = []
        used = 0
        for data, tokens in rows:
            if used + tokens > max_tokens and out:
                break
            used += tokens
            out.append(json.loads(bytes(data)))
        out.reverse()
        return out

    def trim(self, session_id: int, max_tokens: int) -> None:
        p = self.p
        self.execute(self.begin)
        rows = self.execute(
            f"SELECT seq, token_count FROM {RAW_MESSAGE} WHERE session_id = {p} AND NOT archived "
            "ORDER BY seq DESC",
            (session_id,),
        ).fetchall()
        used, cut = 0, 0
        for seq, tokens in rows:
            if used + tokens > max_tokens:
                cut = seq
                break
            used += tokens
        removed = [(s, t) for s, t in rows if s <= cut]
        self.execute(
            f"UPDATE {RAW_MESSAGE} SET archived = TRUE WHERE session_id = {p} AND seq <= {p} "
            "AND NOT archived",
            (session_id, cut),
        )
        self.execute(
            f"UPDATE {RAW_SESSION} SET message_count = message_count - {p}, "
            f"token_count = token_count - {p} WHERE id = {p}",
            (len(removed), sum(t for _, t in removed), session_id),
        )
        self.execute("COMMIT")


def run(*, runs: int = 30, progress: Callable[[str], None] | None = None) -> list[Row]:
    """Measure every operation; returns one row per operation with medians in microseconds."""
    from django.conf import settings

    # DEBUG makes Django record every query; production does not pay that, so neither do we.
    # Background triggers (learning, summaries, automatic snapshots) are off: this measures the
    # session layer itself, and bench/tasks.py measures what scheduling adds.
    core_only = {
        **getattr(settings, "TTMEMORY", {}),
        "LEARN_EVERY": 0,
        "LEARN_IDLE_SECONDS": 0,
        "SUMMARISE_AT_TOKENS": 0,
        "AUTO_SNAPSHOT_EVERY": 0,
        "MAX_SNAPSHOTS_PER_SESSION": 100_000,
    }
    with override_settings(DEBUG=False, TTMEMORY=core_only):
        return _run(runs=runs, progress=progress)


def _run(*, runs: int, progress: Callable[[str], None] | None) -> list[Row]:
    say = progress or (lambda _msg: None)
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    raw = RawStore()
    big_runs = max(3, runs // 7)
    rows: list[Row] = []
    try:
        one = sample_message(1)
        ours_session = services.session_open(namespace=namespace, key="add")
        raw_session = raw.new_session()
        for _ in range(5):  # warm up both paths (connections, caches, tokenizer)
            services.message_add(session=ours_session, message=one)
            raw.add(raw_session, [one])
        say("add one message")
        rows.append(
            paired(
                "add one message",
                lambda: services.message_add(session=ours_session, message=one),
                lambda: raw.add(raw_session, [one]),
                runs,
            )
        )
        hundred = [sample_message(i) for i in range(100)]
        say("add 100 messages")
        rows.append(
            paired(
                "add 100 messages (one call)",
                lambda: services.message_add_many(session=ours_session, messages=hundred),
                lambda: raw.add(raw_session, hundred),
                big_runs,
            )
        )
        # The same two appends with the message_embed job queued to a worker instead of run
        # inline (what a Celery deployment pays on the request: the postings only).
        previous = jobs.get_dispatcher()
        jobs.set_dispatcher(lambda name, args: None)
        try:
            say("add one message, embedding job queued elsewhere")
            rows.append(
                paired(
                    "add one message, embedding job run by a worker",
                    lambda: services.message_add(session=ours_session, message=one),
                    lambda: raw.add(raw_session, [one]),
                    runs,
                )
            )
            say("add 100 messages, embedding job queued elsewhere")
            rows.append(
                paired(
                    "add 100 messages, embedding job run by a worker",
                    lambda: services.message_add_many(session=ours_session, messages=hundred),
                    lambda: raw.add(raw_session, hundred),
                    big_runs,
                )
            )
        finally:
            jobs.set_dispatcher(previous)
        # The same two appends without the episodic index (MESSAGE_SEARCH_INDEX off): what
        # indexing for message_search costs an append, including the message_embed job that
        # runs inline after commit when no Celery worker takes it.
        with override_settings(
            TTMEMORY={**app_settings.user_settings, "MESSAGE_SEARCH_INDEX": False}
        ):
            say("add one message, no episodic index")
            rows.append(
                paired(
                    "add one message, episodic index off",
                    lambda: services.message_add(session=ours_session, message=one),
                    lambda: raw.add(raw_session, [one]),
                    runs,
                )
            )
            say("add 100 messages, no episodic index")
            rows.append(
                paired(
                    "add 100 messages, episodic index off",
                    lambda: services.message_add_many(session=ours_session, messages=hundred),
                    lambda: raw.add(raw_session, hundred),
                    big_runs,
                )
            )

        say("prepare a 1,000-message session")
        thousand = [sample_message(i) for i in range(1000)]
        read_session = services.session_open(namespace=namespace, key="read")
        services.message_add_many(session=read_session, messages=thousand)
        raw_read = raw.new_session()
        raw.add(raw_read, thousand)
        say("recent 1,000")
        rows.append(
            paired(
                "recent 1,000 (decrypted)",
                lambda: selectors.message_recent(session=read_session, limit=1000),
                lambda: raw.recent(raw_read, 1000),
                big_runs,
            )
        )
        say("context_window over 1,000, 4,000 tokens")
        rows.append(
            paired(
                "context_window, 1,000 msgs, 4,000-token budget",
                lambda: selectors.context_window(session=read_session, max_tokens=4000),
                lambda: raw.window(raw_read, 4000),
                big_runs,
            )
        )

        say("trim 1,000")
        state: dict[str, Any] = {}

        def fresh_ours() -> None:
            s = services.session_open(namespace=namespace, key=f"trim-{uuid.uuid4().hex}")
            _bulk_load(s, thousand)
            state["ours"] = s

        def fresh_raw() -> None:
            sid = raw.new_session()
            raw.add(sid, thousand)
            state["raw"] = sid

        rows.append(
            paired(
                "trim 1,000 to 4,000 tokens",
                lambda: services.session_trim(session=state["ours"], max_tokens=4000),
                lambda: raw.trim(state["raw"], 4000),
                big_runs,
                setup_ours=fresh_ours,
                setup_raw=fresh_raw,
            )
        )
        say("snapshot and rollback of 1,000 messages")
        rows.extend(_snapshot_rows(raw, read_session, raw_read, big_runs))
        say("lock acquire and release")
        rows.extend(_lock_rows(raw, read_session, runs))
    finally:
        raw.close()
        jobs.drain(60)  # the background index jobs still writing this namespace's rows
        MemorySession.objects.filter(namespace=namespace).delete()  # cascades
    return rows


def _snapshot_rows(raw: RawStore, session: MemorySession, raw_session: int, runs: int) -> list[Row]:
    from ttmemory.models import Snapshot

    snapshot_row = paired(
        "snapshot of 1,000 messages",
        lambda: services.snapshot_create(session=session),
        lambda: raw.snapshot(raw_session),
        runs,
    )
    target = Snapshot.objects.filter(session=session).newest_first().first()
    raw_target = raw.snapshot(raw_session)
    assert target is not None

    def mutate_ours() -> None:  # the rollback has 1,000 messages to put back each time
        services.session_clear(session=session)

    def mutate_raw() -> None:
        raw.execute(f"DELETE FROM {RAW_MESSAGE} WHERE session_id = {raw.p}", (raw_session,))

    rollback_row = paired(
        "rollback of 1,000 messages (safe)",
        lambda: services.snapshot_rollback(session=session, snapshot=target),
        lambda: raw.rollback(raw_session, raw_target),
        runs,
        setup_ours=mutate_ours,
        setup_raw=mutate_raw,
    )
    return [snapshot_row, rollback_row]


def _lock_rows(raw: RawStore, session: MemorySession, runs: int) -> list[Row]:
    from ttmemory.backends.locks import get_lock

    lock = get_lock()
    timeout = app_settings.LOCK_TIMEOUT

    def ours() -> None:
        with lock.locked(session.pk, timeout=timeout):
            pass

    rows = [
        paired(
            f"lock acquire + release ({type(lock).__name__}, empty transaction)",
            ours,
            lambda: raw.lock(session.pk),
            runs,
        )
    ]
    redis_row = _redis_lock_row(session, runs, timeout)
    if redis_row is not None:
        rows.append(redis_row)
    return rows


def _redis_lock_row(session: MemorySession, runs: int, timeout: float) -> Row | None:
    """RedisLock against redis-py doing SET NX PX + a compare-and-delete script, if reachable."""
    import os
    import secrets

    url = os.environ.get("TTMEMORY_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=0.5)
        client.ping()
    except Exception:
        return None
    from ttmemory.backends.locks.redis import RedisLock

    lock = RedisLock(url=url, renew=False)
    release = client.register_script(
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
        "else return 0 end"
    )
    key = f"ttmemory-bench:{{s{session.pk}}}:lock"

    def ours() -> None:
        with lock.locked(session.pk, timeout=timeout):
            pass

    def baseline() -> None:
        token = secrets.token_hex(16)
        client.set(key, token, nx=True, px=30000)
        release(keys=[key], args=[token])

    try:
        return paired("lock acquire + release (RedisLock, local Redis)", ours, baseline, runs)
    finally:
        lock.close()
        client.close()


def _bulk_load(session: MemorySession, messages: list[dict[str, Any]]) -> None:
    services.message_add_many(session=session, messages=messages)


def environment() -> dict[str, str]:
    """What the figures were measured on."""
    import platform

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SHOW server_version")
            version = f"PostgreSQL {cursor.fetchone()[0]}"
        else:
            version = f"SQLite {sqlite3.sqlite_version}"
    return {
        "database": version,
        "python": platform.python_version(),
        "tokenizer": app_settings.TOKENIZER,
        "when": timezone.now().strftime("%Y-%m-%d %H:%M UTC"),
        "encoding_ok": str(conversation is not None),
    }
