"""Fusion study on the conversational set, in memory: minutes instead of the DB run's hour.

``python bench/fusion_study.py --embedders hash,wordllama`` (and ``--embedders minilm`` from
``.venv-embed``, which has torch). Each conversation's turns become "facts" (deduplicated by
normalised text like ``fact_remember``'s upsert, ids in the order first said), scored exactly
as ``fact_recall`` scores them: BM25 (k1 1.2, b 0.75, the project's ``normalise_terms``)
over the best 100, cosine over the best 100, the min-max blend, then the neighbour context of
``ttmemory.longterm.fusion`` (the same ``expand``/``seeds`` code), its feedback query (the same
``feedback_seeds``/``feedback``; ``related`` here is ``fact_related`` in memory) and the
relative cut. Its BM25 row equals the database run's (``ttmemory_bench_conversations``) to
three decimals.

Every choice is made on the ``tune`` half (5-fold cross-validation by conversation) and
reported on the ``held-out`` half: fusion family (min-max, z-score, weighted RRF), vector
weight, neighbour window and weight, the feedback weight (``RECALL_FEEDBACK_WEIGHT``) and the
relative cut (``RECALL_MIN_RELATIVE``). The feedback placement (weight x protected top,
``fusion.protect``, x a coverage gate) is chosen by the rule docs/benchmarks.md wrote down
before measuring (``placement``): every category at or above max(BM25, vector only) and recall@5
and MRR kept on tune, then the best recall@10.
"""

from __future__ import annotations

import argparse
import base64
import math
import os
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django

django.setup()

import numpy as np  # noqa: E402

from bench import convset  # noqa: E402
from ttmemory.backends.embedders.base import Embedder  # noqa: E402
from ttmemory.longterm import bm25, fusion  # noqa: E402
from ttmemory.text import normalise_terms, normalise_text  # noqa: E402

POOL, FOLDS = 100, 5
WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
CONTEXTS = ((0, 0.0), (1, 0.25), (1, 0.5), (2, 0.1), (2, 0.25), (2, 0.5), (2, 0.75), (3, 0.5))
RELATIVE = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6)
CATS = (*convset.CATEGORIES, "all")
RERANK_DEPTH, RERANK_WEIGHTS = 30, (0.0, 0.1, 0.25, 0.5, 1.0)
RESERVED = (0, 1, 2, 3)
GAINS = (0.0, -0.4, -0.2, 0.2, 0.4)
FEEDBACK = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0)
#: The feedback placement candidates (docs/benchmarks.md: the rule, fixed before measuring):
#: weight x protected top (``fusion.protect``) x coverage gate (None: no gate).
PLACEMENT = tuple(
    (fb, top, gate)
    for gate in (None, 0.5, 0.75)
    for top in (0, 3, 5)
    for fb in (0.25, 0.5, 0.75, 1.0)
)
#: The placement rule's tolerances: recall@5 and MRR at most this much below the ranking
#: without feedback on tune; ties in recall@10 within ``TIE``.
TOP_TOLERANCE, TIE = 0.003, 0.001
#: A feedback weight above 0 ships only when it beats 0 on tune by more than this (one question
#: or two of the 448 answerable tune questions).
MARGIN = 0.003
FLOOR_BUDGETS = (0.01, 0.02, 0.05)


class Index:
    """BM25 over one conversation's facts, as recall.keyword_scores computes it."""

    def __init__(self, docs: Sequence[str]) -> None:
        self.docs = [Counter(normalise_terms(d)) for d in docs]
        self.length = [sum(c.values()) for c in self.docs]
        self.avg = (sum(self.length) / len(self.length)) or 1.0
        self.total = len(docs)
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, counts in enumerate(self.docs):
            for term, tf in counts.items():
                self.postings[term].append((i, tf))

    def scores(self, query: str) -> dict[int, float]:
        return self.term_scores(normalise_terms(query))

    def term_scores(self, terms: Sequence[str]) -> dict[int, float]:
        out: dict[int, float] = defaultdict(float)
        for term in dict.fromkeys(terms):
            posting = self.postings.get(term, [])
            n = len(posting)
            idf = bm25.idf(self.total, n)
            for i, tf in posting:
                out[i] += bm25.term_score(tf, self.length[i], weight=idf, avgdl=self.avg)
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))[:POOL])


