"""What every write benchmark shares, free of Django so the peers' venv runs it too: issue 16's
minimal raw-SQL session store (the baseline every ratio is taken against), timings, paired runs,
concurrent writers and the sample message.

The baseline is one psycopg connection per writer: per call ``BEGIN; SELECT
pg_advisory_xact_lock(<session hash>); INSERT ... SELECT coalesce(max(seq), 0) + 1 ...`` (one per
message, pipelined by ``executemany`` for a batch) with the message as JSON, ``COMMIT`` (with the
server's ``synchronous_commit``, on by default: the commit waits for the WAL flush). No
encryption, no token counting, no validation, no counters.
"""

from __future__ import annotations

import io
import json
import statistics
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

RAW_TABLE = "ttmemory_bench_write_raw"


def sample_message(i: int) -> dict[str, Any]:
    """A chat turn of about 250 characters (the size of issue 16's harness)."""
    role = "user" if i % 2 == 0 else "assistant"
    text = (
        f"Turn {i}: the customer asked about order #{1000 + i}, shipping to Lisbon on Friday, "
        "and whether the blue jacket in size M is back in stock; the agent checked the "
        "warehouse feed and the delivery options before answering in two short sentences."
    )
    return {"role": role, "content": text}


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


class RawSessions:
    """Issue 16's minimal baseline: one psycopg connection, advisory lock + max(seq)+1 insert."""

    def __init__(self, params: dict[str, Any], table: str = RAW_TABLE) -> None:
        """``params``: psycopg connection parameters (``write_path.raw_params()`` gives
        Django's); ``table`` is created afresh and dropped by ``close()``."""
        import psycopg

        self.params = params
        self.table = table
        self.conn = psycopg.connect(**self.params)
        with self.conn.transaction():
            self.conn.execute(f"DROP TABLE IF EXISTS {self.table}")
            self.conn.execute(
                f"CREATE TABLE {self.table} (id BIGSERIAL PRIMARY KEY, session_key TEXT NOT NULL, "
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
            f"INSERT INTO {self.table} (session_key, seq, content) SELECT %s, "
            f"coalesce(max(seq), 0) + 1, %s::jsonb FROM {self.table} WHERE session_key = %s"
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
            f"SELECT content FROM {self.table} WHERE session_key = %s ORDER BY seq DESC LIMIT %s",
            (session_key, limit),
        ).fetchall()
        self.conn.commit()
        out = [r[0] for r in rows]
        out.reverse()
        return out

    def seqs(self, session_key: str) -> list[int]:
        rows = self.conn.execute(
            f"SELECT seq FROM {self.table} WHERE session_key = %s ORDER BY seq", (session_key,)
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
            cursor.copy(f"COPY {self.table} (session_key, seq, content) FROM STDIN") as copy,
        ):
            copy.write(buffer.getvalue())

    def close(self) -> None:
        with self.conn.transaction():
            self.conn.execute(f"DROP TABLE IF EXISTS {self.table}")
        self.conn.close()


# The namespace curve: facts, questions and the raw pgvector baseline ----------------------------

#: Dimensions of the vectors the peers and the baseline store (MiniLM's and HashEmbedder's).
DIMENSIONS = 384
_WHO = ("my sister", "my brother", "my mother", "my father", "my friend", "my colleague", "my aunt")
_WHAT = (
    "lives in {place}", "works as a {job} in {place}", "is allergic to {food}",
    "moved to {place} last year", "loves cooking {food}", "plays {sport} every weekend",
    "is learning {language}", "flies to {place} in {month}",
)  # fmt: skip
_PLACES = ("Lisbon", "Berlin", "Osaka", "Lima", "Oslo", "Porto", "Quito", "Riga", "Tunis", "Kyiv")
_FILL = {
    "job": ("nurse", "teacher", "pilot", "baker", "lawyer", "designer", "chef", "plumber"),
    "food": ("peanuts", "shrimp", "mushrooms", "lentils", "kimchi", "risotto", "dumplings"),
    "sport": ("tennis", "chess", "football", "squash", "volleyball", "badminton"),
    "language": ("Spanish", "Japanese", "Polish", "Greek", "Swahili", "Korean"),
    "month": ("May", "June", "July", "October", "December"),
}


