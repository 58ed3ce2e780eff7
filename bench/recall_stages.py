"""Where a ``fact_recall``'s time goes: wall time per stage, in process.

    .venv/bin/python bench/recall_stages.py [--facts 1000] [--recalls 300] [--mode hybrid]
        [--without budget,expansion]

Loads the recall benchmark's evaluation-set facts (``bench.recall.corpus``) into a namespace of
a database of its own (PostgreSQL: created and dropped; SQLite with ``DATABASE_URL``: the
file's), warms recall up (60 recalls: the vector cache reads its matrix after
``READ_AFTER_RECALLS``), then times ``--recalls`` conversational questions (k=10) with a
``perf_counter`` around each stage: the question's expansion and terms, its embedding, the
candidate statement (its text, its execution with the rows read, and the numpy shortlist that
precedes it), the fusion steps, and the hits read. Prints the p50 of whole recalls and each
stage's mean per recall; what is left is ``fact_recall``'s own code and the telemetry around
it. Unlike a profiler's, these timers add a microsecond or two per stage, so the stages add up
to the whole; wall time on a busy machine includes waiting for a core.

``--without`` switches off what two features add to a recall, to see what they cost:
``budget``, the postings budget of namespaces above ``bm25.BUDGET_ABOVE_FACTS`` (issue 36: the
cost of a repetitive vocabulary); ``expansion``, the question's slot words and synonyms
(``asking.expanded``, issue 35). A stage a checkout does not have is not timed, so the script
also runs in an older checkout (copied in) for a before/after comparison.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

#: (module path, attribute, label): the stages timed, in the order a recall reaches them.
STAGES = (
    ("ttmemory.selectors.facts", "asking.expanded", "question expansion (asking.expanded)"),
    ("ttmemory.selectors.facts", "blind.query_hashes", "question terms (blind.query_hashes)"),
    ("ttmemory.selectors.facts", "embed_for", "question embedding"),
    ("ttmemory.longterm.candidates", "vector_cache.shortlist", "  vector shortlist (numpy)"),
    ("ttmemory.longterm.candidates", "candidate_sql.statement", "  statement text"),
    ("ttmemory.longterm.candidates", "_read", "  candidate statement: run and read"),
    ("ttmemory.selectors.facts", "candidates.candidates", "candidates (all of the above 3)"),
    ("ttmemory.selectors.facts", "fusion.fuse", "fusion.fuse"),
    ("ttmemory.selectors.facts", "fusion.expand", "fusion.expand (neighbour context)"),
    ("ttmemory.selectors.facts", "fusion.cut", "fusion.cut"),
    ("ttmemory.selectors.facts", "fusion.unpadded", "fusion.unpadded (evidence rule)"),
    ("ttmemory.selectors.facts", "_hits_by_id", "hits read (second statement, objects)"),
    ("ttmemory.selectors.facts", "recall_counts.count_recalled", "recall counts (queued)"),
)


def _timed(spent: dict[str, float], label: str, function: Callable[..., Any]) -> Any:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - started

    return timed


def instrument(spent: dict[str, float]) -> None:
    """Wrap each stage of ``STAGES`` where the recall code looks it up."""
    import importlib

    for module_path, attribute, label in STAGES:
        owner: Any = importlib.import_module(module_path)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is not None and hasattr(owner, name):  # an older checkout may lack it
            setattr(owner, name, _timed(spent, label, getattr(owner, name)))


@contextmanager
def switched_off(features: set[str]) -> Iterator[None]:
    """No postings budget (``budget``: ``bm25.uncapped``) and no question expansion
    (``expansion``), inside the block."""
    with ExitStack() as stack:
        if "budget" in features:
            from ttmemory.longterm import bm25

            stack.enter_context(bm25.uncapped())
        if "expansion" in features:
            from ttmemory.longterm import asking

            def as_asked(question: str, *, language: str | None = None) -> str:
                return question

            before = asking.expanded
            asking.expanded = as_asked
            stack.callback(setattr, asking, "expanded", before)
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--recalls", type=int, default=300)
    parser.add_argument("--mode", choices=("hybrid", "keyword"), default="hybrid")
    parser.add_argument("--without", default="", help="comma-separated: budget, expansion")
    args = parser.parse_args()
    features = {part.strip() for part in args.without.split(",") if part.strip()}
    if features - {"budget", "expansion"}:
        parser.error(f"--without: unknown {sorted(features - {'budget', 'expansion'})}")

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench import recall as bench
    from ttmemory import selectors

    spent: dict[str, float] = {}
    instrument(spent)
    with bench.dedicated_database("ttmemory_bench_stages") as created:
        if not created:
            call_command("migrate", verbosity=0)
        texts, questions = bench.corpus(args.facts)
        questions = bench.conversational(questions)
        namespace = f"{bench.PREFIX}stages-{uuid.uuid4().hex[:6]}"
        print(f"loading {args.facts:,} facts ({connection.vendor})", file=sys.stderr)
        bench.bulk_load(namespace, texts)
        bench._analyze()
        keyword_only = bench.configured(
            {"BACKEND": "bench.recall.UnavailableEmbedder"}, EMBEDDER_BREAKER_SECONDS=3600.0
        )
        try:
            with (
                bench.configured(),
                keyword_only if args.mode == "keyword" else nullcontext(),
                switched_off(features),
            ):
                asked = [questions[i % len(questions)] for i in range(args.recalls)]
                for question in asked[:60]:
                    selectors.fact_recall(namespace=namespace, query=question, k=10)
                spent.clear()
                walls = []
                for question in asked:
                    started = time.perf_counter()
                    result = selectors.fact_recall(namespace=namespace, query=question, k=10)
                    walls.append(time.perf_counter() - started)
                assert result.mode == args.mode, result.mode
        finally:
            bench.delete_namespaces(namespace)
    n = len(walls)
    print(
        f"{args.mode} fact_recall, {args.facts:,} facts, {connection.vendor}, k=10"
        f"{', without ' + args.without if features else ''}: "
        f"p50 {statistics.median(walls) * 1e3:.2f} ms, mean {statistics.fmean(walls) * 1e3:.2f} "
        f"ms over {n} recalls"
    )
    print("| stage | mean us per recall |\n|---|---:|")
    for _, _, label in STAGES:
        if label in spent:
            print(f"| {label.strip()} | {spent[label] / n * 1e6:,.0f} |")
    # The stages not indented are the recall's own steps, one after the other.
    counted = sum(seconds for label, seconds in spent.items() if not label.startswith("  "))
    rest = (sum(walls) - counted) / n * 1e6
    print(f"| the rest (fact_recall's own code, telemetry) | {rest:,.0f} |")


if __name__ == "__main__":
    main()
