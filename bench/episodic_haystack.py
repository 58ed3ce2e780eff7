"""``message_search`` in a namespace grown to a million messages: latency and evidence found.

    .venv/bin/python bench/episodic_haystack.py [--sizes 10000,100000,1000000] [--runs 200]
                                                [--keep NAMESPACE] [--reuse NAMESPACE]

The needles are the conversational set's ten conversations (``bench/convset.py``, about 5,800
messages in 260 sessions, with every question's evidence turns). The haystack is filler chat in
the same namespace: sessions of 500 messages whose words are drawn from the set's own word
counts (so a question's words are as common in the filler as in the set, and the frequent ones
have hundreds of thousands of postings at a million messages), written through
``message_add_many`` and indexed by the shipped ``message_index`` jobs, as an application would.

At each size every question is asked in turn (``k=10``), beside the raw-SQL baseline of
``bench/episodic_latency.py`` (term-frequency ranking of the blind index and one fetch of the
rows), alternating so that machine drift hits both. Reported: p50/p95 of both, the first search
after the namespace's kept statistics expire (cold: ``bm25`` caches cleared), and evidence
recall@10 of the answerable questions, against the same questions in the needles alone.
Progress goes to stderr; the table to stdout. PostgreSQL (embedded unless ``DATABASE_URL``)
or SQLite, by ``DATABASE_URL``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

FILLER_SESSION = 500  # messages per filler session
BATCH = 500  # messages per message_add_many call
WORDS = re.compile(r"[\w']+")


def progress(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


def filler_words(texts: list[str]) -> tuple[list[str], list[int]]:
    counts = Counter(w for text in texts for w in WORDS.findall(text))
    words = sorted(counts)
    return words, [counts[w] for w in words]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=200, help="timed searches per size and side")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--filler",
        choices=("conversations", "words"),
        default="conversations",
        help="conversations: other users' conversations of the same generator (other seeds: "
        "other names, places and things, the same kinds of talk); words: word salad drawn from "
        "the needles' own word counts (every needle word grows common: the hardest case)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the namespace (print its name)")
    parser.add_argument("--reuse", default="", help="grow this kept namespace instead of a new one")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import override_settings

    from bench import convset
    from bench.episodic_latency import RawEpisodic, _analyze
    from bench.recall import percentiles
    from ttmemory import jobs, selectors, services
    from ttmemory.longterm import blind, episodes
    from ttmemory.models import MemorySession, Message

    call_command("migrate", verbosity=0)
    data = convset.build(users=10, sessions=26)
    namespace = args.reuse or f"bench-haystack-{uuid.uuid4().hex[:8]}"
    questions = [q for c in data.conversations for q in c.questions]
    where: dict[str, tuple[int, int]] = {}  # turn id -> (session pk, seq)
    rng = random.Random(args.seed)
    words, weights = filler_words([t.text for c in data.conversations for t in c.turns])
    raw = RawEpisodic()
    rows: list[dict[str, Any]] = []
    said = 0
    others: list[convset.Turn] = []
    generation = [args.seed]

    def next_filler() -> dict[str, str]:
        nonlocal said
        said += 1
        if args.filler == "words":
            text = " ".join(rng.choices(words, weights, k=rng.randint(6, 30)))
            return {"role": "user" if said % 2 else "assistant", "content": text}
        if not others:  # ten more conversations of other users, from the next seed
            generation[0] += 1000
            more = convset.build(seed=generation[0], users=10, sessions=26)
            others.extend(reversed([t for c in more.conversations for t in c.turns]))
        turn = others.pop()
        return {"role": turn.role, "content": turn.text}

    def count() -> int:
        return Message.objects.filter(session__namespace=namespace).count()

    def seqs_of(session: MemorySession, turns: list[convset.Turn]) -> None:
        added = services.message_add_many(
            session=session, messages=[{"role": t.role, "content": t.text} for t in turns]
        )
        for turn, message in zip(turns, added, strict=True):
            where[turn.id] = (session.pk, message.seq)

    def found(hits: Any) -> set[tuple[int, int]]:
        return {(h.session.pk, h.seq) for h in hits}

    def measure(size: int) -> dict[str, Any]:
        jobs.drain(3600)
        _analyze()
        terms = [blind.query_terms(q.text, namespace=namespace) for q in questions]
        recalled = []
        for q in (q for q in questions if q.evidence):
            hits = selectors.message_search(namespace=namespace, query=q.text, k=10)
            wanted = {where[t] for t in q.evidence}
            recalled.append(len(wanted & found(hits)) / len(wanted))
        n = len(questions)
        cold = []
        for i in range(min(20, n)):
            episodes._stats.clear()  # the namespace's N and lengths, kept 30 s
            episodes._frequent.clear()  # frequent words' counts, kept 30 s
            started = time.perf_counter_ns()
            selectors.message_search(namespace=namespace, query=questions[i].text, k=10)
            cold.append((time.perf_counter_ns() - started) / 1e6)
        samples: dict[str, list[float]] = {"ours": [], "raw": []}
        for i in range(args.runs):
            asked = questions[i % n].text
            started = time.perf_counter_ns()
            selectors.message_search(namespace=namespace, query=asked, k=10)
            samples["ours"].append((time.perf_counter_ns() - started) / 1e6)
            started = time.perf_counter_ns()
            raw.search(namespace, terms[i % n], 10, 2)
            samples["raw"].append((time.perf_counter_ns() - started) / 1e6)
        ours_p50, ours_p95 = percentiles(samples["ours"])
        raw_p50, raw_p95 = percentiles(samples["raw"])
        cold_p50, _ = percentiles(cold)
        row = {
            "messages": size,
            "ours_p50": ours_p50,
            "ours_p95": ours_p95,
            "raw_p50": raw_p50,
            "raw_p95": raw_p95,
            "cold_p50": cold_p50,
            "recall10": sum(recalled) / len(recalled),
        }
        progress(
            f"{size:,} messages: p50 {ours_p50:.2f} ms (raw {raw_p50:.2f}), p95 "
            f"{ours_p95:.2f}, cold {cold_p50:.1f} ms, evidence recall@10 {row['recall10']:.3f}"
        )
        return row

    try:
        quiet = {
            **settings.TTMEMORY,
            "LEARN_EVERY": 0,
            "LEARN_IDLE_SECONDS": 0,
            "SUMMARISE_AT_TOKENS": 0,
        }
        with override_settings(DEBUG=False, TTMEMORY=quiet):  # filler teaches nothing
            started = time.perf_counter()
            if args.reuse:
                sys.exit("--reuse: not supported yet (the needles' seqs are not kept)")
            progress(f"loading the needles: {data.describe()}")
            for conv in data.conversations:
                by_session: dict[int, list[convset.Turn]] = defaultdict(list)
                for turn in conv.turns:
                    by_session[turn.session].append(turn)
                for number, turns in sorted(by_session.items()):
                    session = services.session_open(
                        namespace=namespace, key=f"{conv.user}-{number}"
                    )
                    seqs_of(session, turns)
            have = count()
            rows.append({**measure(have), "needles": True})
            filler = 0
            for size in sizes:
                while have < size:
                    session = services.session_open(namespace=namespace, key=f"filler-{filler}")
                    filler += 1
                    todo = min(FILLER_SESSION, size - have)
                    for start in range(0, todo, BATCH):
                        batch = [next_filler() for _ in range(min(BATCH, todo - start))]
                        services.message_add_many(session=session, messages=batch)
                    have += todo
                    if filler % 20 == 0:
                        jobs.drain(3600)
                        rate = (have) / (time.perf_counter() - started)
                        progress(f"{have:,} of {size:,} messages ({rate:,.0f}/s, indexed)")
                rows.append(measure(have))
    finally:
        raw.close()
        if not args.keep:
            progress("deleting the namespace")
            jobs.drain(600)
            MemorySession.objects.filter(namespace=namespace).delete()
        else:
            progress(f"kept: {namespace}")

    print(
        f"message_search, {connection.vendor}, {len(questions)} questions of the conversational "
        f"set, k=10, {args.runs} timed searches per row"
    )
    print()
    print(
        "| messages | p50 (ms) | p95 (ms) | raw SQL p50 (ms) | cold first search p50 (ms) "
        "| evidence recall@10 |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        label = f"{r['messages']:,}" + (" (needles only)" if r.get("needles") else "")
        print(
            f"| {label} | {r['ours_p50']:.2f} | {r['ours_p95']:.2f} | {r['raw_p50']:.2f} "
            f"| {r['cold_p50']:.1f} | {r['recall10']:.3f} |"
        )


if __name__ == "__main__":
    main()
