"""Recall on the conversational evaluation set (``bench/convset.py``), per question category.

Every turn is stored twice, in two namespaces per conversation: as a fact (``fact_remember``,
kind ``turn``) and as a message of its session (``message_add_many``). Each question is asked
of: BM25 alone and vectors alone (the candidate lists recall itself fetches), the shipped
``fact_recall`` and the shipped ``message_search``, and of fusions of the same candidate lists
whose weights are chosen by cross-validation on the ``tune`` half only. Figures are reported
on the ``held-out`` half. Recall@k is the share of a question's evidence turns in the first k;
MRR the reciprocal rank of the first; nDCG@10 with binary gains. Unanswerable questions (no
evidence) are left out of those and counted instead by how often a retriever returns nothing.
"""

from __future__ import annotations

import math
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.test.utils import override_settings

from bench import convset
from bench.recall import PrimedEmbedder, configured, environment
from ttmemory import jobs, selectors, services
from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings
from ttmemory.longterm import blind, bm25, episodes, fusion, recall
from ttmemory.longterm.embedding import embed_texts
from ttmemory.models import Fact, FactTerm, MemorySession, MessageEntry, MessageTerm
from ttmemory.services.episodes import messages_reembed

PREFIX = "bench-conv-"
KS = (5, 10, 50)
POOL = 100
FOLDS = 5
WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
# Facts: weight of a neighbouring fact's score (0: no neighbour context), window each side.
NEIGHBOUR_WEIGHTS = (0.0, 0.25, 0.5)
RELATIVE_CUTS = (0.0, 0.3, 0.5, 0.7)
CONTEXT_WINDOW = 2
# Neighbour terms in a message's keyword score: (window each side, weight of a neighbour's term).
WINDOW_VARIANTS = [(0, 0.0), *[(w, nw) for w in (1, 2, 3) for nw in (0.25, 0.5, 1.0)]]
Progress = Callable[[str], None]
Key = Any  # a fact id or a (session id, seq) pair


def _quiet(_msg: str) -> None:
    return None


# ---------------------------------------------------------------------------------------------
# Metrics


def metrics(ranking: Sequence[Key], evidence: set[Key]) -> dict[str, float]:
    out = {f"r{k}": len(evidence & set(ranking[:k])) / len(evidence) for k in KS}
    first = next((i for i, key in enumerate(ranking, start=1) if key in evidence), None)
    out["mrr"] = 1.0 / first if first else 0.0
    dcg = sum(1.0 / math.log2(i + 1) for i, key in enumerate(ranking[:10], 1) if key in evidence)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(evidence), 10) + 1))
    out["ndcg10"] = dcg / ideal
    return out


def mean_metrics(rows: Iterable[dict[str, float]]) -> dict[str, float]:
    rows = list(rows)
    if not rows:
        return {}
    out = {name: statistics.fmean(r[name] for r in rows) for name in rows[0]}
    out["n"] = float(len(rows))
    return out


def ranked(scores: Mapping[Key, float]) -> list[Key]:
    return [key for key, _ in sorted(scores.items(), key=lambda item: (-item[1], str(item[0])))]


# ---------------------------------------------------------------------------------------------
# Fusions of a keyword and a vector candidate list


