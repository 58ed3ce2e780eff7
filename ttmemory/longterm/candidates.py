"""Recall's candidate lists (BM25 keyword scores, cosine vector scores) in as few round trips as
the database allows. How they are fused is ``ttmemory.longterm.recall.blend``'s business.

PostgreSQL with pgvector: ONE statement returns both lists and the namespace's BM25 statistics
(document frequencies, N and mean length folded in as CTEs, query terms as one array, so the
statement text is the same for every query and psycopg prepares it). SQLite and PostgreSQL
without pgvector: one keyword statement with the statistics folded in, one read of the packed
vectors scored in numpy. Both return what ``recall.keyword_scores`` and ``recall.vector_scores``
return (same formula, same order, same ties), without building ORM queries: on the 2-core
benchmark machine the ORM version of the same three queries spent about 2-4 ms per recall
compiling SQL, more than the database took to answer them (docs/benchmarks.md, "Recall latency").

A metadata filter goes through the ORM functions instead (its JSON lookups are Django's to
translate per database); so does nothing else.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from ttmemory.conf import app_settings
from ttmemory.longterm import recall
from ttmemory.models import Fact, FactTerm
from ttmemory.models.vectors import PGVECTOR, vector_storage


@dataclass
class Candidates:
    """Both ranked lists of a query (fact id -> score) and the namespace's size."""

    keyword: dict[int, float]
    vector: dict[int, float]
    facts: int


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
    """recall.keyword_scores' BM25 term score as SQL (k1=1.2, b=0.75 from recall)."""
    k1, b = recall.BM25_K1, recall.BM25_B
    return (
        f"ln(1.0 + ({n} - {df} + 0.5) / ({df} + 0.5)) * {tf} * {k1 + 1.0!r} "
        f"/ ({tf} + {k1 * (1.0 - b)!r} + {k1 * b!r} / {avgdl} * {length})"
    )


def candidates(
    namespace: str,
    *,
    terms: Mapping[int, int],
    vector: list[float] | None,
    model: str,
    limit: int,
    kinds: Iterable[str] | None,
) -> Candidates:
    """The best ``limit`` facts of ``namespace`` by keyword (``terms``, see
    ``blind.query_hashes``) and by ``vector`` (None: keyword only), current and of ``kinds``.

    Vector search is exact up to ``RECALL_EXACT_LIMIT`` facts, through the HNSW index of the
    vector's dimension above it (PostgreSQL with pgvector; exact in numpy elsewhere).
    """
    kinds = list(kinds) if kinds else None
    if vector_storage(connection) == PGVECTOR:
        return _postgresql(namespace, terms, vector, model, limit, kinds)
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
) -> Candidates:
    cached = recall.cached_stats(namespace)
    size = cached[0] if cached is not None else recall.size_hint(namespace)
    if size is None:  # not seen for a while: count first (once per STATS_CACHE_SECONDS)
        cached = recall.namespace_stats(namespace)
        size = cached[0]
    approximate = vector is not None and size > app_settings.RECALL_EXACT_LIMIT
    sql, params = _postgresql_sql(
        namespace, terms, vector, model, limit, kinds, cached, approximate=approximate
    )
    with recall.planner_settings() if approximate else nullcontext(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    keyword: dict[int, float] = {}
    vectors: dict[int, float] = {}
    facts = size
    for which, key, score, extra in rows:
        if which == 0:
            keyword[int(key)] = float(score)
        elif which == 1:
            vectors[int(key)] = 1.0 - float(score)
        else:  # the statistics row: N and avgdl, kept for large namespaces
            facts = int(key)
            recall.remember_stats(namespace, facts, float(extra))
    return Candidates(keyword, vectors, facts)


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
) -> tuple[str, dict[str, Any]]:
    fact, term = _tables()
    params: dict[str, Any] = {
        "ns": namespace,
        "now": timezone.now(),
        "limit": int(limit),
        "hashes": list(terms),
        "words": list(terms.values()),
    }
    kind_filter = ""
    if kinds:
        kind_filter = " AND f.kind = ANY(%(kinds)s)"
        params["kinds"] = kinds
    current = _current("f", "%(now)s") + kind_filter
    if cached is None:
        stats = (
            f"SELECT count(*)::float8 AS n, coalesce(avg(term_count), 1)::float8 AS avgdl "
            f"FROM {fact} WHERE namespace = %(ns)s"
        )
    else:
        stats = "SELECT %(n)s::float8 AS n, %(avgdl)s::float8 AS avgdl"
        params["n"], params["avgdl"] = float(cached[0]), float(cached[1] or 1.0)
    parts = [
        "WITH q AS (SELECT h.term, h.word FROM unnest(%(hashes)s::bigint[], "
        "%(words)s::bigint[]) AS h(term, word)),",
        f"st AS MATERIALIZED ({stats}),",
        # Document frequency per query word (its namespace hash and its legacy hash summed).
        f"df AS (SELECT q.word, count(*)::float8 AS n FROM {term} p JOIN q ON p.term = q.term "
        "WHERE p.namespace = %(ns)s GROUP BY q.word),",
        "kw AS (SELECT p.fact_id AS id, sum("
        + _bm25("p.tf::float8", "f.term_count::float8", "st.n", "df.n", "st.avgdl")
        + f") AS score FROM {term} p JOIN q ON p.term = q.term JOIN df ON df.word = q.word "
        f"JOIN {fact} f ON f.id = p.fact_id CROSS JOIN st "
        f"WHERE p.namespace = %(ns)s AND {current} "
        "GROUP BY p.fact_id ORDER BY score DESC, p.fact_id LIMIT %(limit)s)",
    ]
    select = [
        "SELECT 0 AS which, id, score, 0.0::float8 FROM kw",
        "SELECT 2, st.n::bigint, st.avgdl, st.avgdl FROM st" if cached is None else "",
    ]
    if vector is not None:
        dim = len(vector)
        params["vec"] = recall.vector_literal(vector)
        params["model"], params["dim"] = model, dim
        if approximate:
            # The expression the HNSW index of this dimension is built on (vector_index).
            distance = f"(f.embedding::vector({dim})) <=> %(vec)s::vector({dim})"
            order = "distance"
        else:
            distance = "f.embedding <=> %(vec)s::vector"
            order = "distance, f.id"
        parts.append(
            f", vec AS (SELECT f.id, {distance} AS distance FROM {fact} f "
            f"WHERE f.namespace = %(ns)s AND f.embedding_model = %(model)s "
            f"AND f.embedding_dim = %(dim)s AND {current} ORDER BY {order} LIMIT %(limit)s)"
        )
        select.append("SELECT 1, id, distance, 0.0::float8 FROM vec")
    union = " UNION ALL ".join(s for s in select if s)
    # Wrapped in a SELECT: a read that says so at its first word (logs, statement filters).
    sql = "SELECT * FROM (" + "\n".join(parts) + "\n" + union + ") AS candidates"
    return sql, params


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
    kind_sql, kind_params = "", []
    if kinds:
        kind_sql = f" AND f.kind IN ({', '.join([p] * len(kinds))})"
        kind_params = list(kinds)
    current = _current("f", p) + kind_sql
    stats = recall.cached_stats(namespace)
    keyword: dict[int, float] = {}
    with connection.cursor() as cursor:
        if stats is None:
            cursor.execute(
                f"SELECT count(*), avg(term_count) FROM {fact} WHERE namespace = {p}", [namespace]
            )
            n, avg = cursor.fetchone()
            stats = (int(n or 0), float(avg or 1.0) or 1.0)
            recall.remember_stats(namespace, *stats)
        if terms:
            keyword = _portable_keyword(
                cursor, namespace, terms, limit, current, kind_params, now, stats
            )
        vectors: dict[int, float] = {}
        if vector is not None:
            cursor.execute(
                f"SELECT f.id, f.embedding FROM {fact} f WHERE f.namespace = {p} "
                f"AND f.embedding_model = {p} AND f.embedding_dim = {p} AND {current}",
                [namespace, model, len(vector), now, *kind_params],
            )
            vectors = _numpy_top(cursor.fetchall(), vector, limit)
    return Candidates(keyword, vectors, stats[0])


