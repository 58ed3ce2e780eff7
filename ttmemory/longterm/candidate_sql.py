"""The candidate statement's text, written once for every database.

One statement returns, as rows ``(which, key, score, other)``: 0, the keyword list (BM25 over
the blind index, ``bm25``'s formula in SQL); 1, the vector list, where pgvector ranks it
(``vector``) and so also, with ``context``, 3 and 4, the seeds and their neighbour runs
(``runs.runs_cte``); 2, the namespace's BM25 statistics (N, avgdl) when it counted them; 5,
the namespace's generation (``vector_cache``). Where vectors are ranked in numpy, their ids
come in (``vector_ids``) as candidates for the frequent words. What PostgreSQL and SQLite spell
differently (list parameters, float casts, materialised CTEs, per-row joins) comes from
``dialect``; the statement's shape does not depend on the database.

Keyword BM25 is computed from the postings index alone: each posting carries its fact's length
(``FactTerm.length``), so ``part`` scores every posting read without a fact row, and ``kw``
reads a fact row only for the best ``limit`` x ``SCORED_AHEAD`` facts by score, to keep the
eligible ones (current, of ``kinds``; with ``kinds`` every match is ranked first). In a
namespace above ``bm25.BUDGET_ABOVE_FACTS`` facts (``budgeted``; below it every query word's
postings are read) the rarest query words are read while their postings stay within
``bm25.POSTINGS_BUDGET`` (keyword-only: the rarest word at least, else a query of frequent
words alone would find nothing). The best ``bm25.FREQUENT_CANDIDATES`` facts they found, and
the vector candidates, are also scored by the frequent words (``often``), their postings
looked up on the (fact, term) index, one lookup per candidate (``Dialect.join_each``). Lost:
facts matching only frequent words and far in vector space (docs/benchmarks.md, "Repetitive
vocabulary"). When every word fits, ``often`` reads nothing and the ranking is uncapped BM25's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connection

from ttmemory.longterm import bm25, recall, runs, vector_cache
from ttmemory.longterm.bm25 import Sql
from ttmemory.longterm.dialect import Dialect
from ttmemory.models import FactTerm, binding

#: The keyword list is cut to ``limit`` eligible facts (current, not expired) from the best
#: ``limit`` times this by score: ranked without reading a fact row, then checked.
SCORED_AHEAD = 4


@dataclass(frozen=True)
class Context:
    """Neighbour context fetched with the candidates (where the vector list is ranked in SQL,
    or there is none).

    The statement blends both lists as ``fusion.fuse`` does (``vector_weight``) and returns,
    for its best ``seeds`` candidates, the ``reach`` eligible facts before and after each (what
    ``fusion.fact_runs`` returns). Callers ask for a few more seeds than they use: a seed of
    their own ranking that the statement did not pick is fetched by ``fusion.fact_runs``.
    """

    seeds: int
    reach: int
    vector_weight: float


def _bm25(d: Dialect, tf: str, length: str, n: str, df: str, avgdl: str) -> str:
    """``bm25.term_score`` as SQL over these columns (the idf of ``df`` in ``n`` facts)."""
    weight = bm25.idf(Sql(n), Sql(df), ln=Sql.ln)
    return bm25.term_score(Sql(d.float(tf)), Sql(d.float(length)), weight=weight, avgdl=Sql(avgdl))


def _stats(
    d: Dialect,
    params: dict[str, Any],
    *,
    cached: tuple[int, float] | None,
    known: tuple[int, int, float] | None,
) -> str:
    """The body of ``st (n, avgdl)``: given (``cached``), counted, or the ones counted before
    at the generation this statement reads (``known``: (generation, N, avgdl); else counted,
    and the count's scan runs only then: its condition is a one-time filter)."""
    fact = runs.fact_table()
    count = (
        f"SELECT {d.float('count(*)')} AS n, {d.float('coalesce(avg(term_count), 1)')} AS avgdl "
        f"FROM {fact} WHERE namespace = %(ns)s"
    )
    if cached is not None:
        params["n"], params["avgdl"] = float(cached[0]), float(cached[1] or 1.0)
        return f"SELECT {d.float('%(n)s')} AS n, {d.float('%(avgdl)s')} AS avgdl"
    if known is None:
        return count
    params["known"], params["n"], params["avgdl"] = known[0], float(known[1]), known[2]
    same = "(SELECT generation FROM g) = %(known)s"
    return (
        f"SELECT {d.float('%(n)s')} AS n, {d.float('%(avgdl)s')} AS avgdl WHERE {same} "
        f"UNION ALL SELECT n, avgdl FROM ({count} AND NOT {same}) c WHERE NOT {same}"
    )


def statement(
    d: Dialect,
    namespace: str,
    terms: Mapping[int, int],
    *,
    limit: int,
    kinds: list[str] | None,
    now: dt.datetime,
    cached: tuple[int, float] | None,
    vector: list[float] | None = None,
    model: str = "",
    approximate: bool = False,
    given: list[int] | None = None,
    vector_ids: list[int] | None = None,
    context: Context | None = None,
    generation: bool = False,
    known: tuple[int, int, float] | None = None,
    budgeted: bool = True,
) -> tuple[str, dict[str, Any]]:
    """The candidate statement and its parameters (see the module's docstring).

    ``vector``: ranked here with pgvector (``approximate``: through the HNSW index;
    ``given``: only these facts, ``vector_cache.shortlist``'s, instead of every fact);
    ``vector_ids``: the vector candidates ranked elsewhere (numpy). ``cached``: N and avgdl
    to use (else row 2 with the ones counted); ``generation``: row 5; ``known``:
    ``(generation, N, avgdl)`` counted before, used when the generation read is still that
    one (with ``generation`` only); ``budgeted``: keyword search within the postings budget
    (``bm25.budgeted``), else every query word's postings read whole."""
    fact, term = runs.fact_table(), connection.ops.quote_name(FactTerm._meta.db_table)
    params: dict[str, Any] = {"ns": namespace, "now": now}
    # A query word's postings, looked up per word in the (namespace, term) index: as a join of
    # the namespace's postings with the words, a plan made before autovacuum analysed a
    # namespace that just grew read every posting of the namespace per word (50 ms at 10,000
    # facts).
    postings = "p.namespace = %(ns)s AND p.term = q.term"
    current = runs.eligible(d, "f", kinds, params)
    pairs = d.table({"term": list(terms), "word": list(terms.values())}, params)
    parts = [
        f"q AS ({pairs})",
        d.materialized("g", f"SELECT {vector_cache.generation_sql('%(ns)s')} AS generation")
        if generation
        else "",
        d.materialized("st", _stats(d, params, cached=cached, known=known)),
        # Document frequency per query word (its namespace hash and its legacy hash summed).
        f"df AS (SELECT q.word, {d.float('count(*)')} AS n FROM q "
        f"{d.join_each('p', term, where=postings, columns='1 AS one')} GROUP BY q.word)",
    ]
    select = [
        "SELECT 0 AS which, id, score, CAST(0 AS BIGINT) AS other FROM kw",
        "SELECT 2, CAST(st.n AS BIGINT), st.avgdl, 0 FROM st" if cached is None else "",
    ]
    candidates = ""
    if vector is not None:
        dim = len(vector)
        if not approximate and binding.server_binds():  # run by ``Dialect.cursor`` (``_read``)
            params["vec"], vec = binding.BinaryVector(vector), "%(vec)b"
        else:  # the HNSW search goes with its settings (``recall.run_with_planner_settings``)
            params["vec"], vec = recall.vector_literal(vector), "%(vec)s"
        params["model"], params["dim"] = model, dim
        if given is not None:
            # The shortlist picked in memory (vector_cache), ranked here with pgvector's own
            # arithmetic: the same distances and order as the scan of every fact below. Joined
            # from the list, so each is one primary-key lookup (an id = ANY(...) filter had the
            # planner scan the namespace, testing every row against the list).
            source = f"({d.table({'id': given}, params)}) v JOIN {fact} f ON f.id = v.id"
        else:
            source = f"{fact} f"
        if approximate:
            # The expression the HNSW index of this dimension is built on (vector_index).
            distance = f"(f.embedding::vector({dim})) <=> {vec}::vector({dim})"
            order = "distance"
        else:
            distance = f"f.embedding <=> {vec}::vector"
            order = "distance, f.id"
        parts.append(
            f"vec AS (SELECT f.id, {distance} AS distance FROM {source} "
            f"WHERE f.namespace = %(ns)s AND f.embedding_model = %(model)s "
            f"AND f.embedding_dim = %(dim)s AND {current} ORDER BY {order} LIMIT {int(limit)})"
        )
        select.append("SELECT 1, id, distance, 0 FROM vec")
        candidates = " UNION SELECT id FROM vec"
    elif vector_ids is not None:
        parts.append(f"vec AS ({d.table({'vid': vector_ids}, params)})")
        candidates = " UNION SELECT vid FROM vec"
    if generation:
        select.append(f"SELECT 5, generation, {d.float('0.0')}, 0 FROM g")
    # BM25 from the index alone: each posting carries its fact's length (``FactTerm.length``),
    # so no fact row is read until the ranked list is cut to the eligible ``limit``.
    score = _bm25(d, "p.tf", "p.length", "st.n", "df.n", "st.avgdl")
    each = d.join_each("p", term, where=postings, columns="p.fact_id, p.tf, p.length")
    words = "q"
    if budgeted:
        params["budget"] = bm25.POSTINGS_BUDGET  # budgeted: never inside bm25.uncapped
        rarest = " OR rank = 1" if vector is None and vector_ids is None else ""
        parts += [
            d.materialized(
                "rd",
                "SELECT word FROM (SELECT word, sum(n) OVER (ORDER BY n, word) AS upto, "
                "row_number() OVER (ORDER BY n, word) AS rank "
                f"FROM df) r WHERE upto <= %(budget)s{rarest}",
            ),
            d.materialized(
                "freq",
                "SELECT q.term FROM q JOIN df ON df.word = q.word "
                "WHERE q.word NOT IN (SELECT word FROM rd)",
            ),
        ]
        words = "q JOIN rd ON rd.word = q.word"
    parts.append(
        f"part AS (SELECT p.fact_id AS id, sum({score}) AS score FROM {words} {d.then} df "
        f"ON df.word = q.word CROSS JOIN st {each} GROUP BY p.fact_id)"
    )
    total = "part"
    if budgeted:
        params["picks"] = bm25.FREQUENT_CANDIDATES
        frequent = d.in_rows("p.term", "SELECT term FROM freq")
        lookup = d.join_each(
            "p", term, where=f"p.fact_id = c.id AND {frequent}", columns="p.term, p.tf, p.length"
        )
        parts += [
            "cand AS (SELECT id FROM (SELECT id FROM part ORDER BY score DESC, id "
            f"LIMIT %(picks)s) t{candidates})",
            f"often AS (SELECT c.id, sum({score}) AS score FROM cand c {lookup} "
            "JOIN q ON p.term = q.term JOIN df ON df.word = q.word CROSS JOIN st "
            "WHERE EXISTS (SELECT 1 FROM freq) GROUP BY c.id)",
            # A candidate's score: its read words' (``part``) plus its frequent words'.
            "total AS (SELECT coalesce(part.id, o.id) AS id, coalesce(part.score, 0.0) "
            "+ coalesce(o.score, 0.0) AS score FROM part FULL JOIN often o ON o.id = part.id)",
        ]
        total = "total"
    # The best-scored facts, then the eligible ones among them (one fact row read each). Kinds
    # asked for may be rare among the matches: then every match is ranked before the cut.
    ahead = "" if kinds else f" LIMIT {int(limit) * SCORED_AHEAD}"
    eligible = d.join_each("f", fact, where=f"f.id = t.id AND {current}", columns="f.id")
    parts.append(
        f"kw AS (SELECT t.id, t.score FROM (SELECT id, score FROM {total} ORDER BY score DESC, "
        f"id{ahead}) t {eligible} ORDER BY t.score DESC, t.id LIMIT {int(limit)})"
    )
    if context is not None and context.seeds > 0 and context.reach > 0:
        _context(d, parts, select, params, context, current, hybrid=vector is not None)
    union = " UNION ALL ".join(s for s in select if s)
    # Wrapped in a SELECT: a read that says so at its first word (logs, statement filters).
    body = ",\n".join(p for p in parts if p)
    return f"SELECT * FROM (WITH {body}\n{union}) candidates", params


def _context(
    d: Dialect,
    parts: list[str],
    select: list[str],
    params: dict[str, Any],
    context: Context,
    current: str,
    *,
    hybrid: bool,
) -> None:
    """Seeds and their neighbour runs as CTEs after ``kw`` (and ``vec``): rows 3 (seed, seed)
    and 4 (seed, neighbour). The blend is ``recall.blend``'s: BM25 over its best (1 if 0),
    similarity min-max (span 1 if 0), summed with the weight; one list alone ranks by its own
    scores, as ``fusion.fuse`` does."""
    if hybrid:
        params["w"] = float(context.vector_weight)
        fused = recall.blend_score(
            Sql("coalesce(kw.score / nk.top, 0.0)"),
            Sql("coalesce((vs.sim - nv.low) / nv.span, 0.0)"),
            weight=Sql(d.float("%(w)s")),
        )
        parts += [
            f"vs AS (SELECT id, {d.float('1.0')} - distance AS sim FROM vec)",
            "nk AS (SELECT count(*) AS n, coalesce(nullif(max(score), 0), 1.0) AS top FROM kw)",
            "nv AS (SELECT count(*) AS n, min(sim) AS low, "
            "coalesce(nullif(max(sim) - min(sim), 0), 1.0) AS span FROM vs)",
            "fused AS (SELECT coalesce(kw.id, vs.id) AS id, CASE WHEN nk.n > 0 AND nv.n > 0 "
            f"THEN {fused} ELSE coalesce(kw.score, vs.sim) END AS score "
            "FROM kw FULL JOIN vs ON vs.id = kw.id CROSS JOIN nk CROSS JOIN nv)",
        ]
        source = "fused"
    else:
        source = "kw"
    parts += [
        f"seeds AS (SELECT id FROM {source} ORDER BY score DESC, id LIMIT {int(context.seeds)})",
        runs.runs_cte(d, reach=context.reach, eligible=current),
    ]
    select += ["SELECT 3, id, 0.0, id FROM seeds", "SELECT 4, seed, 0.0, id FROM runs"]