def embedder(name: str) -> Embedder:
    if name == "hash":
        from ttmemory.backends.embedders.hashing import HashEmbedder

        # A fixed key: the figures do not depend on the checkout's blind-index key (a random
        # key per checkout moved recall@10 by up to 0.01 through bucket collisions).
        return HashEmbedder(key=base64.b64encode(b"ttmemory fusion study hash key!!").decode())
    if name == "wordllama":
        from ttmemory.backends.embedders.wordllama import WordLlamaEmbedder

        return WordLlamaEmbedder()
    from ttmemory.backends.embedders.sentence_transformers import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def dated(turn: convset.Turn) -> str:
    """A turn as indexed with its date ("dates in the indexed text")."""
    return f"{turn.date:%A %d %B %Y}: {turn.text}"


def load(name: str, *, dates: bool = False) -> tuple[list[dict[str, Any]], Embedder]:
    data = convset.build(seed=21)
    model = embedder(name)

    def shown(turn: convset.Turn) -> str:
        return dated(turn) if dates else turn.text

    texts = list(
        dict.fromkeys(
            [shown(t) for c in data.conversations for t in c.turns]
            + [q.text for c in data.conversations for q in c.questions]
        )
    )
    row = {t: i for i, t in enumerate(texts)}
    vectors = np.asarray(model.embed(texts), dtype=np.float32)
    items = []
    for conv in data.conversations:
        facts: list[str] = []
        position: dict[str, int] = {}
        fact_of: dict[str, int] = {}
        for turn in conv.turns:
            key = normalise_text(shown(turn))
            if key not in position:
                position[key] = len(facts)
                facts.append(shown(turn))
            fact_of[turn.id] = position[key]
        index = Index(facts)
        matrix = vectors[[row[t] for t in facts]]
        for q in conv.questions:
            sims = matrix @ vectors[row[q.text]]
            top = np.argsort(-sims)[:POOL]
            items.append(
                {
                    "user": conv.user,
                    "split": conv.split,
                    "cat": q.category,
                    "kw": index.scores(q.text),
                    "vec": {int(i): float(sims[i]) for i in top},
                    "ev": {fact_of[t] for t in q.evidence},
                    "n": len(facts),
                    "index": index,
                    "words": list(dict.fromkeys(normalise_terms(q.text))),
                }
            )
    return items, model


