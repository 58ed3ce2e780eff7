"""Recall's ranking after the candidate lists: blend, neighbour context, relative cut.

``fact_recall`` fetches two candidate lists (BM25 over the blind index, cosine over vectors;
``longterm/recall.py``) and hands them here:

1. **Blend**: BM25 over its best score, cosine min-max per query, summed with the vector
   weight (``recall.blend``). Chosen on the conversational set's tune half by 5-fold
   cross-validation against z-scores, weighted reciprocal rank fusion and an absolute
   "coverage" normalisation; the min-max blend was best or tied for every embedder
   (docs/benchmarks.md, ``bench/conversations.py``).
2. **Neighbour context**: a fact's score gains ``RECALL_CONTEXT_WEIGHT`` times the blended
   scores of the ``RECALL_CONTEXT_WINDOW`` facts remembered just before and just after it in
   the same namespace. Memories are remembered in the order they were said: "I made a blue
   bowl" answers "what did Ada make at the pottery class?" only through the turn before it,
   which names the class. Measured on the held-out half: the largest single gain of all the
   candidates (the default's recall@10 from 0.50 to 0.72, BM25 alone 0.46).
3. **Feedback** (``RECALL_FEEDBACK_WEIGHT``, the embedder's ``recall_feedback_weight``): the
   words of the ``FEEDBACK_SEEDS`` best blended facts that the query did not use are asked
   again (BM25 over the blind index, ``fact_related``), and each candidate gains the weight x
   its blended score x its share of the best such match. A two-turn question ("what does the
   person Ada went to the pottery class with do for a living?") finds the class turn, which
   names the sister; the turn about the sister's job shares no word with the question but
   that name. The best ``FEEDBACK_PROTECTED`` facts without feedback keep their places
   (``protect``): the related facts fill the ranks after them, so the top of the list is what
   it was and a recall of at most that many hits skips the query. Measured on the held-out
   half with all-MiniLM-L6-v2 (weight 0.75 and a protected top of 5, chosen on tune):
   multi-hop recall@10 from 0.750 to 0.912, overall 0.906 to 0.935, recall@5 and MRR
   unchanged; on the synthetic set recall@5 and MRR hold too but recall@10 falls 0.814 to
   0.805, so it is not the default. It gained nothing on tune for HashEmbedder and WordLlama.
   Off by default for every embedder (weight 0: no extra statement).
4. **Relative cut**: hits below ``RECALL_MIN_RELATIVE`` times the best hit are dropped, so a
   prompt is not padded with memories far weaker than the best one. A relative rule never
   empties a result by itself.
5. **Evidence floor** (``RECALL_EVIDENCE_SIMILARITY``, the embedder's
   ``recall_evidence_similarity``; ``unpadded``): a hit matches the query by itself (a keyword
   in common, or a cosine similarity at least the floor) or sits inside a passage about it
   (``PASSAGE_MATCHES`` facts within the window match by themselves), so neighbour context
   never pads a short list with the facts that merely sit next to one match: fewer than k
   hits instead. Measured in docs/benchmarks.md ("Recall that returns evidence").
6. **Relevance floor** (``RECALL_MIN_SIMILARITY``, off by default): no hits at all when no
   candidate's cosine similarity to the query reaches the floor. Blended scores cannot say
   "nothing here is relevant" (they are stretched per query); the raw cosine of the best
   candidate is the absolute signal that separated unanswerable questions from answerable ones
   best on the tune half (docs/benchmarks.md), and it needs no extra query. Opt-in because
   it also empties some answerable questions; calibrated per embedder.

With pgvector, or keyword-only, the neighbour runs come with the candidates, in their one statement
(``candidates.Context``), or from the namespace's matrix in memory where it served the vectors
(``candidates.Candidates.around``); ``fact_runs`` fetches them elsewhere, or for a seed that
statement did not pick (one statement, small index scans on ``ttm_fact_ns_id_idx``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import connection

from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings
from ttmemory.longterm import bm25, dialect, recall, runs
from ttmemory.models import Fact, FactTerm

K = TypeVar("K", int, tuple[int, int])  # a fact id, a (session, seq) pair

#: A seed id no fact has: stands in for each seed in the neighbour query compiled once.
_STAND_IN = -(2**62) - 17

#: Facts whose neighbourhoods are fetched: the best this many blended candidates (at least k x 2).
MIN_SEEDS = 20
#: The best blended candidates whose words the feedback query asks again (chosen on tune).
FEEDBACK_SEEDS = 2
#: The best facts of the ranking without feedback that keep their places when feedback is on
#: (``protect``; chosen on tune): the related facts fill the ranks after them. A recall of at
#: most this many hits is therefore the same with feedback or without, and skips its query.
FEEDBACK_PROTECTED = 5
#: Seeds beyond ``seed_count`` whose runs recall's one statement also fetches (PostgreSQL), so
#: that a rounding difference between its blend and ``fuse`` never costs a second round trip.
SPARE_SEEDS = 4


def fuse(
    keyword: Mapping[K, float], vector: Mapping[K, float], *, vector_weight: float
) -> dict[K, float]:
    """The blend of both lists; one list alone keeps its own scores (keyword-only mode). The one
    fusion of every ranking (``fact_recall``, ``message_search``)."""
    if keyword and vector:
        return recall.blend(keyword, vector, vector_weight=vector_weight)
    return dict(keyword or vector)


def seed_count(k: int) -> int:
    """How many of the best candidates are seeds: ``max(MIN_SEEDS, 2 k)``."""
    return max(MIN_SEEDS, 2 * k)


def seeds(scores: Mapping[K, float], *, k: int) -> list[K]:
    """The best candidates whose neighbourhoods count: ``seed_count(k)`` of them."""
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [key for key, _ in ranked[: seed_count(k)]]


def expand(
    scores: Mapping[K, float],
    runs: Mapping[K, Sequence[K]],
    *,
    window: int,
    weight: float,
) -> dict[K, float]:
    """Each fact within ``window`` of a seed scores its own plus ``weight`` x its neighbours'.

    ``runs[seed]`` is the ordered run of facts around ``seed`` reaching ``2 x window`` each side
    (shorter at the ends of the namespace), so every neighbour of every fact within ``window``
    of the seed is in it. Facts that are not candidates count 0. Candidates outside every run
    keep their own score.
    """
    out = dict(scores)
    done: set[K] = set()
    for seed, run in runs.items():
        if seed not in run:
            continue
        centre = run.index(seed)
        for i in range(max(0, centre - window), min(len(run), centre + window + 1)):
            key = run[i]
            if key in done:
                continue
            done.add(key)
            total = scores.get(key, 0.0)
            for j in range(max(0, i - window), min(len(run), i + window + 1)):
                if j != i:
                    total += weight * scores.get(run[j], 0.0)
            out[key] = total
    return out


def feedback_seeds(blended: Mapping[K, float]) -> list[K]:
    """The ``FEEDBACK_SEEDS`` best blended candidates (before neighbour context)."""
    ranked = sorted(blended.items(), key=lambda item: (-item[1], item[0]))
    return [key for key, _ in ranked[:FEEDBACK_SEEDS]]


def feedback(
    scores: Mapping[K, float],
    blended: Mapping[K, float],
    related: Mapping[K, float],
    *,
    weight: float,
) -> dict[K, float]:
    """``scores`` where each candidate of ``blended`` gains ``weight`` x its blended score x its
    ``related`` score over the best candidate's.

    ``related`` scores the facts by the feedback seeds' own words (the seeds left out). The
    blended score gates the gain, so only facts that already match the question somewhat rise:
    a chit-chat turn that merely repeats a name gains little. Facts that are not candidates
    gain nothing.
    """
    out = dict(scores)
    among = {key: score for key, score in related.items() if key in blended}
    best = max(among.values(), default=0.0)
    if weight <= 0 or best <= 0:
        return out
    for key, score in among.items():
        out[key] = out.get(key, 0.0) + weight * blended[key] * score / best
    return out


def protect(scores: Mapping[K, float], before: Mapping[K, float], *, top: int) -> dict[K, float]:
    """``scores`` where the best ``top`` facts of ``before`` (the ranking without feedback) keep
    their places and their scores; every other fact ranks below them, in its order by
    ``scores``.

    The facts that rose to or above the last protected score are squeezed, evenly and in order,
    between it and the best score that stayed below it, so the scores still rank the facts.
    """
    out = dict(scores)
    kept = sorted(before.items(), key=lambda item: (-item[1], item[0]))[: max(0, top)]
    if not kept:
        return out
    protected = {key for key, _ in kept}
    cap = kept[-1][1]
    others = [(key, s) for key, s in scores.items() if key not in protected]
    rising = sorted(
        ((key, s) for key, s in others if s >= cap), key=lambda item: (-item[1], item[0])
    )
    below = max((s for _, s in others if s < cap), default=0.0)
    step = (cap - below) / (len(rising) + 1)
    for i, (key, _) in enumerate(rising, 1):
        out[key] = cap - i * step
    for key, s in kept:
        out[key] = s
    return out


def feedback_weight() -> float:
    """``RECALL_FEEDBACK_WEIGHT`` in force (unset: the embedder's ``recall_feedback_weight``)."""
    weight = app_settings.RECALL_FEEDBACK_WEIGHT
    if weight is None:
        weight = get_embedder().recall_feedback_weight
    return float(weight)


def fact_related(
    namespace: str, seed_ids: Sequence[int], *, exclude: Iterable[int], among: Iterable[int]
) -> dict[int, float]:
    """BM25 scores of the facts ``among`` (recall's candidates, already filtered) for the
    blind-index terms of ``seed_ids`` that are not in ``exclude`` (the query's); the seeds
    left out. Scores follow ``recall.keyword_scores`` (namespace-wide N, avgdl and document
    frequencies).

    Built without the ORM's compiler (compiling was most of the time): the seeds' terms with
    their document frequencies, and the candidates' postings of those terms; one statement
    (``_related``; prepared on PostgreSQL). N and avgdl are those
    recall's candidate statement has just counted (``recall.recent_stats``); counted here only
    when it did not (counting a namespace's wide fact rows was most of the first statement's
    time on PostgreSQL).
    """
    seeds = [int(s) for s in dict.fromkeys(seed_ids)]
    seed_set = set(seeds)
    ids = [int(i) for i in dict.fromkeys(among) if int(i) not in seed_set]
    if not seeds or not ids:
        return {}
    skip = {int(term) for term in exclude}
    stats = recall.recent_stats(namespace)
    df, rows, stats = _related(_Asked(namespace, seeds, ids, skip), stats)
    if not df or stats is None:
        return {}
    total, avg_len = stats
    weight = {term: bm25.idf(total, n) for term, n in df.items()}
    found: dict[int, float] = {}
    for fact, term, tf, size in rows:  # only terms with a document frequency have postings
        score = bm25.term_score(
            float(tf), float(size or 0), weight=weight[int(term)], avgdl=avg_len
        )
        found[int(fact)] = found.get(int(fact), 0.0) + score
    return found


Related = tuple[dict[int, int], list[tuple[Any, ...]], tuple[int, float] | None]


@dataclass(frozen=True)
class _Asked:
    """What ``fact_related`` asks: the seeds' words not in ``skip``, among the facts ``ids``."""

    namespace: str
    seeds: list[int]
    ids: list[int]
    skip: set[int]


def _related_names() -> tuple[str, str, str, str, str]:
    """Quoted: the postings table, the fact table, the posting's fact column, the fact's term
    count column and its primary key."""
    quote = connection.ops.quote_name
    return (
        quote(FactTerm._meta.db_table),
        quote(Fact._meta.db_table),
        quote(str(FactTerm._meta.get_field("fact").column)),
        quote(str(Fact._meta.get_field("term_count").column)),
        quote(str(Fact._meta.pk.column)),
    )


def _related(asked: _Asked, stats: tuple[int, float] | None) -> Related:
    """``fact_related``'s lists in one round trip: the seeds' terms not in ``skip`` (query
    words, whose frequencies are not needed, are never counted), their document frequencies
    (rows 0), the candidates' postings of them (rows 1) and, when ``stats`` is None, N and
    avgdl (row 2). One statement for both databases (``dialect``). Prepared on PostgreSQL, so
    planned once for every namespace (a generic plan), which is why no condition here lets the
    planner start from the namespace alone:

    - the seeds' terms are read by fact id only: the seeds are recall's candidates of this
      namespace, and both lists below count this namespace's rows alone, so a foreign id could
      add a word, never a row of another namespace. With the namespace there too, the generic
      plan intersected the (fact, term) index with every posting of the namespace (all of
      them, in the large benchmark's database);
    - the postings are looked up per candidate on the (fact, term) index with the namespace
      checked on the fact row: with the namespace on the posting the planner read every
      posting of the frequent words through the (namespace, term) index (tens of thousands of
      rows in a large namespace) instead of a few per candidate."""
    namespace, seeds, ids, skip = asked.namespace, asked.seeds, asked.ids, asked.skip
    terms_table, facts_table, fact_id, length, pk = _related_names()
    sql_dialect = dialect.current()
    params: list[Any] = []
    seeds_sql = sql_dialect.any_of(f"s.{fact_id}", seeds, params, kind="bigint")
    skip_sql = sql_dialect.any_of("s.term", sorted(skip), params, kind="bigint")
    asked_terms = "SELECT term FROM w"
    sql = (
        f"WITH w AS MATERIALIZED (SELECT DISTINCT s.term FROM {terms_table} s "
        f"WHERE {seeds_sql} AND NOT ({skip_sql})) "
        f"SELECT 0 AS which, t.term AS a, count(*) AS b, 0 AS c, {sql_dialect.float('0.0')} AS d "
        f"FROM {terms_table} t WHERE t.namespace = %s "
        f"AND {sql_dialect.in_rows('t.term', asked_terms)} GROUP BY t.term "
        f"UNION ALL SELECT 1, t.{fact_id}, t.term, t.tf, {sql_dialect.float(f'f.{length}')} "
        f"FROM {terms_table} t JOIN {facts_table} f ON f.{pk} = t.{fact_id} "
        "WHERE f.namespace = %s AND "
    )
    params += [namespace, namespace]
    sql += sql_dialect.any_of(f"t.{fact_id}", ids, params, kind="bigint")
    sql += f" AND {sql_dialect.in_rows('t.term', asked_terms)}"
    if stats is None:
        average = sql_dialect.float(f"coalesce(avg({length}), 1)")
        sql += (
            f" UNION ALL SELECT 2, count(*), 0, 0, {average} FROM {facts_table} "
            "WHERE namespace = %s"
        )
        params.append(namespace)
    with sql_dialect.cursor() as cursor:
        cursor.execute(sql, params)
        result = cursor.fetchall()
    df: dict[int, int] = {}
    rows: list[tuple[Any, ...]] = []
    for which, a, b, c, d in result:
        if which == 0:
            df[int(a)] = int(b)
        elif which == 1:
            rows.append((a, b, c, d))
        else:
            stats = (int(a), float(d or 1.0) or 1.0)
            recall.remember_stats(namespace, *stats)
    return df, rows, stats


def fact_runs(
    namespace: str,
    seed_ids: Iterable[int],
    *,
    reach: int,
    kinds: Iterable[str] | None,
    metadata: dict[str, Any] | None,
) -> dict[int, list[int]]:
    """For each seed, the ids of the recall-eligible facts of ``namespace`` around it, in order.

    Up to ``reach`` facts before and after each seed in the order they were remembered (their
    ids), filtered like recall's candidates (current, ``kinds``, ``metadata``). One statement:
    a UNION ALL of two ``LIMIT reach`` scans of the ``(namespace, id)`` index per seed.
    """
    wanted = [int(s) for s in dict.fromkeys(seed_ids)]
    if not wanted or reach <= 0:
        return {}
    if not metadata:  # no JSON lookups to translate: SQL built without the ORM's compiler
        return runs.neighbour_runs(namespace, wanted, reach=reach, kinds=kinds)
    return orm_fact_runs(namespace, wanted, reach=reach, kinds=kinds, metadata=metadata)


def orm_fact_runs(
    namespace: str,
    wanted: list[int],
    *,
    reach: int,
    kinds: Iterable[str] | None,
    metadata: dict[str, Any] | None,
) -> dict[int, list[int]]:
    """``fact_runs`` through the ORM (its per-database translation of a metadata filter)."""
    if not wanted or reach <= 0:
        return {}
    eligible = recall.filtered_facts(namespace, kinds=kinds, metadata=metadata)
    # Each side's SQL is compiled once, with a stand-in seed, and reused for every seed (the
    # ORM's compiler was most of recall's time when it ran per seed).
    sides: list[tuple[str, list[Any], int]] = []
    for side in (
        eligible.filter(pk__lt=_STAND_IN).order_by("-pk"),
        eligible.filter(pk__gt=_STAND_IN).order_by("pk"),
    ):
        compiled, compiled_params = side.values_list("pk")[:reach].query.sql_with_params()
        where = [i for i, value in enumerate(compiled_params) if value == _STAND_IN]
        if len(where) != 1:  # pragma: no cover - the ORM passes a pk bound as a parameter
            raise AssertionError("the neighbour query's seed parameter was not found")
        sides.append((compiled, list(compiled_params), where[0]))
    parts: list[str] = []
    params: list[Any] = []
    for seed in wanted:
        for sql, sub_params, at in sides:
            # Seeds are ints from our own candidate lists (never user text).
            parts.append(f"SELECT {seed} AS seed, sub.* FROM ({sql}) sub")
            bound = list(sub_params)
            bound[at] = seed
            params.extend(bound)
    found: dict[int, list[int]] = {seed: [] for seed in wanted}
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        for seed, fact_id in cursor.fetchall():
            found[int(seed)].append(int(fact_id))
    return {seed: sorted([*ids, seed]) for seed, ids in found.items()}


def relevant(vector: Mapping[K, float], *, floor: float | None) -> bool:
    """Whether recall may answer: no ``floor``, no vector candidates (nothing to judge by), or
    a candidate whose cosine similarity reaches ``floor``."""
    if floor is None or not vector:
        return True
    return max(vector.values()) >= floor


def cut(scores: Mapping[K, float], *, floor: float, relative: float) -> list[tuple[K, float]]:
    """Hits above ``floor`` and at least ``relative`` x the best, best first (ties by key)."""
    kept = [(key, s) for key, s in scores.items() if s > floor]
    if kept and relative > 0:
        best = max(s for _, s in kept)
        kept = [(key, s) for key, s in kept if s >= relative * best]
    return sorted(kept, key=lambda item: (-item[1], item[0]))


def evidence_similarity() -> float:
    """``RECALL_EVIDENCE_SIMILARITY`` in force (unset: the embedder's
    ``recall_evidence_similarity``)."""
    floor = app_settings.RECALL_EVIDENCE_SIMILARITY
    if floor is None:
        floor = get_embedder().recall_evidence_similarity
    return float(floor)


#: How many facts within the window around a fact without evidence of its own must match the
#: query by themselves for neighbour context to make it a hit (``unpadded``).
PASSAGE_MATCHES = 2


def unpadded(
    ranked: Sequence[tuple[K, float]],
    keyword: Mapping[K, float],
    vector: Mapping[K, float],
    runs: Mapping[K, Sequence[K]] | None,
    *,
    window: int,
    similarity: float,
    limit: int | None = None,
) -> list[tuple[K, float]]:
    """``ranked`` without the hits that only neighbour context put there next to a lone match
    (the first ``limit`` of them when given: the rest is not looked at).

    A hit has evidence of its own when it shares a keyword with the query (keyword score above
    0) or its cosine similarity reaches ``similarity`` (the evidence floor). A hit without it
    stays only inside a passage about the query: at least ``PASSAGE_MATCHES`` facts within
    ``window`` of it (in ``runs``, the neighbour runs; the first run that holds it) have
    evidence of their own. "I made a blue bowl" stays after "I went to a pottery class" and
    "Did you make anything?"; the facts remembered before and after the one fact about an
    allergy do not, so a query with one match gets one hit, not that hit padded with whatever
    was stored next to it.
    """
    own: dict[K, bool] = {}

    def evidenced(key: K) -> bool:
        found = own.get(key)
        if found is None:
            found = own[key] = keyword.get(key, 0.0) > 0.0 or vector.get(key, -1.0) >= similarity
        return found

    where: dict[K, tuple[list[K], int]] = {}
    for run in (runs or {}).values():
        ordered = list(run)
        for i, key in enumerate(ordered):
            where.setdefault(key, (ordered, i))

    def in_passage(key: K) -> bool:
        if key not in where:
            return False
        ordered, i = where[key]
        near = ordered[max(0, i - window) : i] + ordered[i + 1 : i + window + 1]
        return sum(1 for other in near if evidenced(other)) >= PASSAGE_MATCHES

    kept: list[tuple[K, float]] = []
    for key, score in ranked:
        if evidenced(key) or in_passage(key):
            kept.append((key, score))
            if limit is not None and len(kept) >= limit:
                break
    return kept


def context_settings() -> tuple[int, float]:
    """``(RECALL_CONTEXT_WINDOW, RECALL_CONTEXT_WEIGHT)`` in force (the weight: the embedder's
    ``recall_context_weight`` unless set)."""
    weight = app_settings.RECALL_CONTEXT_WEIGHT
    if weight is None:
        weight = get_embedder().recall_context_weight
    return app_settings.RECALL_CONTEXT_WINDOW, float(weight)