def _portable_keyword(
    cursor: CursorWrapper,
    namespace: str,
    terms: Mapping[int, int],
    limit: int,
    current: str,
    kind_params: list[str],
    now: dt.datetime,
    stats: tuple[int, float],
) -> dict[int, float]:
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
    total, avg_len = stats
    # One CASE per hash for its word's idf, as recall.keyword_scores builds it.
    idf_cases = " ".join(f"WHEN {int(h)} THEN {recall.idf(total, df[terms[h]])!r}" for h in found)
    k1, b = recall.BM25_K1, recall.BM25_B
    score = (
        f"(CASE p.term {idf_cases} ELSE 0.0 END) * p.tf * {k1 + 1.0!r} "
        f"/ (p.tf + {k1 * (1.0 - b)!r} + {k1 * b / avg_len!r} * f.term_count)"
    )
    hits = ", ".join(str(int(h)) for h in found)
    cursor.execute(
        f"SELECT p.fact_id, sum({score}) AS score FROM {term} p JOIN {fact} f ON f.id = p.fact_id "
        f"WHERE p.namespace = {p} AND p.term IN ({hits}) AND {current} "
        f"GROUP BY p.fact_id ORDER BY score DESC, p.fact_id LIMIT {int(limit)}",
        [namespace, now, *kind_params],
    )
    return {int(i): float(s) for i, s in cursor.fetchall()}


def _numpy_top(rows: list[tuple[int, bytes]], vector: list[float], limit: int) -> dict[int, float]:
    if not rows:
        return {}
    ids = np.fromiter((pk for pk, _ in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(bytes(b) for _, b in rows), dtype="<f4")
    sims = matrix.reshape(len(rows), len(vector)) @ np.asarray(vector, dtype=np.float32)
    order = np.lexsort((ids, -sims))[:limit]  # best first, ties by id
    return {int(ids[i]): float(sims[i]) for i in order}