def ranked(scores: dict[int, float]) -> list[int]:
    return [k for k, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def _z(scores: dict[int, float]) -> dict[int, float]:
    if len(scores) < 2:
        return dict.fromkeys(scores, 1.0)
    mean, spread = statistics.fmean(scores.values()), statistics.pstdev(scores.values()) or 1.0
    low = min((s - mean) / spread for s in scores.values())
    return {k: (s - mean) / spread - low for k, s in scores.items()}


def _rrf(scores: dict[int, float]) -> dict[int, float]:
    return {k: 1.0 / (60 + i) for i, k in enumerate(ranked(scores), 1)}


def related(item: dict[str, Any], blended: dict[int, float]) -> dict[int, float]:
    """``fusion.fact_related`` in memory: BM25 of the feedback seeds' words the query did not
    use, over the best ``POOL`` facts, the seeds left out (``fusion.feedback`` keeps the
    candidates' scores, the only ones ``fact_related`` computes)."""
    index: Index = item["index"]
    seeds = fusion.feedback_seeds(blended)
    asked = set(item["words"])
    terms = [t for s in seeds for t in index.docs[s] if t not in asked]
    found = index.term_scores(terms) if terms else {}
    for seed in seeds:
        found.pop(seed, None)
    return found


def score(
    item: dict[str, Any],
    family: str,
    w: float,
    window: int,
    nw: float,
    fb: float = 0.0,
    top: int = 0,
    gate: float | None = None,
) -> dict[int, float]:
    """The ranking fact_recall would produce (family "minmax" is the shipped blend; ``fb``
    the feedback weight, ``top`` its protected top, ``fusion.protect``; ``gate``: feedback
    only when the best blended fact's coverage of the question is below it)."""
    kw, vec = item["kw"], item["vec"]
    if family == "minmax":
        fused = fusion.fuse(kw, vec, vector_weight=w)
    else:
        norm = _z if family == "z" else _rrf
        a, b = norm(kw), norm(vec)
        fused = {k: w * b.get(k, 0.0) + (1 - w) * a.get(k, 0.0) for k in set(a) | set(b)}
    blended = fused
    if window and nw:
        n = item["n"]
        runs = {
            s: list(range(max(0, s - 2 * window), min(n, s + 2 * window + 1)))
            for s in fusion.seeds(fused, k=10)
        }
        fused = fusion.expand(fused, runs, window=window, weight=nw)
    if fb and (gate is None or coverage(item, fusion.feedback_seeds(blended)[0]) < gate):
        before = fused
        fused = fusion.feedback(fused, blended, related(item, blended), weight=fb)
        fused = fusion.protect(fused, before, top=top)
    return fused


def metrics(rank: list[int], ev: set[int]) -> dict[str, float]:
    out = {f"r{k}": len(ev & set(rank[:k])) / len(ev) for k in (5, 10, 50)}
    first = next((i for i, key in enumerate(rank, 1) if key in ev), None)
    out["mrr"] = 1.0 / first if first else 0.0
    dcg = sum(1 / math.log2(i + 1) for i, key in enumerate(rank[:10], 1) if key in ev)
    out["ndcg10"] = dcg / sum(1 / math.log2(i + 1) for i in range(1, min(len(ev), 10) + 1))
    return out


def table(items: list[dict[str, Any]], rank: Callable[[dict[str, Any]], list[int]]) -> dict:
    out = {}
    for cat in CATS:
        chosen = [a for a in items if a["ev"] and cat in ("all", a["cat"])]
        rows = [metrics(rank(a), a["ev"]) for a in chosen]
        out[cat] = {m: statistics.fmean(r[m] for r in rows) for m in rows[0]}
    return out


Config = tuple[str, float, int, float, float, int]  # family, w, window, nw, feedback, top


def choose(tune: list[dict[str, Any]], fb: float, top: int) -> tuple[Config, float]:
    """The configuration best on tune (feedback weight ``fb``, protected top ``top``), and its
    5-fold cross-validated recall@10."""
    answerable = [a for a in tune if a["ev"]]
    configs = [
        (family, w, window, nw, fb, top)
        for family in ("minmax", "z", "rrf")
        for w in WEIGHTS
        for window, nw in CONTEXTS
        if family == "minmax" or (window, nw) in ((0, 0.0), (2, 0.5))
    ]
    r10 = {c: [metrics(ranked(score(a, *c)), a["ev"])["r10"] for a in answerable] for c in configs}
    users = sorted({a["user"] for a in answerable})
    folds = [set(users[i::FOLDS]) for i in range(FOLDS)]

    def mean(c: Config, keep: Callable[[dict[str, Any]], bool]) -> float:
        values = [v for a, v in zip(answerable, r10[c], strict=True) if keep(a)]
        return statistics.fmean(values)

    cv = []
    for fold in folds:

        def outside(a: dict[str, Any], fold: set[str] = fold) -> bool:
            return a["user"] not in fold

        def inside(a: dict[str, Any], fold: set[str] = fold) -> bool:
            return a["user"] in fold

        best = max(configs, key=lambda c: (mean(c, outside), -c[1]))
        cv.append(mean(best, inside))
    best = max(configs, key=lambda c: (mean(c, lambda a: True), -c[1], -c[3]))
    return best, statistics.fmean(cv)


def coverage(item: dict[str, Any], key: int) -> float:
    """Share of the query's words (weighted by idf) that fact ``key`` contains."""
    index: Index = item["index"]
    weights = {
        w: bm25.idf(index.total, n)
        for w in item["words"]
        for n in (len(index.postings.get(w, [])),)
    }
    total = sum(weights.values()) or 1.0
    return sum(v for w, v in weights.items() if w in index.docs[key]) / total


def rerank(item: dict[str, Any], scores: dict[int, float], weight: float) -> list[int]:
    """Second stage: the best ``RERANK_DEPTH`` re-scored by score / best + weight x coverage."""
    order = ranked(scores)
    if not order or not weight:
        return order
    top, best = order[:RERANK_DEPTH], scores[order[0]] or 1.0
    again = {k: scores[k] / best + weight * coverage(item, k) for k in top}
    return ranked(again) + order[RERANK_DEPTH:]


def reserve(main: list[int], other: list[int], slots: int, k: int = 10) -> list[int]:
    """``main``'s best ``k - slots``, then the best ``slots`` of ``other`` not among them."""
    top = main[: k - slots]
    extra = [key for key in other if key not in top][:slots]
    return top + extra + [key for key in main if key not in top and key not in extra]


def keyword_strength(item: dict[str, Any]) -> float:
    """The best BM25 score over the most a fact could score (every query word once, average
    length): how well the keywords alone answer, comparable across queries."""
    index: Index = item["index"]
    most = sum(
        bm25.idf(index.total, n) for w in item["words"] for n in (len(index.postings.get(w, [])),)
    )
    return max(item["kw"].values(), default=0.0) / (most or 1.0)


def query_weighted(item: dict[str, Any], shipped: Config, gain: float) -> list[int]:
    """Query-dependent weighting: the vector weight moves by ``-gain`` x (keyword strength -
    0.5), so a query whose words a fact matches well leans on keywords (gain > 0)."""
    w = min(1.0, max(0.0, shipped[1] - gain * (keyword_strength(item) - 0.5)))
    return ranked(score(item, shipped[0], round(w, 3), *shipped[2:]))


def best_cosine(item: dict[str, Any]) -> float:
    """The absolute signal RECALL_MIN_SIMILARITY gates on: the best candidate's cosine."""
    return max(item["vec"].values(), default=0.0)


def cross_validated(
    tune: list[dict[str, Any]], options: Sequence[Any], rank: Callable[..., list[int]]
) -> float:
    """5-fold cross-validated recall@10 (by conversation) of picking among ``options``."""
    answerable = [a for a in tune if a["ev"]]
    r10 = {o: [metrics(rank(a, o), a["ev"])["r10"] for a in answerable] for o in options}
    users = sorted({a["user"] for a in answerable})
    cv = []
    for fold in (set(users[i::FOLDS]) for i in range(FOLDS)):
        best = max(
            options,
            key=lambda o: (
                statistics.fmean(
                    v for a, v in zip(answerable, r10[o], strict=True) if a["user"] not in fold
                ),
                -options.index(o),
            ),
        )
        cv.append(
            statistics.fmean(
                v for a, v in zip(answerable, r10[best], strict=True) if a["user"] in fold
            )
        )
    return statistics.fmean(cv)


def pick(
    tune: list[dict[str, Any]], options: Sequence[Any], rank: Callable[..., list[int]]
) -> tuple[Any, dict[Any, float]]:
    """The option with the best mean recall@10 on tune's answerable questions (ties: first)."""
    answerable = [a for a in tune if a["ev"]]
    means = {
        o: statistics.fmean(metrics(rank(a, o), a["ev"])["r10"] for a in answerable)
        for o in options
    }
    return max(options, key=lambda o: (means[o], -options.index(o))), means


def per_category(
    answerable: list[dict[str, Any]], rank: Callable[[dict[str, Any]], list[int]], measure: str
) -> dict[str, float]:
    """``measure`` (r5, r10, mrr, ...) by category and overall ("all")."""
    return {
        cat: statistics.fmean(
            metrics(rank(a), a["ev"])[measure] for a in answerable if cat in ("all", a["cat"])
        )
        for cat in CATS
    }


def placement(
    tune: list[dict[str, Any]], shipped: Config
) -> tuple[tuple[float, int, float | None] | None, list[str]]:
    """The feedback placement chosen on tune by the rule written down before measuring
    (docs/benchmarks.md), and a table of every candidate's tune figures.

    Among ``PLACEMENT``'s candidates whose recall@10 is at or above the better of BM25 and
    vector-only in every category and whose recall@5 and MRR are at most ``TOP_TOLERANCE``
    below the ranking without feedback, the best recall@10 (within ``TIE``: no gate first, then
    the larger protected top, then the smaller weight); None unless it beats the ranking
    without feedback by more than ``MARGIN``.
    """
    answerable = [a for a in tune if a["ev"]]
    floor = {
        c: max(
            per_category(answerable, lambda a: ranked(a["kw"]), "r10")[c],
            per_category(answerable, lambda a: ranked(a["vec"]), "r10")[c],
        )
        for c in convset.CATEGORIES
    }

    def figures(rank: Callable[[dict[str, Any]], list[int]]) -> dict[str, dict[str, float]]:
        return {m: per_category(answerable, rank, m) for m in ("r10", "r5", "mrr")}

    none = figures(lambda a: ranked(score(a, *shipped[:4])))
    lines = [
        "| feedback weight | protected top | coverage gate | tune recall@10 | recall@5 | MRR "
        "| every category >= max(BM25, vector only) | recall@5 and MRR kept |",
        "|---:|---:|---:|---:|---:|---:|---|---|",
        f"| 0 | - | - | {none['r10']['all']:.3f} | {none['r5']['all']:.3f} "
        f"| {none['mrr']['all']:.3f} "
        f"| {all(none['r10'][c] >= floor[c] for c in floor)} | - |",
    ]
    eligible = []
    for fb, top, gate in PLACEMENT:

        def rank(
            a: dict[str, Any], fb: float = fb, top: int = top, gate: float | None = gate
        ) -> list[int]:
            return ranked(score(a, *shipped[:4], fb, top, gate))

        got = figures(rank)
        categories = all(got["r10"][c] >= floor[c] for c in floor)
        kept = all(got[m]["all"] >= none[m]["all"] - TOP_TOLERANCE for m in ("r5", "mrr"))
        lines.append(
            f"| {fb} | {top} | {gate if gate is not None else '-'} | {got['r10']['all']:.3f} "
            f"| {got['r5']['all']:.3f} | {got['mrr']['all']:.3f} | {categories} | {kept} |"
        )
        if categories and kept:
            eligible.append((got["r10"]["all"], (fb, top, gate)))
    if not eligible:
        return None, lines
    best = max(r10 for r10, _ in eligible)
    close = [o for r10, o in eligible if r10 >= best - TIE]
    chosen = min(close, key=lambda o: (o[2] is not None, -o[1], o[0]))
    if best <= none["r10"]["all"] + MARGIN:
        return None, lines
    return chosen, lines


def constrained(tune: list[dict[str, Any]], fb: float, top: int) -> tuple[Config, float] | None:
    """The min-max configuration (feedback weight ``fb``, protected top ``top``) best on tune
    among those at or above the better of BM25 and vector-only in every category on tune (the
    "Done when" rule applied to the choice)."""
    answerable = [a for a in tune if a["ev"]]
    keyword = per_category(answerable, lambda a: ranked(a["kw"]), "r10")
    vector = per_category(answerable, lambda a: ranked(a["vec"]), "r10")
    found = []
    for w in WEIGHTS:
        for window, nw in CONTEXTS:
            config = ("minmax", w, window, nw, fb, top)

            def rank(a: dict[str, Any], c: Config = config) -> list[int]:
                return ranked(score(a, *c))

            got = per_category(answerable, rank, "r10")
            if all(got[c] >= max(keyword[c], vector[c]) for c in convset.CATEGORIES):
                found.append((got["all"], -w, config))
    if not found:
        return None
    mean, _, config = max(found)
    return config, mean


def cell(m: dict[str, float]) -> str:
    return f"**{m['r10']:.3f}** ({m['r5']:.2f} / {m['r50']:.2f}, {m['mrr']:.2f}, {m['ndcg10']:.2f})"


def run(name: str, *, dates: bool = True) -> str:
    items, model = load(name)
    tune = [a for a in items if a["split"] == "tune"]
    held = [a for a in items if a["split"] == "held-out"]
    shipped: Config = (
        "minmax",
        model.recall_vector_weight,
        2,
        model.recall_context_weight,
        model.recall_feedback_weight,
        fusion.FEEDBACK_PROTECTED,
    )
    for a in items:
        a["shipped"] = ranked(score(a, *shipped))
    best, cv = choose(tune, shipped[4], shipped[5])
    placed, placement_lines = placement(tune, shipped)

    def feedback_rank(a: dict[str, Any], fb: float, top: int = shipped[5]) -> list[int]:
        return ranked(score(a, *shipped[:4], fb, top))

    fb, fb_means = pick(tune, FEEDBACK, feedback_rank)
    fb_cv = cross_validated(tune, FEEDBACK, feedback_rank)
    lam, lam_means = pick(tune, RERANK_WEIGHTS, lambda a, o: rerank(a, score(a, *shipped), o))
    slots, slot_means = pick(
        tune, RESERVED, lambda a, o: reserve(a["shipped"], ranked(a["vec"]), o)
    )
    gain, gain_means = pick(tune, GAINS, lambda a, o: query_weighted(a, shipped, o))
    rows: dict[str, Callable[[dict[str, Any]], list[int]]] = {
        "BM25 only": lambda a: ranked(a["kw"]),
        "vector only": lambda a: ranked(a["vec"]),
        "blend, no neighbour context (w as shipped)": lambda a: ranked(
            score(a, "minmax", shipped[1], 0, 0.0)
        ),
        f"shipped fact_recall (w={shipped[1]}, window 2, neighbours {shipped[3]}, "
        f"feedback {shipped[4]}, protected top {shipped[5]})": lambda a: a["shipped"],
        "shipped without feedback (weight 0)": lambda a: feedback_rank(a, 0.0),
        f"shipped, feedback weight {fb} (best on tune)": lambda a: feedback_rank(a, fb),
        f"shipped, feedback weight {shipped[4] or 0.75} without a protected top": (
            lambda a: feedback_rank(a, shipped[4] or 0.75, 0)
        ),
        f"chosen on tune ({best[0]}, w={best[1]}, window {best[2]}, neighbours {best[3]}, "
        f"feedback {best[4]})": (lambda a: ranked(score(a, *best))),
        f"shipped + coverage rerank of the best {RERANK_DEPTH} (weight {lam}, chosen on tune)": (
            lambda a: rerank(a, score(a, *shipped), lam)
        ),
        f"shipped, query-dependent vector weight (gain {gain}, chosen on tune)": (
            lambda a: query_weighted(a, shipped, gain)
        ),
        f"shipped + {slots} of 10 slots kept for vector-only hits (chosen on tune)": (
            lambda a: reserve(a["shipped"], ranked(a["vec"]), slots)
        ),
    }
    if placed is not None:
        rows[
            f"feedback placement chosen on tune (weight {placed[0]}, protected top {placed[1]}, "
            f"coverage gate {placed[2]})"
        ] = lambda a: ranked(score(a, *shipped[:4], *placed))
    bounded = constrained(tune, shipped[4], shipped[5])
    if bounded is not None:
        config, _ = bounded
        rows[
            f"best on tune with every category >= max(BM25, vector only) on tune "
            f"(w={config[1]}, window {config[2]}, neighbours {config[3]}, feedback {config[4]})"
        ] = lambda a: ranked(score(a, *config))
    if dates:
        dated_items, _ = load(name, dates=True)
        for d in dated_items:
            d["shipped"] = ranked(score(d, *shipped))
        dated_tune = statistics.fmean(
            metrics(d["shipped"], d["ev"])["r10"]
            for d in dated_items
            if d["split"] == "tune" and d["ev"]
        )
        dated_held = [d for d in dated_items if d["split"] == "held-out"]
    floors = {}
    answerable_tune = sorted(best_cosine(a) for a in tune if a["ev"])
    for budget in FLOOR_BUDGETS:
        floors[budget] = round(answerable_tune[int(budget * len(answerable_tune))], 3)
    gate = floors[0.02]
    rows[f"shipped + RECALL_MIN_SIMILARITY {gate} (2% budget on tune)"] = lambda a: (
        a["shipped"] if best_cosine(a) >= gate else []
    )
    lines = [
        f"### {name}: each turn a fact, held-out half (524 questions, 440 answerable)",
        "",
        "recall@10 (recall@5 / recall@50, MRR, nDCG@10):",
        "",
        "| retriever | " + " | ".join(CATS) + " |",
        "|---|" + "---|" * len(CATS),
    ]
    results = {label: table(held, rank) for label, rank in rows.items()}
    if dates:
        results["shipped, dates in the indexed text"] = table(dated_held, lambda d: d["shipped"])
    for label, result in results.items():
        lines.append(f"| {label} | " + " | ".join(cell(result[c]) for c in CATS) + " |")
    tune_shipped = statistics.fmean(metrics(a["shipped"], a["ev"])["r10"] for a in tune if a["ev"])
    lines += [
        "",
        f"Cross-validated recall@10 of the choice on tune: {cv:.3f}. Tune recall@10, shipped "
        f"{tune_shipped:.3f}; feedback by weight "
        + ", ".join(f"{o}: {v:.3f}" for o, v in fb_means.items())
        + f" (cross-validated {fb_cv:.3f}; a weight above 0 ships when it beats 0 by more than "
        f"{MARGIN})"
        + "; coverage rerank by weight "
        + ", ".join(f"{o}: {v:.3f}" for o, v in lam_means.items())
        + "; query-dependent weight by gain "
        + ", ".join(f"{o}: {v:.3f}" for o, v in gain_means.items())
        + "; vector-only slots "
        + ", ".join(f"{o}: {v:.3f}" for o, v in slot_means.items())
        + (f"; dates in the indexed text {dated_tune:.3f}" if dates else "")
        + (
            f"; best with every category >= max(BM25, vector only) {bounded[1]:.3f}."
            if bounded is not None
            else "; no configuration is >= max(BM25, vector only) in every category on tune."
        ),
        "",
        "Feedback placement on tune (answerable questions; the rule in the text above): "
        + (
            f"chosen weight {placed[0]}, protected top {placed[1]}, coverage gate {placed[2]}."
            if placed is not None
            else "no candidate meets the rule (the default stays without feedback)."
        ),
        "",
        *placement_lines,
        "",
        "Relevance floor (`RECALL_MIN_SIMILARITY`: no memory when the best candidate's cosine "
        "is below it), set on tune so that at most the budget's share of answerable questions "
        "is emptied:",
        "",
        "| budget | floor | half | unanswerable given no memory | answerable emptied "
        "| answerable adversarial emptied | recall@10 |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for budget, floor in floors.items():
        for half, part in (("tune", tune), ("held-out", held)):
            answerable = [a for a in part if a["ev"]]
            unanswerable = [a for a in part if not a["ev"]]
            other = [a for a in answerable if a["cat"] == "adversarial"]
            r10 = statistics.fmean(
                metrics(a["shipped"], a["ev"])["r10"] if best_cosine(a) >= floor else 0.0
                for a in answerable
            )
            lines.append(
                f"| {budget:.0%} | {floor} | {half} "
                f"| {statistics.fmean(best_cosine(a) < floor for a in unanswerable):.2f} "
                f"| {statistics.fmean(best_cosine(a) < floor for a in answerable):.3f} "
                f"| {statistics.fmean(best_cosine(a) < floor for a in other):.2f} | {r10:.3f} |"
            )
    lines += [
        "",
        "| RECALL_MIN_RELATIVE | half | recall@10 | answerable losing all evidence | "
        "hits kept of 10 | unanswerable given no memory |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for ratio in RELATIVE:
        for half, part in (("tune", tune), ("held-out", held)):

            def cut(a: dict[str, Any], ratio: float = ratio) -> list[int]:
                kept = fusion.cut(score(a, *shipped), floor=0.0, relative=ratio)
                return [k for k, _ in kept]

            answerable = [a for a in part if a["ev"]]
            unanswerable = [a for a in part if not a["ev"]]
            r10 = statistics.fmean(metrics(cut(a), a["ev"])["r10"] for a in answerable)
            lost = statistics.fmean(not set(cut(a)[:10]) & a["ev"] for a in answerable)
            kept = statistics.fmean(len(cut(a)[:10]) for a in part)
            empty = statistics.fmean(not cut(a) for a in unanswerable)
            lines.append(
                f"| {ratio} | {half} | {r10:.3f} | {lost:.2f} | {kept:.1f} | {empty:.2f} |"
            )
    return "\n".join([*lines, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", default="hash,wordllama")
    args = parser.parse_args()
    for name in args.embedders.split(","):
        print(run(name.strip()), flush=True)


if __name__ == "__main__":
    main()
