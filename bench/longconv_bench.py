"""Evidence recall on long conversations (``bench/longconv.py``): message_search and fact_recall.

``python bench/longconv_bench.py --embedders hash,wordllama`` loads every user's sessions into
the embedded PostgreSQL (``bench.settings``; ``DATABASE_URL`` for another), each turn as a
message of its session (``message_add_many``) and as a fact (``fact_remember``, kind
``turn``), asks every question with the shipped settings, and prints a markdown table:
recall@10 (the share of a question's evidence turns in the first 10), recall@5, MRR and the
median (p50) and p95 latency of the call, per wording (``overlap`` shares a word with the
evidence, ``paraphrase`` none). Rows below the shipped ones vary one weight to show what it
does here; they are reported, never used to choose anything (this set tunes nothing).
``--json FILE`` keeps the raw figures. Every row is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django

django.setup()

from django.test.utils import override_settings  # noqa: E402

from bench import longconv  # noqa: E402
from bench.recall import PrimedEmbedder, configured, environment  # noqa: E402
from ttmemory import jobs, selectors, services  # noqa: E402
from ttmemory.backends.embedders import get_embedder  # noqa: E402
from ttmemory.conf import app_settings  # noqa: E402
from ttmemory.models import Fact, FactTerm, MemorySession  # noqa: E402
from ttmemory.services.episodes import messages_reembed  # noqa: E402

EMBEDDERS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "hash": ("HashEmbedder (default, no model)", None),
    "wordllama": (
        "WordLlamaEmbedder (l2_supercat, 256 dimensions, no torch)",
        {"BACKEND": "ttmemory.backends.embedders.wordllama.WordLlamaEmbedder"},
    ),
    "minilm": (
        "SentenceTransformerEmbedder (all-MiniLM-L6-v2)",
        {
            "BACKEND": "ttmemory.backends.embedders.sentence_transformers."
            + "SentenceTransformerEmbedder"
        },
    ),
}
#: Report-only variations (one setting each, the rest shipped).
MESSAGE_WEIGHTS = (0.1, 0.2, 0.3, 0.5)
FACT_WEIGHTS = (0.1, 0.3, 0.5, 0.8)
K = 10


def load(data: longconv.LongSet, prefix: str) -> dict[str, Any]:
    embedder = get_embedder()
    if isinstance(embedder, PrimedEmbedder):
        embedder.prime(
            [t.text for c in data.conversations for t in c.turns]
            + [q.text for c in data.conversations for q in c.questions]
        )
    messages: dict[str, tuple[int, int]] = {}
    facts: dict[str, int] = {}
    for conv in data.conversations:
        by_session: dict[int, list[longconv.Turn]] = {}
        for turn in conv.turns:
            by_session.setdefault(turn.session, []).append(turn)
            fact = services.fact_remember(
                namespace=f"{prefix}f-{conv.user}", text=turn.text, kind="turn"
            )
            facts[turn.id] = fact.pk
        for number, turns in sorted(by_session.items()):
            session = services.session_open(
                namespace=f"{prefix}m-{conv.user}", key=f"session-{number}"
            )
            rows = services.message_add_many(
                session=session, messages=[{"role": t.role, "content": t.text} for t in turns]
            )
            for turn, row in zip(turns, rows, strict=True):
                messages[turn.id] = (session.pk, row.seq)
        print(f"  loaded {conv.user}", file=sys.stderr, flush=True)
    # Message vectors also where the shipped weight is 0 (the weight rows need them).
    with override_settings(
        TTMEMORY={**app_settings.user_settings, "MESSAGE_SEARCH_VECTOR_WEIGHT": 1.0}
    ):
        messages_reembed()
    return {"messages": messages, "facts": facts}


Ranker = Callable[[str, str], list[Any]]


def measure(data: longconv.LongSet, rank: Ranker, store: str, keys: dict[str, Any]) -> dict:
    """recall@5/10, MRR, p50/p95 ms of ``rank(namespace, question)`` per wording and overall."""
    rows: list[tuple[str, float, float, float, float]] = []
    for conv in data.conversations:
        for q in conv.questions:
            evidence = {keys[store][t] for t in q.evidence}
            started = time.perf_counter()
            ranked = rank(conv.user, q.text)
            ms = (time.perf_counter() - started) * 1000
            first = next((i for i, key in enumerate(ranked, 1) if key in evidence), None)
            rows.append(
                (
                    q.wording,
                    len(evidence & set(ranked[:10])) / len(evidence),
                    len(evidence & set(ranked[:5])) / len(evidence),
                    1.0 / first if first else 0.0,
                    ms,
                )
            )
    out: dict[str, Any] = {}
    for wording in (*longconv.WORDINGS, "all"):
        mine = [r for r in rows if wording in ("all", r[0])]
        times = sorted(r[4] for r in mine)
        out[wording] = {
            "r10": statistics.fmean(r[1] for r in mine),
            "r5": statistics.fmean(r[2] for r in mine),
            "mrr": statistics.fmean(r[3] for r in mine),
            "p50": statistics.median(times),
            "p95": times[int(0.95 * (len(times) - 1))],
            "n": len(mine),
        }
    return out


def run(name: str, data: longconv.LongSet) -> dict[str, Any]:
    label, inner = EMBEDDERS[name]
    primed = (
        {"BACKEND": f"{PrimedEmbedder.__module__}.PrimedEmbedder", "OPTIONS": {"inner": inner}}
        if inner
        else None
    )
    prefix = f"bench-long-{uuid.uuid4().hex[:6]}-"
    rows: dict[str, Any] = {}
    with configured(primed):
        try:
            keys = load(data, prefix)
            embedder = get_embedder()

            def search(user: str, text: str) -> list[Any]:
                hits = selectors.message_search(namespace=f"{prefix}m-{user}", query=text, k=K)
                return [(h.session.pk, h.seq) for h in hits]

            def recall(user: str, text: str) -> list[Any]:
                found = selectors.fact_recall(namespace=f"{prefix}f-{user}", query=text, k=K)
                return [fact.pk for fact in found.facts]

            search(data.conversations[0].user, "warm up")  # first-call costs out of the figures
            recall(data.conversations[0].user, "warm up")
            shipped_m = embedder.message_search_vector_weight
            shipped_f = embedder.recall_vector_weight
            rows[f"message_search, shipped (vector weight {shipped_m})"] = measure(
                data, search, "messages", keys
            )
            rows[f"fact_recall, shipped (vector weight {shipped_f})"] = measure(
                data, recall, "facts", keys
            )
            for weight in MESSAGE_WEIGHTS:
                with configured(primed, MESSAGE_SEARCH_VECTOR_WEIGHT=weight):
                    rows[f"message_search, vector weight {weight}"] = measure(
                        data, search, "messages", keys
                    )
            for weight in FACT_WEIGHTS:
                with configured(primed, RECALL_VECTOR_WEIGHT=weight):
                    rows[f"fact_recall, vector weight {weight}"] = measure(
                        data, recall, "facts", keys
                    )
        finally:
            jobs.drain(60)  # background index jobs still writing these rows
            MemorySession.objects.filter(namespace__startswith=prefix).delete()
            FactTerm.objects.filter(namespace__startswith=prefix).delete()
            Fact.objects.filter(namespace__startswith=prefix).delete()
    return {"embedder": label, "rows": rows}


def render(data: longconv.LongSet, results: Sequence[dict[str, Any]], command: str) -> str:
    env = environment()
    lines = [
        "## Evidence recall on long conversations",
        "",
        f"Generated by `{command}` (set: `bench/longconv.py`, {data.describe()}). "
        f"{env['database']}, Python {env['python']}, {env['cpus']} CPUs, {env['when']}. "
        "Reported only: nothing was chosen on this set. Recall@10 (recall@5, MRR) per wording; "
        "p50 / p95 of the call in ms.",
        "",
    ]
    for result in results:
        lines += [
            f"### {result['embedder']}",
            "",
            "| retriever | overlap | paraphrase | all | p50 ms | p95 ms |",
            "|---|---|---|---|---:|---:|",
        ]
        for row, figures in result["rows"].items():
            cells = [
                f"**{figures[w]['r10']:.3f}** ({figures[w]['r5']:.2f}, {figures[w]['mrr']:.2f})"
                for w in (*longconv.WORDINGS, "all")
            ]
            lines.append(
                f"| {row} | {' | '.join(cells)} | {figures['all']['p50']:.1f} | "
                f"{figures['all']['p95']:.1f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", default="hash,wordllama")
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    data = longconv.build(users=args.users, sessions=args.sessions)
    results = [run(name, data) for name in args.embedders.split(",") if name]
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    command = f"python bench/longconv_bench.py --embedders {args.embedders}"
    print(render(data, results, command))


if __name__ == "__main__":
    main()
