"""Fact recall's vector weight chosen to generalise: tuned on two sets, reported on two others.

``python bench/fusion_generalise.py --embedders hash,wordllama`` (in memory, as
``bench/fusion_study.py``: BM25 and cosine as ``fact_recall`` computes them, the shipped
neighbour context ``fusion.expand`` and evidence floor ``fusion.unpadded``).

The weight that was shipped for WordLlama and sentence embedders (0.8) was the best on the
conversational set's tune half, and on a set of real conversations (LoCoMo) it made recall
worse than the keyword-only default. One set's optimum does not carry. The procedure here:

1. Candidates: the min-max blend at every vector weight 0.0-1.0, and two fusions without a
   weight, both calibrated by the embedder's evidence floor (``recall_evidence_similarity``,
   a property of its similarities between unrelated texts, never set on recall): reciprocal
   rank fusion (k=60) of the BM25 list and of the vector list cut at the floor, and the sum
   of BM25 over its best and the cosine's part above the floor,
   ``max(0, (cosine - floor) / (1 - floor))`` (an absolute confidence: a weak best vector
   match adds little, where min-max would give it the full weight).
2. Tuned on two sets built differently: the conversational set's tune half
   (``bench/convset.py``) and the synthetic set (``bench/evalset.py``). A candidate's score is
   the smaller of its two recall@10 gains over keywords alone (the blend at weight 0,
   neighbour context on): a weight that helps one set and hurts the other loses. The chosen
   weight is the smallest whose score is within one standard error (of the paired
   per-question differences) of the best's: the one-standard-error rule, leaning to keywords,
   because BM25 carries to other text while an embedder's similarities are the part that
   depends on the domain (on LoCoMo's long turns 0.8 fell below keywords alone).
3. Reported on sets that chose nothing: the conversational set's held-out half and the
   long-conversation set (``bench/longconv.py``).

``--target messages`` puts ``message_search``'s vector weight through the same procedure: each
set's turns become the messages of their sessions (one namespace per user, seqs in order),
scored as ``message_search`` scores them: the keyword arithmetic of
``episodes.keyword_scores`` (``episodes.window_scores``: BM25 over a message's terms plus its
neighbours' at half weight, questions at a quarter, a question asking the query again lending
its words to no neighbour, ``episodes.question_keys``), the cosine of the best 50 messages,
``fusion.fuse`` and the cut at score 0. Its second tuning set is again the synthetic set, whose
users also talk over sessions (twenty users x ten sessions, topics and distractors written from
templates by another generator than the conversational set's). A further candidate family,
"asks": the blend with a question's cosine damped like its BM25 (``episodes.damped``), added
after the tune half showed that every message the vectors brought into the top 10 was a
question; the rule chooses among both weighted families (at equal weight, the plain blend).
Not modelled: the cap of ``MESSAGE_SEARCH_TERM_LIMIT`` postings per term (2,000; no user here
has 500 messages).

Prints markdown (section ``fusion-generalise`` of docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench import evalset, longconv
from bench import fusion_study as fs
from ttmemory.longterm import episodes, fusion
from ttmemory.text import normalise_terms, normalise_text

WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
#: The vector weights shipped before this study (issue 35), for the "before" mark.
BEFORE = {"hash": 0.1, "wordllama": 0.8, "minilm": 0.8}
#: ``message_search``'s before this study: HashEmbedder and WordLlama 0, a sentence embedder
#: its recall weight (no weight of its own).
BEFORE_MESSAGES = {"hash": 0.0, "wordllama": 0.0, "minilm": 0.1}
#: ``message_search``'s candidate pools at k=10 (``max(50, 5 k)``) and its window.
MESSAGE_POOL, MESSAGE_WINDOW = 50, 2
RRF_K = 60
Candidate = tuple[str, float]  # ("blend", weight) or ("rrf-gated", 0.0)
#: The families with a vector weight, from which the rule chooses: the blend and, for
#: ``message_search``, the blend with questions damped in the vector list too ("asks").
WEIGHTED = ("blend", "asks")


def _embedded(
    model: Any, users: Sequence[tuple[str, str, Sequence[Any], Sequence[Any]]]
) -> tuple[dict[str, int], np.ndarray]:
    """Every distinct turn and question text of ``users`` embedded once: its row, and the rows."""
    texts = list(
        dict.fromkeys(
            [t.text for _, _, turns, _ in users for t in turns]
            + [q.text for _, _, _, questions in users for q in questions]
        )
    )
    row = {t: i for i, t in enumerate(texts)}
    return row, np.asarray(model.embed(texts), dtype=np.float32)


def load_turns(
    model: Any, users: Sequence[tuple[str, str, Sequence[Any], Sequence[Any]]]
) -> list[dict[str, Any]]:
    """Items like ``fusion_study.load``'s for any set: ``(user, split, turns, questions)`` with
    turns carrying ``id``/``text`` and questions ``text``/``evidence``."""
    row, vectors = _embedded(model, users)
    items = []
    for user, split, turns, questions in users:
        facts: list[str] = []
        position: dict[str, int] = {}
        fact_of: dict[str, int] = {}
        for turn in turns:
            key = normalise_text(turn.text)
            if key not in position:
                position[key] = len(facts)
                facts.append(turn.text)
            fact_of[turn.id] = position[key]
        index = fs.Index(facts)
        matrix = vectors[[row[t] for t in facts]]
        for q in questions:
            if not q.evidence:
                continue
            sims = matrix @ vectors[row[q.text]]
            top = np.argsort(-sims)[: fs.POOL]
            items.append(
                {
                    "user": user,
                    "split": split,
                    "kw": index.scores(q.text),
                    "vec": {int(i): float(sims[i]) for i in top},
                    "ev": {fact_of[t] for t in q.evidence},
                    "n": len(facts),
                }
            )
    return items


def fuse(kw: dict[Any, float], vec: dict[Any, float], candidate: Candidate, floor: float) -> dict:
    """The scores of ``candidate``'s fusion of the keyword and vector lists."""
    family, w = candidate
    if family == "blend":
        return fusion.fuse(kw, vec, vector_weight=w)
    if family == "calibrated":
        top = max(kw.values(), default=0.0) or 1.0
        fused = {key: s / top for key, s in kw.items()}
        for key, s in vec.items():
            if floor < 1.0:  # 1.0: similarity is never evidence (HashEmbedder)
                fused[key] = fused.get(key, 0.0) + max(0.0, (s - floor) / (1.0 - floor))
        return fused
    gated = {k: s for k, s in vec.items() if s >= floor}
    fused = {}
    for scores in (kw, gated):
        for i, key in enumerate(sorted(scores, key=lambda key: (-scores[key], key)), 1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + i)
    return fused


