"""Latency of ``message_search`` at the shape of the external long-conversation benchmark.

Ten conversations of the conversational set (``bench/convset.py``, about 580 turns each) are
stored as sessions of messages in ONE namespace (about 5,800 messages in 260 sessions); every
question of the set (8 words on average) is asked in turn with ``k=10``, beside a raw-SQL
baseline doing the same filtered lookup through the driver: the query's term hashes matched
in the blind index of the namespace, ranked by summed term frequency, and the best ``k``
messages fetched with their ``window`` neighbours (stored bytes: no ORM, no decryption, no
neighbour terms, query hashes precomputed). Both sides alternate, so machine drift hits both.

Three states of the index:

- ``current``: the ``message_index`` job has run (inline, after each append).
- ``lagging``: the last four sessions of every conversation (about 820 messages) are not
  indexed, as when a worker is behind; ``message_search`` scores them from the stored
  messages (all of them: fewer than ``MESSAGE_SEARCH_PENDING_LIMIT``). The raw side has no
  way to search what is not indexed; it searches the rest.
- ``nothing indexed``: no message is indexed (a worker down since the first append);
  ``message_search`` scores the newest ``MESSAGE_SEARCH_PENDING_LIMIT`` and leaves the rest
  until the job has run (its catch-up, which a search queues, is held back here).

And a growing session (the write-path benchmark's cost curve): one session of N generated
chat turns that all contain the three query words, searched for those words.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection
from django.test.utils import override_settings

from bench import convset
from bench.recall import environment, raw_connection, timed_pair
from bench.session_memory import sample_message
from ttmemory import jobs, selectors, services
from ttmemory.conf import app_settings
from ttmemory.longterm import blind
from ttmemory.models import MemorySession, MessageEntry, MessageTerm

PREFIX = "bench-episodic-"
Progress = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


class RawEpisodic:
    """The baseline: term-frequency ranking of the blind index and one fetch of the rows."""

    def __init__(self) -> None:
        self.vendor = connection.vendor
        self.conn: Any
        self.conn, self.p = raw_connection()

    def close(self) -> None:
        self.conn.close()

    def search(
        self, namespace: str, terms: list[int], k: int, window: int
    ) -> list[tuple[int, int, bytes]]:
        if not terms:
            return []
        p = self.p
        marks = ", ".join([p] * len(terms))
        top = self.conn.execute(
            "SELECT session_id, seq FROM ttmemory_messageterm "
            f"WHERE namespace = {p} AND term IN ({marks}) GROUP BY session_id, seq "
            f"ORDER BY SUM(tf) DESC, session_id, seq LIMIT {int(k)}",
            [namespace, *terms],
        ).fetchall()
        if not top:
            return []
        sessions = sorted({int(s) for s, _ in top})
        seqs = sorted({int(q) + d for _, q in top for d in range(-window, window + 1)})
        rows = self.conn.execute(
            "SELECT session_id, seq, data FROM ttmemory_message WHERE namespace = "
            f"{p} AND session_id IN ({', '.join([p] * len(sessions))}) "
            f"AND seq IN ({', '.join([p] * len(seqs))})",
            [namespace, *sessions, *seqs],
        ).fetchall()
        return [(int(s), int(q), bytes(d)) for s, q, d in rows]


@contextmanager
def _jobs_held() -> Iterator[None]:
    """Queue jobs nowhere (a worker that is down): the index stays as it is."""
    previous = jobs.get_dispatcher()
    jobs.set_dispatcher(lambda name, args: None)
    try:
        yield
    finally:
        jobs.set_dispatcher(previous)


def _analyze() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for model in (MessageTerm, MessageEntry, MemorySession):
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


def _unindex(session_ids: Sequence[int]) -> int:
    """Drop the index rows of these sessions and move their marks back (as if never indexed)."""
    MessageTerm.objects.filter(session_id__in=session_ids).delete()
    dropped = int(MessageEntry.objects.filter(session_id__in=session_ids).delete()[0])
    MemorySession.objects.filter(pk__in=session_ids).update(indexed_upto_seq=0)
    return dropped


def conversations(
    *,
    users: int = 10,
    sessions: int = 26,
    runs: int = 300,
    k: int = 10,
    progress: Progress = _quiet,
) -> dict[str, Any]:
    """The conversational namespace in the three index states; p50/p95 beside the baseline."""
    data = convset.build(users=users, sessions=sessions)
    namespace = f"{PREFIX}{uuid.uuid4().hex[:8]}"
    questions = [q.text for c in data.conversations for q in c.questions]
    raw = RawEpisodic()
    rows: list[dict[str, Any]] = []
    try:
        progress(f"loading {data.describe()}")
        started = time.perf_counter()
        by_conversation: dict[str, list[int]] = defaultdict(list)
        for conv in data.conversations:
            by_session: dict[int, list[convset.Turn]] = defaultdict(list)
            for turn in conv.turns:
                by_session[turn.session].append(turn)
            for number, turns in sorted(by_session.items()):
                session = services.session_open(namespace=namespace, key=f"{conv.user}-{number}")
                services.message_add_many(
                    session=session,
                    messages=[{"role": t.role, "content": t.text} for t in turns],
                )
                by_conversation[conv.user].append(session.pk)
        # The index jobs run on the background thread (INDEX_IN_BACKGROUND): "current" means
        # they have all run, and none may share the cores with the timed searches.
        jobs.drain(600)
        _analyze()
        messages = MessageEntry.objects.filter(namespace=namespace).count()
        progress(f"loaded {messages:,} messages in {time.perf_counter() - started:,.0f} s")
        terms = [blind.query_terms(q, namespace=namespace) for q in questions]
        n = len(questions)

        def ours(i: int) -> Any:
            return selectors.message_search(namespace=namespace, query=questions[i % n], k=k)

        def baseline(i: int) -> Any:
            return raw.search(namespace, terms[i % n], k, 2)

        progress("index current")
        rows.append({"state": "current", "unindexed": 0, **timed_pair(ours, baseline, runs)})
        with _jobs_held():
            lagging = [pk for pks in by_conversation.values() for pk in pks[-4:]]
            unindexed = _unindex(lagging)
            _analyze()
            progress(f"index lagging: {unindexed:,} messages not indexed")
            rows.append(
                {"state": "lagging", "unindexed": unindexed, **timed_pair(ours, baseline, runs)}
            )
            everything = [pk for pks in by_conversation.values() for pk in pks]
            unindexed += _unindex(everything)
            _analyze()
            progress(f"nothing indexed: {unindexed:,} messages")
            rows.append(
                {
                    "state": "nothing indexed",
                    "unindexed": unindexed,
                    **timed_pair(ours, baseline, max(10, runs // 10)),
                }
            )
    finally:
        raw.close()
        jobs.drain(60)  # background index jobs still writing these rows
        MemorySession.objects.filter(namespace=namespace).delete()
    return {
        "environment": environment(),
        "set": data.describe(),
        "messages": messages,
        "sessions": sum(len(v) for v in by_conversation.values()),
        "questions": n,
        "k": k,
        "pending_limit": app_settings.MESSAGE_SEARCH_PENDING_LIMIT,
        "term_limit": app_settings.MESSAGE_SEARCH_TERM_LIMIT,
        "rows": rows,
    }


def growing(*, sizes: Sequence[int], runs: int = 20, progress: Progress = _quiet) -> list[Any]:
    """One session grown to each of ``sizes`` messages (every one holds the query's words)."""
    namespace = f"{PREFIX}g{uuid.uuid4().hex[:8]}"
    query = "blue jacket Lisbon"
    terms = blind.query_terms(query, namespace=namespace)
    raw = RawEpisodic()
    points = []
    try:
        session = services.session_open(namespace=namespace, key="curve")
        have = 0
        for size in sizes:
            progress(f"growing one session to {size:,} messages")
            while have < size:
                n = min(1000, size - have)
                services.message_add_many(
                    session=session, messages=[sample_message(have + i) for i in range(n)]
                )
                have += n
            jobs.drain(600)  # the index current, and no job on the cores while timed
            _analyze()

            def ours(_i: int) -> Any:
                return selectors.message_search(namespace=namespace, query=query, k=10)

            def baseline(_i: int) -> Any:
                return raw.search(namespace, terms, 10, 2)

            points.append({"messages": size, **timed_pair(ours, baseline, runs)})
    finally:
        raw.close()
        jobs.drain(60)  # background index jobs still writing these rows
        MemorySession.objects.filter(namespace=namespace).delete()
    return points


def run(
    *, users: int, sessions: int, runs: int, sizes: Sequence[int], progress: Progress = _quiet
) -> dict[str, Any]:
    """Both parts with the shipped settings (DEBUG off)."""
    before = os.getloadavg()[0]
    with override_settings(DEBUG=False):
        result = conversations(users=users, sessions=sessions, runs=runs, progress=progress)
        result["growing"] = growing(sizes=sizes, runs=max(5, runs // 15), progress=progress)
    result["load"] = f"{before:.1f}-{os.getloadavg()[0]:.1f}"
    return result


# ---------------------------------------------------------------------------------------------
# Markdown

TARGET_P50_MS = 10.0


def _ms(value: float) -> str:
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def render(results: Sequence[dict[str, Any]], *, command: str, load: str) -> str:
    lines = [
        "## Episodic recall latency (`message_search`)",
        "",
        f"Command: `{command}`. Ten conversations of the conversational set stored as sessions "
        "of messages in one namespace (the external benchmark's shape: issue 21 aims at p50 "
        "<= 10 ms per query), every question asked in turn, k=10, window 2, HashEmbedder "
        "(keyword only, the default). Beside it, raw SQL through the driver: the query's term "
        "hashes matched in the namespace's blind index, ranked by summed term frequency, and "
        "the best k messages fetched with their neighbours (no ORM, no decryption, no "
        "neighbour terms, hashes precomputed). States of the index: *current* (the "
        "`message_index` job has run), *lagging* (the last four sessions of each conversation "
        "not indexed: scored from the stored messages; the raw side cannot see them), "
        "*nothing indexed* (only the newest `MESSAGE_SEARCH_PENDING_LIMIT` are scored; the "
        f"catch-up a search queues is held back). Load average while measured: {load}.",
        "",
    ]
    for result in results:
        env = result["environment"]
        lines += [
            f"### {env['database']}",
            "",
            f"{result['messages']:,} messages in {result['sessions']} sessions, "
            f"{result['questions']} questions; Python {env['python']}, {env['cpus']} CPUs "
            f"(shared with other jobs), {env['when']}. `MESSAGE_SEARCH_PENDING_LIMIT` "
            f"{result['pending_limit']:,}, `MESSAGE_SEARCH_TERM_LIMIT` {result['term_limit']:,}.",
            "",
            "| index | unindexed messages | message_search p50 (ms) | p25-p75 | p95 | raw SQL p50 "
            "| p95 | ratio p50 | target p50 <= 10 ms | runs |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
        ]
        for row in result["rows"]:
            met = "met" if row["ours_p50"] <= TARGET_P50_MS else "MISSED"
            target = met if row["state"] == "current" else ""
            lines.append(
                f"| {row['state']} | {row['unindexed']:,} | {_ms(row['ours_p50'])} | "
                f"{_ms(row['ours_p25'])}-{_ms(row['ours_p75'])} | {_ms(row['ours_p95'])} | "
                f"{_ms(row['raw_p50'])} | {_ms(row['raw_p95'])} | "
                f"{row['ours_p50'] / row['raw_p50']:.2f}x | {target} | {int(row['runs'])} |"
            )
        lines += [
            "",
            "One session of N generated chat turns, every one holding the three query words "
            '(`message_search(query="blue jacket Lisbon", k=10)`, index current):',
            "",
            "| messages | message_search p50 (ms) | p95 | raw SQL p50 (ms) | p95 | ratio p50 "
            "| runs |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for point in result["growing"]:
            lines.append(
                f"| {point['messages']:,} | {_ms(point['ours_p50'])} | {_ms(point['ours_p95'])} "
                f"| {_ms(point['raw_p50'])} | {_ms(point['raw_p95'])} | "
                f"{point['ours_p50'] / point['raw_p50']:.2f}x | {int(point['runs'])} |"
            )
        lines.append("")
    return "\n".join(lines)