def _minmax(scores: Mapping[Key, float]) -> dict[Key, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = (high - low) or 1.0
    return {key: (s - low) / span for key, s in scores.items()}


def _max(scores: Mapping[Key, float]) -> dict[Key, float]:
    top = max(scores.values(), default=0.0) or 1.0
    return {key: s / top for key, s in scores.items()}


def _zscore(scores: Mapping[Key, float]) -> dict[Key, float]:
    if len(scores) < 2:
        return dict.fromkeys(scores, 1.0)
    mean = statistics.fmean(scores.values())
    spread = statistics.pstdev(scores.values()) or 1.0
    return {key: (s - mean) / spread for key, s in scores.items()}


def _rank(scores: Mapping[Key, float]) -> dict[Key, float]:
    return {key: 1.0 / (60 + i) for i, key in enumerate(ranked(scores), start=1)}


def fuse(
    family: str,
    keyword: Mapping[Key, float],
    vector: Mapping[Key, float],
    weight: float,
    ideal: float,
    order: Sequence[Key] | None = None,
    neighbour_weight: float = 0.0,
) -> dict[Key, float]:
    """Weighted sum of the two lists after ``family``'s normalisation (weight on vectors).

    - ``minmax``: the shipped blend (BM25 over its max, cosine min-max per query).
    - ``max``: BM25 over its max, cosine as it is (no per-query stretching of cosine).
    - ``zscore``: both standardised per query.
    - ``rrf``: weighted reciprocal rank fusion (k=60).
    - ``coverage``: BM25 over the score of a message holding every query term once (the
      share of the query's weight matched, absolute), cosine as it is.
    """
    if family == "minmax":
        kw, vec = _max(keyword), _minmax(vector)
    elif family == "max":
        kw, vec = _max(keyword), {key: max(0.0, s) for key, s in vector.items()}
    elif family == "zscore":
        kw, vec = _zscore(keyword), _zscore(vector)
    elif family == "rrf":
        kw, vec = _rank(keyword), _rank(vector)
    elif family == "coverage":
        kw = {key: s / ideal for key, s in keyword.items()} if ideal else {}
        vec = {key: max(0.0, s) for key, s in vector.items()}
    else:
        raise ValueError(family)
    low_kw = min(kw.values(), default=0.0) if family in ("zscore",) else 0.0
    low_vec = min(vec.values(), default=0.0) if family in ("zscore",) else 0.0
    fused = {
        key: weight * vec.get(key, low_vec) + (1.0 - weight) * kw.get(key, low_kw)
        for key in set(kw) | set(vec)
    }
    if order and neighbour_weight:
        fused = _with_neighbours(fused, order, neighbour_weight)
    return fused


def _with_neighbours(
    scores: Mapping[Key, float], order: Sequence[Key], weight: float
) -> dict[Key, float]:
    """The shipped neighbour context (``fusion.expand``, ``RECALL_CONTEXT_WINDOW`` each side)
    around the best candidates (``fusion.seeds`` for k=50), positions from ``order``."""
    window = CONTEXT_WINDOW
    position = {key: i for i, key in enumerate(order)}
    runs = {}
    for seed in fusion.seeds(scores, k=50):
        i = position.get(seed)
        if i is not None:
            runs[seed] = list(order[max(0, i - 2 * window) : i + 2 * window + 1])
    if min(scores.values(), default=0.0) < 0:  # z-scores: neighbours count from the lowest
        low = min(scores.values())
        scores = {key: s - low for key, s in scores.items()}
    return fusion.expand(scores, runs, window=window, weight=weight)


FAMILIES = ("minmax", "max", "zscore", "rrf", "coverage")


# ---------------------------------------------------------------------------------------------
# Loading and asking


@dataclass
class Asked:
    """One question's candidate lists and shipped answers, keyed for its store."""

    question: convset.Question
    split: str
    store: str  # "facts" or "messages"
    evidence: set[Key]
    keyword: dict[Key, float]
    keyword_own: dict[Key, float]  # messages: without neighbour terms (window 0)
    vector: dict[Key, float]
    shipped: list[tuple[Key, float]]
    ideal: float
    shipped_ms: float
    windows: dict[str, list[Key]] | None = None  # messages: keyword rankings per window variant
    order: list[Key] | None = None  # facts: the namespace's fact ids in the order remembered


def _ideal(namespace: str, query: str, *, store: str) -> float:
    """BM25 of a document holding each query term once at mean length: the sum of the idfs."""
    terms = blind.query_terms(query, namespace=namespace)
    if not terms:
        return 0.0
    if store == "facts":
        total = Fact.objects.filter(namespace=namespace).count()
        model = FactTerm
    else:
        total = MessageEntry.objects.filter(namespace=namespace).count()
        model = MessageTerm  # type: ignore[assignment]
    df: dict[int, int] = defaultdict(int)
    for term in model.objects.filter(namespace=namespace, term__in=terms).values_list(
        "term", flat=True
    ):
        df[term] += 1
    return sum(bm25.idf(total, df[t]) for t in terms)


def load(data: convset.ConvSet, prefix: str, progress: Progress) -> dict[str, Any]:
    """Store every turn as a fact and as a message; the maps from stored keys to turn ids."""
    embedder = get_embedder()
    if isinstance(embedder, PrimedEmbedder):
        progress("embedding every turn and question")
        embedder.prime(
            [t.text for c in data.conversations for t in c.turns]
            + [q.text for c in data.conversations for q in c.questions]
        )
    fact_of: dict[str, int] = {}
    message_of: dict[str, tuple[int, int]] = {}
    for n, conv in enumerate(data.conversations, start=1):
        for turn in conv.turns:
            fact = services.fact_remember(
                namespace=f"{prefix}f-{conv.user}", text=turn.text, kind="turn"
            )
            fact_of[turn.id] = fact.pk
        by_session: dict[int, list[convset.Turn]] = defaultdict(list)
        for turn in conv.turns:
            by_session[turn.session].append(turn)
        for number, turns in sorted(by_session.items()):
            session = services.session_open(
                namespace=f"{prefix}m-{conv.user}", key=f"session-{number}"
            )
            rows = services.message_add_many(
                session=session, messages=[{"role": t.role, "content": t.text} for t in turns]
            )
            for turn, row in zip(turns, rows, strict=True):
                message_of[turn.id] = (session.pk, row.seq)
        progress(f"loaded conversation {n}/{len(data.conversations)}")
    # Vectors of every message, also where the shipped message_search weight is 0 (and so the
    # message_embed job made none): the vector-only and fusion rows need them.
    with override_settings(
        TTMEMORY={**app_settings.user_settings, "MESSAGE_SEARCH_VECTOR_WEIGHT": 1.0}
    ):
        messages_reembed()
    return {"facts": fact_of, "messages": message_of}


def ask(
    data: convset.ConvSet, prefix: str, keys: dict[str, Any], progress: Progress
) -> list[Asked]:
    model = get_embedder().model
    asked: list[Asked] = []
    for conv in data.conversations:
        facts_ns, messages_ns = f"{prefix}f-{conv.user}", f"{prefix}m-{conv.user}"
        order = list(
            Fact.objects.filter(namespace=facts_ns).order_by("pk").values_list("pk", flat=True)
        )
        for question in conv.questions:
            vectors, _ = embed_texts([question.text])
            assert vectors is not None
            qv = vectors[0]
            # Facts
            evidence = {keys["facts"][t] for t in question.evidence}
            started = time.perf_counter()
            shipped = selectors.fact_recall(namespace=facts_ns, query=question.text, k=50)
            elapsed = (time.perf_counter() - started) * 1000
            keyword = recall.keyword_scores(facts_ns, question.text, POOL)
            facts = recall.filtered_facts(facts_ns, kinds=None, metadata=None)
            vector = recall.vector_scores(facts, qv, model, POOL, approximate=False)
            asked.append(
                Asked(
                    question,
                    conv.split,
                    "facts",
                    evidence,
                    keyword,
                    keyword,
                    vector,
                    [(fact.pk, score) for fact, score in shipped.hits],
                    _ideal(facts_ns, question.text, store="facts"),
                    elapsed,
                    order=order,
                )
            )
            # Messages
            evidence = {keys["messages"][t] for t in question.evidence}
            started = time.perf_counter()
            hits = selectors.message_search(namespace=messages_ns, query=question.text, k=50)
            elapsed = (time.perf_counter() - started) * 1000
            kw_window = episodes.keyword_scores(messages_ns, question.text, window=2, limit=POOL)
            kw_own = episodes.keyword_scores(messages_ns, question.text, window=0, limit=POOL)
            entries = MessageEntry.objects.filter(namespace=messages_ns)
            mvector = episodes.vector_scores(entries, qv, model, POOL)
            windows = {
                f"window {w}, neighbour weight {nw}": ranked(
                    episodes.keyword_scores(
                        messages_ns, question.text, window=w, limit=50, neighbour_weight=nw
                    )
                )
                for w, nw in WINDOW_VARIANTS
            }
            asked.append(
                Asked(
                    question,
                    conv.split,
                    "messages",
                    evidence,
                    kw_window,
                    kw_own,
                    mvector,
                    [((h.session.pk, h.seq), h.score) for h in hits],
                    _ideal(messages_ns, question.text, store="messages"),
                    elapsed,
                    windows,
                )
            )
        progress(f"asked conversation {conv.user}")
    return asked


# ---------------------------------------------------------------------------------------------
# Cross-validated fusion


def _grid(items: Sequence[Asked]) -> list[tuple[float, float]]:
    """(vector weight, neighbour weight) pairs to try: neighbours only where facts have an order."""
    neighbours = NEIGHBOUR_WEIGHTS if any(a.order for a in items) else (0.0,)
    return [(w, nw) for w in WEIGHTS for nw in neighbours]


def _r10_table(items: Sequence[Asked]) -> dict[tuple[str, float, float], list[float]]:
    """Recall@10 of every answerable question under every family and weight pair."""
    return {
        (family, weight, nw): [
            metrics(
                ranked(fuse(family, a.keyword, a.vector, weight, a.ideal, a.order, nw)),
                a.evidence,
            )["r10"]
            for a in items
        ]
        for family in FAMILIES
        for weight, nw in _grid(items)
    }


def choose_fusion(tune: Sequence[Asked]) -> dict[str, Any]:
    """Per family, the weights best on the tune half, and their cross-validated recall@10.

    The tune conversations are split in ``FOLDS`` folds; for each, the weights are picked on
    the others and scored on it. The family with the best cross-validated score wins; its
    weights are then the best on the whole tune half (ties: the smaller weights).
    """
    items = [a for a in tune if a.evidence]
    r10 = _r10_table(items)
    grid = _grid(items)
    users = sorted({a.question.user for a in items})
    folds = [set(users[i::FOLDS]) for i in range(FOLDS)]

    def mean(family: str, pair: tuple[float, float], keep: Callable[[Asked], bool]) -> float:
        values = [v for a, v in zip(items, r10[(family, *pair)], strict=True) if keep(a)]
        return statistics.fmean(values) if values else 0.0

    table: dict[str, dict[str, float]] = {}
    for family in FAMILIES:
        cv: list[float] = []
        for fold in folds:
            if not fold:
                continue

            def outside(a: Asked, fold: set[str] = fold) -> bool:
                return a.question.user not in fold

            def inside(a: Asked, fold: set[str] = fold) -> bool:
                return a.question.user in fold

            best = max(grid, key=lambda p: (mean(family, p, outside), -p[0], -p[1]))
            cv.append(mean(family, best, inside))
        weight, nw = max(grid, key=lambda p: (mean(family, p, lambda a: True), -p[0], -p[1]))
        table[family] = {
            "cv_r10": statistics.fmean(cv) if cv else 0.0,
            "weight": weight,
            "neighbour_weight": nw,
        }
    winner = max(FAMILIES, key=lambda f: table[f]["cv_r10"])
    return {
        "families": table,
        "winner": winner,
        "weight": table[winner]["weight"],
        "neighbour_weight": table[winner]["neighbour_weight"],
    }


# ---------------------------------------------------------------------------------------------
# The run


def _per_category(items: Sequence[Asked], rank: Callable[[Asked], list[Key]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    answerable = [a for a in items if a.evidence]
    for category in (*convset.CATEGORIES, "all"):
        chosen = [a for a in answerable if category in ("all", a.question.category)]
        out[category] = mean_metrics(metrics(rank(a), a.evidence) for a in chosen)
    return out


def _empty_rate(items: Sequence[Asked], rank: Callable[[Asked], list[Key]]) -> dict[str, float]:
    """Share of unanswerable questions given nothing, of answerable ones that lose all their
    evidence from the first 10 (the price), recall@10 and hits kept of the first 10."""
    unanswerable = [a for a in items if not a.evidence]
    answerable = [a for a in items if a.evidence]
    return {
        "unanswerable_empty": statistics.fmean(not rank(a) for a in unanswerable)
        if unanswerable
        else 0.0,
        "answerable_lost": statistics.fmean(
            not (set(rank(a)[:10]) & a.evidence) for a in answerable
        )
        if answerable
        else 0.0,
        "r10": statistics.fmean(metrics(rank(a), a.evidence)["r10"] for a in answerable)
        if answerable
        else 0.0,
        "kept": statistics.fmean(len(rank(a)[:10]) for a in items) if items else 0.0,
    }


def evaluate(
    data: convset.ConvSet,
    *,
    embedder: dict[str, Any] | None = None,
    embedder_name: str = "HashEmbedder (default)",
    progress: Progress = _quiet,
) -> dict[str, Any]:
    """Load ``data``, ask every question, choose fusions on ``tune``, report on ``held-out``."""
    primed = {
        "BACKEND": f"{PrimedEmbedder.__module__}.PrimedEmbedder",
        "OPTIONS": {"inner": embedder},
    }
    prefix = f"{PREFIX}{uuid.uuid4().hex[:6]}-"
    with configured(primed if embedder else None):
        try:
            keys = load(data, prefix, progress)
            asked = ask(data, prefix, keys, progress)
            weight_now = recall.vector_weight()
        finally:
            jobs.drain(60)  # background index jobs still writing these rows
            MemorySession.objects.filter(namespace__startswith=prefix).delete()
            FactTerm.objects.filter(namespace__startswith=prefix).delete()
            Fact.objects.filter(namespace__startswith=prefix).delete()
    result: dict[str, Any] = {
        "embedder": embedder_name,
        "set": data.describe(),
        "environment": environment(),
        "shipped_weight": weight_now,
        "stores": {},
    }
    for store in ("facts", "messages"):
        mine = [a for a in asked if a.store == store]
        tune = [a for a in mine if a.split == "tune"]
        held = [a for a in mine if a.split == "held-out"]
        choice = choose_fusion(tune)
        family, weight, nw = choice["winner"], choice["weight"], choice["neighbour_weight"]

        def tuned(
            a: Asked, family: str = family, weight: float = weight, nw: float = nw
        ) -> list[Key]:
            return ranked(fuse(family, a.keyword, a.vector, weight, a.ideal, a.order, nw))

        retrievers: dict[str, Callable[[Asked], list[Key]]] = {
            "BM25 only": lambda a: ranked(a.keyword_own),
            "vector only": lambda a: ranked(a.vector),
            f"shipped {'fact_recall' if store == 'facts' else 'message_search'}": lambda a: [
                key for key, _ in a.shipped
            ],
            f"tuned fusion ({family}, w={weight}"
            + (f", neighbours {nw}" if store == "facts" else "")
            + ")": tuned,
        }
        if store == "messages":
            retrievers["BM25 + neighbour terms (window 2)"] = lambda a: ranked(a.keyword)
        table = {name: _per_category(held, rank) for name, rank in retrievers.items()}
        # min_score relative to the best hit (RECALL_MIN_RELATIVE), on the shipped scores:
        # measured on both halves; the default is chosen on tune.
        floors: dict[str, Any] = {}
        for ratio in RELATIVE_CUTS:

            def cut(a: Asked, ratio: float = ratio) -> list[Key]:
                best = max((s for _, s in a.shipped), default=0.0)
                return [key for key, s in a.shipped if s >= ratio * best]

            floors[f"shipped, hits >= {ratio} x best"] = {
                half: _empty_rate(part, cut) for half, part in (("tune", tune), ("held-out", held))
            }
        window_table: dict[str, dict[str, float]] = {}
        if store == "messages":
            for name in mine[0].windows or {}:
                window_table[name] = {
                    half: statistics.fmean(
                        metrics((a.windows or {})[name], a.evidence)["r10"]
                        for a in part
                        if a.evidence
                    )
                    for half, part in (("tune", tune), ("held-out", held))
                }
        result["stores"][store] = {
            "windows": window_table,
            "fusion": choice,
            "held_out": table,
            "min_score": floors,
            "p50_ms": statistics.median(a.shipped_ms for a in held),
            "questions": {"tune": len(tune), "held-out": len(held)},
        }
    return result


# ---------------------------------------------------------------------------------------------
# Markdown


def render(results: Sequence[Mapping[str, Any]]) -> str:
    lines: list[str] = []
    for result in results:
        env = result["environment"]
        lines += [
            f"### {result['embedder']}",
            "",
            f"Set: {result['set']}. Held-out half reported; fusion weights chosen by "
            f"{FOLDS}-fold cross-validation on the tune half. {env['database']}, "
            f"Python {env['python']}, {env['cpus']} CPUs, {env['when']}. Shipped vector weight "
            f"{result['shipped_weight']}.",
            "",
        ]
        for store, data in result["stores"].items():
            title = "each turn a fact" if store == "facts" else "each turn a message"
            lines += [
                f"#### {title}: recall@10 (recall@5 / recall@50, MRR, nDCG@10) per category",
                "",
                "| retriever | " + " | ".join(convset.CATEGORIES) + " | all |",
                "|---|" + "---|" * (len(convset.CATEGORIES) + 1),
            ]
            for name, table in data["held_out"].items():
                cells = []
                for category in (*convset.CATEGORIES, "all"):
                    m = table[category]
                    cells.append(
                        f"**{m['r10']:.3f}** ({m['r5']:.2f} / {m['r50']:.2f}, "
                        f"{m['mrr']:.2f}, {m['ndcg10']:.2f})"
                        if m
                        else "-"
                    )
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
            fusion = data["fusion"]
            lines += [
                "",
                "Fusion chosen on the tune half (cross-validated recall@10, weight on vectors): "
                + ", ".join(
                    f"{family} {row['cv_r10']:.3f} (w={row['weight']}"
                    + (f", neighbours {row['neighbour_weight']}" if store == "facts" else "")
                    + ")"
                    for family, row in fusion["families"].items()
                )
                + f"; winner **{fusion['winner']}**. Shipped search p50 "
                f"{data['p50_ms']:.1f} ms per query ({data['questions']['held-out']} held-out "
                "questions).",
                "",
            ]
            if data.get("windows"):
                lines += [
                    "Keyword only, a message plus its neighbours' terms (recall@10, answerable "
                    "questions; chosen on tune, reported on held-out):",
                    "",
                    "| variant | tune | held-out |",
                    "|---|---:|---:|",
                    *[
                        f"| {name} | {row['tune']:.3f} | {row['held-out']:.3f} |"
                        for name, row in data["windows"].items()
                    ],
                    "",
                ]
            lines += [
                "| min_score rule (RECALL_MIN_RELATIVE) | half | unanswerable given no memory "
                "| answerable losing all evidence from the top 10 | recall@10 | hits kept of 10 |",
                "|---|---|---:|---:|---:|---:|",
            ]
            for rule, halves in data["min_score"].items():
                for half, r in halves.items():
                    lines.append(
                        f"| {rule} | {half} | {r['unanswerable_empty']:.2f} | "
                        f"{r['answerable_lost']:.2f} | {r['r10']:.3f} | {r['kept']:.1f} |"
                    )
            lines.append("")
    return "\n".join(lines)