def load_messages(
    model: Any, users: Sequence[tuple[str, str, Sequence[Any], Sequence[Any]]]
) -> list[dict[str, Any]]:
    """Items for ``rank_messages``: each user's turns as the messages of their sessions, keyed
    ``(session, seq)``, scored as ``message_search`` scores them (module docstring)."""
    row, vectors = _embedded(model, users)
    items = []
    for user, split, turns, questions in users:
        keys: list[tuple[int, int]] = []
        key_of: dict[str, tuple[int, int]] = {}
        text_of: dict[tuple[int, int], str] = {}
        seqs: dict[int, int] = {}
        postings: dict[str, list[tuple[int, int, str, int]]] = {}
        lengths: dict[tuple[int, int], int] = {}
        for turn in turns:
            seqs[turn.session] = seqs.get(turn.session, 0) + 1
            key = (turn.session, seqs[turn.session])
            key_of[turn.id] = key
            counts: dict[str, int] = {}
            for term in normalise_terms(turn.text):
                counts[term] = counts.get(term, 0) + 1
            if not counts:  # no text: no index entry, no vector (message_embed skips it)
                continue
            keys.append(key)
            text_of[key] = turn.text
            lengths[key] = sum(counts.values())
            for term, tf in counts.items():
                postings.setdefault(term, []).append((*key, term, tf))
        total = len(keys)
        avg_len = (sum(lengths.values()) / total if total else 1.0) or 1.0
        matrix = vectors[[row[text_of[k]] for k in keys]]
        for q in questions:
            if not q.evidence:
                continue
            terms = list(dict.fromkeys(normalise_terms(q.text)))
            rows = [p for t in terms for p in postings.get(t, [])]
            kw: dict[tuple[int, int], float] = {}
            if rows:
                asked, echoes = episodes.question_keys(rows, set(terms), reader(text_of))
                kw = episodes.window_scores(
                    rows,
                    df={t: len(postings[t]) for t in terms if t in postings},
                    total=total,
                    avg_len=avg_len,
                    lengths=lengths,
                    questions=asked,
                    echoes=echoes,
                    window=MESSAGE_WINDOW,
                    limit=MESSAGE_POOL,
                )
            sims = matrix @ vectors[row[q.text]]
            top = np.argsort(-sims)[:MESSAGE_POOL]
            items.append(
                {
                    "user": user,
                    "split": split,
                    "kw": kw,
                    "vec": {keys[int(i)]: float(sims[i]) for i in top},
                    "asks": {
                        keys[int(i)] for i in top if episodes.is_question(text_of[keys[int(i)]])
                    },
                    "ev": {key_of[t] for t in q.evidence},
                }
            )
    return items


