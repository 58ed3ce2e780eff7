"""Recall's candidate lists (BM25 keyword scores, cosine vector scores) in as few round trips as
the database allows. How they are fused is ``ttmemory.longterm.recall.blend``'s business
(the SQL blend of the neighbour seeds is generated from its ``blend_score``).

PostgreSQL with pgvector: ONE statement returns both lists, the namespace's BM25 statistics
(document frequencies, N and mean length folded in as CTEs, query terms as one array, so the
statement text is the same for every query of a k and psycopg prepares it) and, for neighbour
context, the runs of eligible facts around the best blended candidates (``Context``). SQLite
and PostgreSQL without pgvector: one keyword statement with the statistics folded in, one read
of the packed vectors scored in numpy. With ``RECALL_VECTOR_CACHE_MB``, the vectors of a
namespace searched exactly come from this process's memory while the namespace's generation is
the one they were read with (``vector_cache``; on PostgreSQL the generation comes back with the
keyword list, in the same statement). Both return what ``recall.keyword_scores`` and
``recall.vector_scores`` return (same formula, same order, same ties), without building ORM
queries: on the 2-core benchmark machine the ORM version of the same three queries spent about
2-4 ms per recall compiling SQL, more than the database took to answer them (docs/benchmarks.md,
"Recall latency").

Keyword search is bounded in every namespace, on every database, with or without a vector: a
frequent word's posting list (thousands of rows in a namespace of repetitive facts, each joined
to its fact) is not read whole. The rarest query words are read while their postings stay
within ``bm25.POSTINGS_BUDGET`` (without a vector, the rarest word at least); every candidate
they name and every vector candidate is then scored by BM25 over all query words. When every
query word fits, the ranking is ``recall.keyword_scores``' (uncapped) exactly.

A metadata filter goes through the ORM functions instead (its JSON lookups are Django's to
translate per database); so does nothing else.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from ttmemory.conf import app_settings
from ttmemory.longterm import bm25, dialect, recall, vector_cache
from ttmemory.longterm.bm25 import Sql
from ttmemory.models import Fact, FactTerm
from ttmemory.models.binding import binding_cursor
from ttmemory.models.vectors import PGVECTOR, vector_storage


@dataclass
class Candidates:
    """Both ranked lists of a query (fact id -> score) and the namespace's size; with
    ``Context``, the runs of eligible facts around the best blended candidates (``runs``)."""

    keyword: dict[int, float]
    vector: dict[int, float]
    facts: int
    runs: dict[int, list[int]] | None = None


@dataclass(frozen=True)
class Context:
    """Neighbour context fetched with the candidates (PostgreSQL with pgvector).

    The statement blends both lists as ``fusion.fuse`` does (``vector_weight``) and returns,
    for its best ``seeds`` candidates, the ``reach`` eligible facts before and after each (what
    ``fusion.fact_runs`` returns). Callers ask for a few more seeds than they use: a seed of
    their own ranking that the statement did not pick is fetched by ``fusion.fact_runs``.
    """

    seeds: int
    reach: int
    vector_weight: float


def _tables() -> tuple[str, str]:
    quote = connection.ops.quote_name
    return quote(Fact._meta.db_table), quote(FactTerm._meta.db_table)


def _current(alias: str, placeholder: str) -> str:
    # recall.fact_filter's conditions, spelled out: current, not ended, not expired.
    return (
        f"{alias}.superseded_by_id IS NULL AND {alias}.valid_to IS NULL AND "
        f"({alias}.expires_at IS NULL OR {alias}.expires_at > {placeholder})"
    )


def _bm25(tf: str, length: str, n: str, df: str, avgdl: str) -> str:
    """``bm25.term_score`` as SQL over these columns (the idf of ``df`` in ``n`` facts)."""
    weight = bm25.idf(Sql(n), Sql(df), ln=Sql.ln)
    return bm25.term_score(Sql(tf), Sql(length), weight=weight, avgdl=Sql(avgdl))


def candidates(
    namespace: str,
    *,
    terms: Mapping[int, int],
    vector: list[float] | None,
    model: str,
    limit: int,
    kinds: Iterable[str] | None,
    context: Context | None = None,
) -> Candidates:
    """The best ``limit`` facts of ``namespace`` by keyword (``terms``, see
    ``blind.query_hashes``) and by ``vector`` (None: keyword only), current and of ``kinds``.

    Vector search is exact up to ``RECALL_EXACT_LIMIT`` facts, through the HNSW index of the
    vector's dimension above it (PostgreSQL with pgvector; exact in numpy elsewhere). Keyword
    search reads only ``bm25.POSTINGS_BUDGET`` postings of the rarest query words whole
    (without a vector, the rarest word's at least; see the module's docstring).
    ``context``: the neighbour runs of the best candidates too, in the same statement
    (PostgreSQL with pgvector; elsewhere ``runs`` is None and the caller fetches them).
    """
    kinds = list(kinds) if kinds else None
    if vector_storage(connection) == PGVECTOR:
        return _postgresql(namespace, terms, vector, model, limit, kinds, context)
    return _portable(namespace, terms, vector, model, limit, kinds)


# ---------------------------------------------------------------------------------------------
# PostgreSQL with pgvector: one statement


def _postgresql(
    namespace: str,
    terms: Mapping[int, int],
    vector: list[float] | None,
    model: str,
    limit: int,
    kinds: list[str] | None,
    context: Context | None,
) -> Candidates:
    cached = recall.cached_stats(namespace)
    # A small namespace's statistics are counted exactly; while its generation holds, the
    # statement reuses the ones counted before (vector_cache.keep_stats) instead.
    tracked = cached is None and vector_cache.tracked()
    known = vector_cache.known_stats(namespace) if tracked else None
    size = cached[0] if cached is not None else recall.size_hint(namespace)
    if size is None and known is not None:
        size = known[1]
    if size is None:  # not seen for a while: count first (once per STATS_CACHE_SECONDS)
        cached = recall.namespace_stats(namespace)
        size = cached[0]
        tracked, known = False, None
    large = size > app_settings.RECALL_EXACT_LIMIT
    approximate = vector is not None and large
    now = timezone.now()
    cache_key = None
    if vector is not None and not large and vector_cache.usable():
        # Exact vector search from this process's memory while the namespace's generation,
        # read by the same statement as the keyword list, is the matrix's (vector_cache).
        cache_key = vector_cache.key(namespace, model, len(vector))
        matrix = vector_cache.get(cache_key)
        if matrix is not None:
            given = vector_cache.shortlist(
                matrix, vector, now=vector_cache.now_key(now), kinds=kinds, limit=limit
            )
            sql, params = _postgresql_sql(
                namespace, terms, vector, model, limit, kinds, cached, approximate=False,
                context=context, now=now, given=given, generation=True,
                known=known,
            )  # fmt: skip
            found, generation = _postgresql_rows(namespace, sql, params, size, context)
            if generation == matrix.generation:
                vector_cache.hit()  # served: no count towards reading it again
                return found
            vector_cache.drop(cache_key)  # changed since: the database's own scan, below
            if tracked:  # the statistics that statement counted at the new generation
                known = vector_cache.known_stats(namespace)
    sql, params = _postgresql_sql(
        namespace, terms, vector, model, limit, kinds, cached, approximate=approximate,
        context=context, now=now,
        generation=cache_key is not None or (tracked and not large),
        known=known if tracked and not large else None,
    )  # fmt: skip
    found, generation = _postgresql_rows(
        namespace, sql, params, size, context, approximate=approximate
    )
    fits = vector is not None and size * (len(vector) * 4 + 20) <= vector_cache.budget()
    if (
        cache_key is not None
        and vector is not None
        and fits
        and vector_cache.recalled(cache_key, generation)
    ):  # READ_AFTER_RECALLS recalls at this generation: read the matrix for the next ones
        vector_cache.put(cache_key, vector_cache.read(namespace, model, len(vector)))
    return found


def _postgresql_rows(
    namespace: str,
    sql: str,
    params: dict[str, Any],
    size: int,
    context: Context | None,
    *,
    approximate: bool = False,
) -> tuple[Candidates, int]:
    """Runs the candidate statement: its lists, and the generation it read (0: none)."""
    if approximate:
        rows = recall.run_with_planner_settings(sql, params)
    else:
        # Prepared on its connection whatever the project's DATABASES options say: planning
        # this statement cost the server more than running it at 1,000 facts. The parameters
        # stay ``%s`` (text, bound by the server): binary ones (``%b``) cost psycopg 1.2 ms
        # more per recall here (docs/benchmarks.md, "Fact recall: where the time goes").
        with binding_cursor(prepare=True) as (cursor, _):
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    keyword: dict[int, float] = {}
    vectors: dict[int, float] = {}
    facts = size
    generation = 0
    runs: dict[int, list[int]] | None = {} if context is not None else None
    counted: float | None = None
    for which, key, score, other in rows:
        if which == 0:
            keyword[int(key)] = float(score)
        elif which == 1:
            vectors[int(key)] = 1.0 - float(score)
        elif which == 2:  # the statistics row: N and avgdl
            facts, counted = int(key), float(score)
            recall.remember_stats(namespace, facts, counted)
        elif which == 5:  # the namespace's generation (vector_cache)
            generation = int(key)
        elif runs is not None:  # 3: a seed (its own neighbour), 4: a neighbour of seed ``key``
            runs.setdefault(int(key), []).append(int(other))
    if counted is not None and generation:  # counted (or reused) in that generation's snapshot
        vector_cache.keep_stats(namespace, generation, facts, counted)
    if runs:
        runs = {seed: sorted(ids) for seed, ids in runs.items()}
    return Candidates(keyword, vectors, facts, runs), generation


def _postgresql_sql(
    namespace: str,
    terms: Mapping[int, int],
    vector: list[float] | None,
    model: str,
    limit: int,
    kinds: list[str] | None,
    cached: tuple[int, float] | None,
    *,
    approximate: bool,
    context: Context | None = None,
    now: dt.datetime | None = None,
    given: list[int] | None = None,
    generation: bool = False,
    known: tuple[int, int, float] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The candidate statement and its parameters. ``approximate``: vector search through
    HNSW (keyword search reads ``bm25.POSTINGS_BUDGET`` postings whole in every case).
    ``given``: the facts that can be in the vector list (``vector_cache.shortlist``), ranked
    instead of the namespace's every fact; ``generation``: a row 5 with the namespace's
    generation, and the statistics row 2 whenever ``cached`` is None. ``known``:
    ``(generation, N, avgdl)`` counted before (``vector_cache.known_stats``), used instead of
    counting when the generation read is still that one (with ``generation`` only)."""
    fact, term = _tables()
    params: dict[str, Any] = {
        "ns": namespace,
        "now": now or timezone.now(),
        "hashes": list(terms),
        "words": list(terms.values()),
    }
    kind_filter = ""
    if kinds:
        kind_filter = " AND f.kind = ANY(%(kinds)s)"
        params["kinds"] = kinds
    current = _current("f", "%(now)s") + kind_filter
    count = (
        f"SELECT count(*)::float8 AS n, coalesce(avg(term_count), 1)::float8 AS avgdl "
        f"FROM {fact} WHERE namespace = %(ns)s"
    )
    if cached is None and known is not None and generation:
        # The statistics counted at the generation this statement reads, if it is still the
        # one kept; else counted (the CASE runs the count's subquery only when it is needed).
        stats = (
            "SELECT s[1] AS n, s[2] AS avgdl FROM (SELECT CASE WHEN (SELECT generation FROM g) "
            "= %(known)s THEN ARRAY[%(n)s::float8, %(avgdl)s::float8] ELSE (SELECT "
            f"ARRAY[count(*)::float8, coalesce(avg(term_count), 1)::float8] FROM {fact} "
            "WHERE namespace = %(ns)s) END AS s) counted"
        )
        params["known"], params["n"], params["avgdl"] = known[0], float(known[1]), known[2]
    elif cached is None:
        stats = count
    else:
        stats = "SELECT %(n)s::float8 AS n, %(avgdl)s::float8 AS avgdl"
        params["n"], params["avgdl"] = float(cached[0]), float(cached[1] or 1.0)
    parts = [
        "WITH q AS (SELECT h.term, h.word FROM unnest(%(hashes)s::bigint[], "
        "%(words)s::bigint[]) AS h(term, word)),",
        f"g AS MATERIALIZED (SELECT {vector_cache.generation_sql('%(ns)s')} AS generation),"
        if generation
        else "",
        f"st AS MATERIALIZED ({stats}),",
        # Document frequency per query word (its namespace hash and its legacy hash summed).
        f"df AS (SELECT q.word, count(*)::float8 AS n FROM {term} p JOIN q ON p.term = q.term "
        "WHERE p.namespace = %(ns)s GROUP BY q.word),",
    ]
    select = [
        "SELECT 0 AS which, id, score, 0::bigint AS other FROM kw",
        "SELECT 2, st.n::bigint, st.avgdl, 0 FROM st" if cached is None else "",
    ]
    if vector is not None:
        dim = len(vector)
        params["vec"] = recall.vector_literal(vector)
        params["model"], params["dim"] = model, dim
        if given is not None:
            # The shortlist picked in memory (vector_cache), ranked here with pgvector's own
            # arithmetic: the same distances and order as the scan of every fact below. Joined
            # from the list, so each is one primary-key lookup (an id = ANY(...) filter had the
            # planner scan the namespace, testing every row against the list).
            params["vids"] = given
            source = f"unnest(%(vids)s::bigint[]) AS v(id) JOIN {fact} f ON f.id = v.id"
        else:
            source = f"{fact} f"
        if approximate:
            # The expression the HNSW index of this dimension is built on (vector_index).
            distance = f"(f.embedding::vector({dim})) <=> %(vec)s::vector({dim})"
            order = "distance"
        else:
            distance = "f.embedding <=> %(vec)s::vector"
            order = "distance, f.id"
        parts.append(
            f"vec AS (SELECT f.id, {distance} AS distance FROM {source} "
            f"WHERE f.namespace = %(ns)s AND f.embedding_model = %(model)s "
            f"AND f.embedding_dim = %(dim)s AND {current} ORDER BY {order} LIMIT {int(limit)}),"
        )
    if vector is not None:
        select.append("SELECT 1, id, distance, 0 FROM vec")
    if generation:
        select.append("SELECT 5, generation, 0.0::float8, 0 FROM g")
    score = _bm25("r.tf::float8", "f.term_count::float8", "st.n", "df.n", "st.avgdl")
    # Query words are read rarest first while their postings stay within the budget
    # (bm25.POSTINGS_BUDGET; keyword-only: the rarest word at least, else a query of frequent
    # words alone would find nothing): ``hit``, each posting joined to its fact once in ``kw``.
    # The facts they name and the vector candidates are the candidates; the postings of the
    # frequent words are looked up for those alone (``often``), on the (fact, term) index: the
    # LATERAL subquery (OFFSET 0 keeps it one) stops the planner from reading every posting of
    # a frequent word to hash-join them. Every candidate is scored by BM25 over ALL query
    # words. Lost: facts matching only frequent words and far in vector space
    # (docs/benchmarks.md, "Repetitive vocabulary"). When every word fits, ``often`` reads
    # nothing and the ranking is uncapped BM25's.
    params["budget"] = bm25.postings_budget()
    rarest = "" if vector is not None else " OR rank = 1"
    union = " UNION SELECT id FROM vec" if vector is not None else ""
    parts.append(
        "rare AS MATERIALIZED (SELECT word FROM (SELECT word, sum(n) OVER (ORDER BY n, word) "
        "AS upto, row_number() OVER (ORDER BY n, word) AS rank "
        f"FROM df) r WHERE upto <= %(budget)s{rarest}),"
        " freq AS MATERIALIZED (SELECT coalesce(array_agg(q.term), '{}') AS terms FROM q "
        "JOIN df ON df.word = q.word WHERE q.word NOT IN (SELECT word FROM rare)),"
        f" hit AS (SELECT p.fact_id AS id, q.word, p.tf FROM {term} p JOIN q ON p.term = q.term "
        "JOIN rare ON rare.word = q.word WHERE p.namespace = %(ns)s),"
        f" often AS (SELECT c.id, q.word, p.tf FROM (SELECT id FROM hit{union}) c "
        f"CROSS JOIN LATERAL (SELECT p.term, p.tf FROM {term} p WHERE p.fact_id = c.id "
        "AND p.term = ANY((SELECT terms FROM freq)::bigint[]) OFFSET 0) p "
        "JOIN q ON p.term = q.term "
        "WHERE cardinality((SELECT terms FROM freq)) > 0),"
        f" kw AS (SELECT r.id, sum({score}) AS score FROM (SELECT * FROM hit UNION ALL "
        f"SELECT * FROM often) r JOIN df ON df.word = r.word JOIN {fact} f ON f.id = r.id "
        f"CROSS JOIN st WHERE {current} GROUP BY r.id ORDER BY score DESC, r.id "
        f"LIMIT {int(limit)})"
    )
    if context is not None and context.seeds > 0 and context.reach > 0:
        _context_sql(parts, select, params, context, current, hybrid=vector is not None)
    union = " UNION ALL ".join(s for s in select if s)
    # Wrapped in a SELECT: a read that says so at its first word (logs, statement filters).
    sql = "SELECT * FROM (" + "\n".join(p for p in parts if p) + "\n" + union + ") AS candidates"
    return sql, params