def fact_text(i: int) -> str:
    """The ``i``-th of a namespace's facts: profile facts whose names, relations and verbs recur
    across thousands (as a long-lived user's do), each one distinct by its number."""
    template = _WHAT[i % len(_WHAT)]
    values = {key: options[(i // 7 + len(key)) % len(options)] for key, options in _FILL.items()}
    values["place"] = _PLACES[(i // 3) % len(_PLACES)]
    text = f"{_WHO[i % len(_WHO)]} {template.format(**values)} (note {i})"
    return text[0].upper() + text[1:]


def fact_question(i: int) -> str:
    """A question of 8-15 words asked of a namespace, worded unlike its facts."""
    place, food = _PLACES[i % len(_PLACES)], _FILL["food"][i % len(_FILL["food"])]
    return (
        f"Which of the people close to me have something to do with {place} these days?"
        if i % 2 == 0
        else f"Is anyone in my family or among my friends unable to eat {food} at all?"
    )


def fake_vector(text: str) -> list[float]:
    """A deterministic unit vector for ``text`` (the same in every venv): the peers and the
    baseline store and search these, so no model's cost is in their figures."""
    import hashlib

    import numpy as np

    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(DIMENSIONS)
    return [float(x) for x in vector / np.linalg.norm(vector)]


def vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in vector) + "]"


class RawFacts:
    """The namespace curve's baseline: a namespace's facts in one plain table with pgvector,
    searched exactly (``ORDER BY embedding <=> query LIMIT k``, the query vector given)."""

    def __init__(self, params: dict[str, Any], table: str) -> None:
        import psycopg

        self.table = table
        self.conn = psycopg.connect(**params)
        with self.conn.transaction():
            self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")
            self.conn.execute(
                f"CREATE TABLE {table} (id BIGSERIAL PRIMARY KEY, namespace TEXT NOT NULL, "
                f"text TEXT NOT NULL, embedding vector({DIMENSIONS}) NOT NULL)"
            )
            self.conn.execute(f"CREATE INDEX {table}_ns ON {table} (namespace)")

    def load(self, namespace: str, texts: list[str]) -> None:
        with (
            self.conn.transaction(),
            self.conn.cursor() as cursor,
            cursor.copy(f"COPY {self.table} (namespace, text, embedding) FROM STDIN") as copy,
        ):
            for text in texts:
                copy.write_row((namespace, text, vector_literal(fake_vector(text))))
        self.conn.execute(f"ANALYZE {self.table}")
        self.conn.commit()

    def search(self, namespace: str, vector: str, k: int) -> list[str]:
        rows = self.conn.execute(
            f"SELECT text FROM {self.table} WHERE namespace = %s "
            "ORDER BY embedding <=> %s::vector LIMIT %s",
            (namespace, vector, k),
        ).fetchall()
        self.conn.commit()
        return [r[0] for r in rows]

    def close(self) -> None:
        with self.conn.transaction():
            self.conn.execute(f"DROP TABLE IF EXISTS {self.table}")
        self.conn.close()


def paired(
    ours: Callable[[], Any],
    raw: Callable[[], Any],
    runs: int,
    *,
    settle: Callable[[], Any] | None = None,
) -> tuple[Timing, Timing]:
    """Time both sides alternately ``runs`` times (which goes first alternates too).

    ``settle``, when given, runs untimed after each call of either side: ttmemory's background
    index jobs (``jobs.drain``), which would otherwise run during the next timed call, ours or
    the baseline's (the same process), and charge one side's work to the other."""
    a, b = Timing(), Timing()
    for i in range(runs):
        order = ((ours, a), (raw, b)) if i % 2 == 0 else ((raw, b), (ours, a))
        for fn, timing in order:
            start = time.perf_counter_ns()
            fn()
            timing.samples.append((time.perf_counter_ns() - start) / 1000)
            if settle is not None:
                settle()
    return a, b


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