def reader(
    texts: dict[tuple[int, int], str],
) -> Callable[[Sequence[tuple[int, int]]], dict[tuple[int, int], str]]:
    """``question_keys``' reader of message texts, from memory."""
    return lambda wanted: {key: texts[key] for key in wanted}


def rank_messages(item: dict[str, Any], candidate: Candidate, model: Any) -> list[Any]:
    """What ``message_search(k=10)`` would return with ``candidate`` as its fusion. At blend
    weight 0 the query is not embedded (no vector list: a question sharing no word finds
    nothing, where ``fusion.fuse`` would rank a lone vector list by itself)."""
    family, w = candidate
    vec = {} if w == 0.0 and family in WEIGHTED else item["vec"]
    if family == "asks":  # a question's cosine keeps QUESTION_WEIGHT, as its BM25 does
        vec = episodes.damped(vec, item["asks"])
        candidate = ("blend", w)
    fused = fuse(item["kw"], vec, candidate, model.recall_evidence_similarity)
    ranked = sorted(((k, s) for k, s in fused.items() if s > 0.0), key=lambda i: (-i[1], i[0]))
    return [key for key, _ in ranked[:10]]


def rank(
    item: dict[str, Any], candidate: Candidate, model: Any, padding: str = "passage"
) -> list[int]:
    """What ``fact_recall(k=10)`` would return with ``candidate`` as its fusion; ``padding``:
    "passage" (shipped, ``fusion.unpadded``), "pad" (before: neighbour context fills the
    list) or "none" (only facts with evidence of their own)."""
    kw, vec = item["kw"], item["vec"]
    floor = model.recall_evidence_similarity
    fused = fuse(kw, vec, candidate, floor)
    n, window, nw = item["n"], 2, model.recall_context_weight
    runs = {
        s: list(range(max(0, s - 2 * window), min(n, s + 2 * window + 1)))
        for s in fusion.seeds(fused, k=10)
    }
    expanded = fusion.expand(fused, runs, window=window, weight=nw)
    ranked = sorted(expanded.items(), key=lambda kv: (-kv[1], kv[0]))
    if padding == "pad":
        return [key for key, _ in ranked[:10]]
    kept = fusion.unpadded(
        ranked, kw, vec, runs if padding == "passage" else None, window=window, similarity=floor
    )
    return [key for key, _ in kept[:10]]


def r10s(
    items: Sequence[dict[str, Any]], order: Callable[[dict[str, Any]], list[Any]]
) -> list[float]:
    return [len(a["ev"] & set(order(a))) / len(a["ev"]) for a in items]