def _context_sql(
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
    scores, as ``fusion.fuse`` does. Two index scans of ``LIMIT reach`` per seed on
    ``ttm_fact_ns_id_idx``, as ``fusion.fact_runs``.
    """
    fact, _ = _tables()
    seeds, reach = int(context.seeds), int(context.reach)
    if hybrid:
        params["w"] = float(context.vector_weight)
        fused = recall.blend_score(
            Sql("coalesce(kw.score / nk.top, 0.0)"),
            Sql("coalesce((vs.sim - nv.low) / nv.span, 0.0)"),
            weight=Sql("%(w)s::float8"),
        )
        blended = (
            ", vs AS (SELECT id, 1.0::float8 - distance AS sim FROM vec),"
            " nk AS (SELECT count(*) AS n, coalesce(nullif(max(score), 0), 1.0) AS top FROM kw),"
            " nv AS (SELECT count(*) AS n, min(sim) AS low, "
            "coalesce(nullif(max(sim) - min(sim), 0), 1.0) AS span FROM vs),"
            " fused AS (SELECT coalesce(kw.id, vs.id) AS id, CASE WHEN nk.n > 0 AND nv.n > 0 "
            f"THEN {fused} ELSE coalesce(kw.score, vs.sim) END AS score "
            "FROM kw FULL JOIN vs ON vs.id = kw.id CROSS JOIN nk CROSS JOIN nv)"
        )
        parts.append(blended)
        source = "fused"
    else:
        source = "kw"
    parts.append(
        f", seeds AS (SELECT id FROM {source} ORDER BY score DESC, id LIMIT {seeds}),"
        f" runs AS (SELECT s.id AS seed, n.id FROM seeds s CROSS JOIN LATERAL (SELECT f.id "
        f"FROM {fact} f WHERE f.namespace = %(ns)s AND f.id < s.id AND {current} "
        f"ORDER BY f.id DESC LIMIT {reach}) n UNION ALL SELECT s.id, n.id FROM seeds s "
        f"CROSS JOIN LATERAL (SELECT f.id FROM {fact} f WHERE f.namespace = %(ns)s "
        f"AND f.id > s.id AND {current} ORDER BY f.id LIMIT {reach}) n)"
    )
    select.append("SELECT 3, id, 0.0, id FROM seeds")
    select.append("SELECT 4, seed, 0.0, id FROM runs")


# ---------------------------------------------------------------------------------------------
# SQLite, PostgreSQL without pgvector, other databases: keyword in SQL, vectors in numpy


def _portable(
    namespace: str,
    terms: Mapping[int, int],
    vector: list[float] | None,
    model: str,
    limit: int,
    kinds: list[str] | None,
) -> Candidates:
    fact, _ = _tables()
    p = "%s"
    now = timezone.now()
    kind_params: list[Any] = []
    kind_sql = (
        " AND " + dialect.current().any_of("f.kind", kinds, kind_params, kind="text")
        if kinds
        else ""
    )
    current = _current("f", p) + kind_sql
    stats = recall.cached_stats(namespace)
    generation: int | None = None
    if stats is None and vector_cache.tracked():
        # Read first: statistics counted after it are of this generation or a later one, and
        # are reused only while it holds (vector_cache.keep_stats).
        generation = vector_cache.generation(namespace)
        known = vector_cache.known_stats(namespace)
        if known is not None and generation and known[0] == generation:
            stats = (known[1], known[2])
    keyword: dict[int, float] = {}
    with connection.cursor() as cursor:
        if stats is None:
            cursor.execute(
                f"SELECT count(*), avg(term_count) FROM {fact} WHERE namespace = {p}", [namespace]
            )
            n, avg = cursor.fetchone()
            stats = (int(n or 0), float(avg or 1.0) or 1.0)
            recall.remember_stats(namespace, *stats)
            if generation:
                vector_cache.keep_stats(namespace, generation, *stats)
        vectors: dict[int, float] | None = None
        if vector is not None and vector_cache.usable():
            vectors = _portable_cached(
                namespace, vector, model, limit, kinds, now, generation=generation
            )
        if vector is not None and vectors is None:
            cursor.execute(
                f"SELECT f.id, f.embedding FROM {fact} f WHERE f.namespace = {p} "
                f"AND f.embedding_model = {p} AND f.embedding_dim = {p} AND {current}",
                [namespace, model, len(vector), now, *kind_params],
            )
            vectors = _numpy_top(cursor.fetchall(), vector, limit)
        if terms:
            keyword = _portable_keyword(
                cursor, namespace, terms, limit, current, kind_params, now, stats,
                vector=None if vectors is None else list(vectors),
            )  # fmt: skip
    return Candidates(keyword, vectors or {}, stats[0])


def _portable_cached(
    namespace: str,
    vector: list[float],
    model: str,
    limit: int,
    kinds: list[str] | None,
    now: dt.datetime,
    *,
    generation: int | None = None,
) -> dict[int, float]:
    """``_numpy_top``'s answer from the namespace's matrix in memory (``vector_cache``): kept
    while the namespace's generation (``generation``, read now if None) is the one it was read
    with, else read again (the same rows the database read would fetch, and their kinds and
    expiry times)."""
    key = vector_cache.key(namespace, model, len(vector))
    matrix = vector_cache.get(key)
    if generation is None and matrix is not None:
        generation = vector_cache.generation(namespace)
    if matrix is not None and matrix.generation == generation:
        vector_cache.hit()
    else:
        if matrix is not None:
            vector_cache.drop(key)
        matrix = vector_cache.read(namespace, model, len(vector))
        vector_cache.put(key, matrix)
    return vector_cache.top_dot(
        matrix, vector, now=vector_cache.now_key(now), kinds=kinds, limit=limit
    )


def _portable_keyword(
    cursor: CursorWrapper,
    namespace: str,
    terms: Mapping[int, int],
    limit: int,
    current: str,
    kind_params: list[Any],
    now: dt.datetime,
    stats: tuple[int, float],
    *,
    vector: list[int] | None,
) -> dict[int, float]:
    """The keyword list in two statements (document frequencies, then the scores), with the
    postings budget of the PostgreSQL statement: the words beyond it score only the facts the
    rarer words name and the ``vector`` candidates (None: keyword only, the rarest word read
    at least)."""
    fact, term = _tables()
    p = "%s"
    hashes = list(terms)
    marks = ", ".join([p] * len(hashes))
    cursor.execute(
        f"SELECT term, count(*) FROM {term} WHERE namespace = {p} AND term IN ({marks}) "
        "GROUP BY term",
        [namespace, *hashes],
    )
    found = dict(cursor.fetchall())
    if not found:
        return {}
    df: dict[int, int] = {}
    for h, n in found.items():
        df[terms[h]] = df.get(terms[h], 0) + int(n)
    rare = _rare_words(df, keyword_only=vector is None)
    total, avg_len = stats
    # One CASE per hash for its word's idf, as recall.keyword_scores builds it.
    idf_cases = " ".join(f"WHEN {int(h)} THEN {bm25.idf(total, df[terms[h]])!r}" for h in found)
    score = bm25.term_score(
        Sql("p.tf"), Sql("f.term_count"), weight=Sql(f"(CASE p.term {idf_cases} ELSE 0.0 END)"),
        avgdl=avg_len,
    )  # fmt: skip
    read = ", ".join(str(int(h)) for h in found if terms[h] in rare) or "NULL"
    often = ", ".join(str(int(h)) for h in found if terms[h] not in rare)
    which = f"p.term IN ({read})"
    if often:  # hashes are ints from our own HMAC (never user text), inlined like the idfs
        named = f"SELECT q.fact_id FROM {term} q WHERE q.namespace = {p} AND q.term IN ({read})"
        also = f" OR p.fact_id IN ({', '.join(str(int(i)) for i in vector)})" if vector else ""
        which = f"({which} OR (p.term IN ({often}) AND (p.fact_id IN ({named}){also})))"
    cursor.execute(
        f"SELECT p.fact_id, sum({score}) AS score FROM {term} p JOIN {fact} f ON f.id = p.fact_id "
        f"WHERE p.namespace = {p} AND {which} AND {current} "
        f"GROUP BY p.fact_id ORDER BY score DESC, p.fact_id LIMIT {int(limit)}",
        [namespace, *([namespace] if often else []), now, *kind_params],
    )
    return {int(i): float(s) for i, s in cursor.fetchall()}


def _rare_words(df: Mapping[int, int], *, keyword_only: bool) -> set[int]:
    """The query words whose postings are read whole: rarest first (ties by word) while their
    postings stay within ``bm25.postings_budget()``; keyword only, the rarest at least. The
    same choice as the ``rare`` CTE of the PostgreSQL statement."""
    budget = bm25.postings_budget()
    chosen: set[int] = set()
    upto = 0
    for rank, (n, word) in enumerate(sorted((n, word) for word, n in df.items()), 1):
        upto += n
        if upto <= budget or (keyword_only and rank == 1):
            chosen.add(word)
    return chosen


def neighbour_runs(
    namespace: str, seeds: list[int], *, reach: int, kinds: Iterable[str] | None
) -> dict[int, list[int]]:
    """``fusion.fact_runs`` without a metadata filter, in portable SQL built without the ORM:
    for each seed, up to ``reach`` eligible facts before and after it and the seed, in order.

    One statement, a UNION ALL of two ``LIMIT reach`` scans of ``ttm_fact_ns_id_idx`` per
    seed; its text depends only on how many seeds and kinds there are, so it is reused.
    """
    if not seeds or reach <= 0:
        return {}
    fact, _ = _tables()
    p = "%s"
    kind_params: list[Any] = []
    kind_sql = (
        " AND " + dialect.current().any_of("f.kind", kinds, kind_params, kind="text")
        if kinds
        else ""
    )
    current = _current("f", p) + kind_sql
    now = timezone.now()
    parts: list[str] = []
    params: list[Any] = []
    for seed in seeds:
        for op, order in (("<", "DESC"), (">", "ASC")):
            parts.append(
                f"SELECT {p} AS seed, sub.id FROM (SELECT f.id FROM {fact} f WHERE "
                f"f.namespace = {p} AND f.id {op} {p} AND {current} "
                f"ORDER BY f.id {order} LIMIT {int(reach)}) sub"
            )
            params += [seed, namespace, seed, now, *kind_params]
    found: dict[int, list[int]] = {seed: [seed] for seed in seeds}
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        for seed, fact_id in cursor.fetchall():
            found[int(seed)].append(int(fact_id))
    return {seed: sorted(ids) for seed, ids in found.items()}


def _numpy_top(rows: list[tuple[int, bytes]], vector: list[float], limit: int) -> dict[int, float]:
    if not rows:
        return {}
    ids = np.fromiter((pk for pk, _ in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(bytes(b) for _, b in rows), dtype="<f4")
    sims = vector_cache.similarities(matrix.reshape(len(rows), len(vector)), vector)
    return vector_cache.best(ids, sims, limit)  # best first, ties by id