def se(a: Sequence[float], b: Sequence[float]) -> float:
    """Standard error of the mean of the paired differences ``a - b``."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    return statistics.stdev(diffs) / len(diffs) ** 0.5


def run(name: str, target: str = "facts") -> str:
    model = fs.embedder(name)
    messages = target == "messages"
    load = load_messages if messages else load_turns
    conv = convset_items(model, load)
    synthetic = evalset_items(model, load)
    longs = longconv_items(model, load)
    sets = {
        "conversational, tune half": [a for a in conv if a["split"] == "tune"],
        "synthetic": synthetic,
        "conversational, held-out half": [a for a in conv if a["split"] == "held-out"],
        "long conversations": longs,
    }
    candidates: list[Candidate] = [("blend", w) for w in WEIGHTS] + [
        ("rrf-gated", 0.0),
        ("calibrated", 0.0),
    ]
    if messages:
        candidates += [("asks", w) for w in WEIGHTS if w > 0]

    def order(c: Candidate) -> Callable[[dict[str, Any]], list[Any]]:
        if messages:
            return lambda a: rank_messages(a, c, model)
        return lambda a: rank(a, c, model)

    per = {c: {s: r10s(items, order(c)) for s, items in sets.items()} for c in candidates}
    figures = {c: {s: statistics.fmean(v) for s, v in sets_.items()} for c, sets_ in per.items()}
    tuning = ("conversational, tune half", "synthetic")
    base = figures[("blend", 0.0)]

    def worst_gain(c: Candidate) -> float:
        return min(figures[c][s] - base[s] for s in tuning)

    best = max(candidates, key=lambda c: (round(worst_gain(c), 4), -c[1]))
    # One standard error of the best's gain (the larger of the two tuning sets'): every
    # weight within it is as good on the evidence; the smallest, the nearest to keywords,
    # generalises best (module docstring).
    margin = max(se(per[best][s], per[("blend", 0.0)][s]) for s in tuning)
    chosen = min(
        (c for c in candidates if c[0] in WEIGHTED and worst_gain(c) >= worst_gain(best) - margin),
        key=lambda c: (c[1], c[0] != "blend"),
    )
    single = max(
        (c for c in candidates if c[0] in WEIGHTED),
        key=lambda c: (figures[c]["conversational, tune half"], -c[1]),
    )
    if messages:
        shipped = ("blend", BEFORE_MESSAGES.get(name, 0.1))
        own = model.message_search_vector_weight
        weight = float(model.recall_vector_weight if own is None else own)
        # message_search damps questions in the vector list (episodes.damped) since this study.
        now = ("asks", weight) if weight > 0 else ("blend", 0.0)
    else:
        shipped = ("blend", BEFORE.get(name, 0.8))
        now = ("blend", float(model.recall_vector_weight))
    lines = [
        f"### {name}",
        "",
        f"Best on the smaller gain of the two tuning sets: {label(best)} "
        f"({worst_gain(best):+.3f}, one standard error {margin:.3f}); chosen, the smallest "
        f"vector weight within one standard error of it: **{label(chosen)}**; "
        f"the conversational tune half alone would choose {label(single)}; shipped before: "
        f"{label(shipped)}; shipped now: {label(now)}.",
        "",
        "| fusion | " + " | ".join(sets) + " | smaller tuning gain |",
        "|---|" + "---:|" * (len(sets) + 1),
    ]
    for c in candidates:
        marks = " (chosen)" if c == chosen else ""
        marks += " (shipped before)" if c == shipped else ""
        marks += " (shipped now)" if c == now else ""
        cells = " | ".join(f"{figures[c][s]:.3f}" for s in sets)
        lines.append(f"| {label(c)}{marks} | {cells} | {worst_gain(c):+.3f} |")
    if messages:
        lines.append("")
        return "\n".join(lines)
    lines += [
        "",
        f"Neighbour context and padding at the shipped fusion ({label(now)}): recall@10 "
        "(recall@5; hits returned of 10) per set.",
        "",
        "| neighbour-only facts | " + " | ".join(sets) + " |",
        "|---|" + "---:|" * len(sets),
    ]
    for mode, what in (
        ("pad", "fill the list (before: padding)"),
        ("passage", "kept inside a passage about the query (shipped)"),
        ("none", "never kept"),
    ):
        padded: list[str] = []
        for items in sets.values():
            ranks = [rank(a, now, model, mode) for a in items]
            got10 = statistics.fmean(
                len(a["ev"] & set(r)) / len(a["ev"]) for a, r in zip(items, ranks, strict=True)
            )
            got5 = statistics.fmean(
                len(a["ev"] & set(r[:5])) / len(a["ev"]) for a, r in zip(items, ranks, strict=True)
            )
            size = statistics.fmean(len(r) for r in ranks)
            padded.append(f"{got10:.3f} ({got5:.3f}; {size:.1f})")
        lines.append(f"| {what} | " + " | ".join(padded) + " |")
    lines.append("")
    return "\n".join(lines)


def label(c: Candidate) -> str:
    if c[0] == "blend":
        return f"blend, vector weight {c[1]}"
    if c[0] == "asks":
        return f"blend, questions damped in both lists, vector weight {c[1]}"
    if c[0] == "calibrated":
        return "calibrated sum: BM25 / best + (cosine - floor) / (1 - floor)"
    return "RRF, vectors above the floor"


Loader = Callable[[Any, Sequence[tuple[str, str, Sequence[Any], Sequence[Any]]]], list]


def convset_items(model: Any, load: Loader = load_turns) -> list[dict[str, Any]]:
    data = fs.convset.build(seed=21)
    return load(model, [(c.user, c.split, c.turns, c.questions) for c in data.conversations])


def evalset_items(model: Any, load: Loader = load_turns) -> list[dict[str, Any]]:
    data = evalset.build(seed=7)
    return load(model, [(u.name, "synthetic", u.turns, u.questions) for u in data.users])


def longconv_items(model: Any, load: Loader = load_turns) -> list[dict[str, Any]]:
    data = longconv.build()
    return load(model, [(c.user, "long", c.turns, c.questions) for c in data.conversations])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", default="hash,wordllama")
    parser.add_argument("--target", choices=("facts", "messages"), default="facts")
    args = parser.parse_args()
    if args.target == "messages":
        print("## Fusion weights that generalise: `message_search`\n")
        command = "--target messages "
    else:
        print("## Fusion weights that generalise\n")
        command = ""
    print(
        f"Generated by `python bench/fusion_generalise.py {command}--embedders {args.embedders}`.\n"
    )
    for name in args.embedders.split(","):
        print(run(name, args.target))


if __name__ == "__main__":
    main()
