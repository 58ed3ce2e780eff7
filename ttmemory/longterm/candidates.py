"""Recall's candidate lists (BM25 keyword scores, cosine vector scores) in as few round trips as
the database allows: which statement runs, with what it already knows, and what its rows mean.
How the lists are fused is ``ttmemory.longterm.recall.blend``'s business; the statement's text
is ``candidate_sql``'s, one shape for every database.

PostgreSQL with pgvector: ONE statement returns both lists, the namespace's BM25 statistics
and, for neighbour context, the runs of eligible facts around the best blended candidates
(``Context``). SQLite and PostgreSQL without pgvector: the vectors are read packed and scored in
numpy, then one statement returns the keyword list (with the vector candidates scored too), the
statistics and, keyword-only, the runs. With ``RECALL_VECTOR_CACHE_MB``, the vectors of a
namespace searched exactly come from this process's memory while the namespace's generation is
the one they were read with (``vector_cache``; on PostgreSQL the generation comes back with the
keyword list, in the same statement); the neighbour runs of the seeds a hybrid recall picks
then come from that memory too (``Candidates.around``). Both return what
``recall.keyword_scores`` and ``recall.vector_scores`` return (same formula, same order, same
ties), without building ORM queries: the ORM version of the same queries spent more time
compiling SQL than the database took to answer them (docs/benchmarks.md, "Recall latency").

Keyword search is bounded in every namespace above ``bm25.BUDGET_ABOVE_FACTS`` facts, on every
database, with or without a vector (``bm25.POSTINGS_BUDGET``; see ``candidate_sql``). A metadata
filter goes through the ORM functions instead (its JSON lookups are Django's to translate per
database); so does nothing else.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection
from django.utils import timezone

from ttmemory.conf import app_settings
from ttmemory.longterm import bm25, candidate_sql, dialect, recall, runs, vector_cache
from ttmemory.longterm.candidate_sql import Context
from ttmemory.longterm.dialect import Dialect
from ttmemory.longterm.runs import neighbour_runs
from ttmemory.models.vectors import PGVECTOR, vector_storage

__all__ = ["Candidates", "Context", "candidates", "neighbour_runs"]


@dataclass
class Candidates:
    """Both ranked lists of a query (fact id -> score) and the namespace's size; with
    ``Context``, the runs of eligible facts around the best blended candidates (``runs``), or
    where the namespace's matrix in memory answered, ``around``: the runs of any seeds, from
    that matrix (what ``runs.neighbour_runs`` would read in the same snapshot)."""

    keyword: dict[int, float]
    vector: dict[int, float]
    facts: int
    runs: dict[int, list[int]] | None = None
    around: Callable[[list[int]], dict[int, list[int]]] | None = None


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
    search reads only ``bm25.POSTINGS_BUDGET`` postings of the rarest query words whole, from
    the postings index (without a vector, the rarest word's at least; see ``candidate_sql``),
    in a namespace above ``bm25.BUDGET_ABOVE_FACTS`` facts.
    ``context``: the neighbour runs of the best candidates too, in the same statement (with
    pgvector, or keyword-only; elsewhere ``runs`` is None and the caller fetches them).
    """
    kinds = list(kinds) if kinds else None
    if vector_storage(connection) == PGVECTOR:
        return _postgresql(namespace, terms, vector, model, limit, kinds, context)
    return _portable(namespace, terms, vector, model, limit, kinds, context)


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
            # No neighbour runs in the statement: the matrix holds every eligible fact, so the
            # runs of whichever seeds fusion picks come from memory (``around``), once the
            # generation read says the matrix is this snapshot's.
            sql, params = candidate_sql.statement(
                dialect.POSTGRESQL, namespace, terms, limit=limit, kinds=kinds, now=now,
                cached=cached, vector=vector, model=model, given=given, context=None,
                generation=True, known=known, budgeted=bm25.budgeted(size),
            )  # fmt: skip
            found, generation = _read(dialect.POSTGRESQL, namespace, sql, params, size, None)
            if generation == matrix.generation:
                vector_cache.hit()  # served: no count towards reading it again
                if context is not None:
                    found.around = _around(matrix, now, kinds, context.reach)
                return found
            vector_cache.drop(cache_key)  # changed since: the database's own scan, below
            if tracked:  # the statistics that statement counted at the new generation
                known = vector_cache.known_stats(namespace)
    sql, params = candidate_sql.statement(
        dialect.POSTGRESQL, namespace, terms, limit=limit, kinds=kinds, now=now, cached=cached,
        vector=vector, model=model, approximate=approximate, context=context,
        generation=cache_key is not None or (tracked and not large),
        known=known if tracked and not large else None, budgeted=bm25.budgeted(size),
    )  # fmt: skip
    found, generation = _read(
        dialect.POSTGRESQL, namespace, sql, params, size, context, approximate=approximate
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


def _around(
    matrix: vector_cache.Matrix, now: dt.datetime, kinds: list[str] | None, reach: int
) -> Callable[[list[int]], dict[int, list[int]]]:
    """The neighbour runs of given seeds from ``matrix``, eligible at ``now`` and of ``kinds``."""

    def runs_of(seeds: list[int]) -> dict[int, list[int]]:
        eligible = vector_cache.eligible_ids(matrix, now=vector_cache.now_key(now), kinds=kinds)
        return runs.around(eligible, seeds, reach=reach)

    return runs_of


def _read(
    d: Dialect,
    namespace: str,
    sql: str,
    params: dict[str, Any],
    size: int,
    context: Context | None,
    *,
    approximate: bool = False,
    generation: int = 0,
) -> tuple[Candidates, int]:
    """Runs the candidate statement: its lists, and the generation it read (0: none;
    ``generation``: the one read before it, where it reads none)."""
    if approximate:
        rows = recall.run_with_planner_settings(sql, params)
    else:
        # Prepared on its connection whatever the project's DATABASES options say: planning
        # this statement cost the server more than running it at 1,000 facts. The parameters
        # stay ``%s`` (text, bound by the server): binary ones (``%b``) cost psycopg more per
        # recall than they save (docs/benchmarks.md, "Fact recall: where the time goes"), but
        # for the query vector (``binding.BinaryVector``: its text form cost more).
        with d.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    keyword: dict[int, float] = {}
    vectors: dict[int, float] = {}
    facts = size
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


# ---------------------------------------------------------------------------------------------
# SQLite, PostgreSQL without pgvector, other databases: keyword in SQL, vectors in numpy


def _portable(
    namespace: str,
    terms: Mapping[int, int],
    vector: list[float] | None,
    model: str,
    limit: int,
    kinds: list[str] | None,
    context: Context | None,
) -> Candidates:
    d = dialect.current()
    now = timezone.now()
    stats = recall.cached_stats(namespace)
    generation: int | None = None
    if stats is None and vector_cache.tracked():
        # Read first: statistics counted after it are of this generation or a later one, and
        # are reused only while it holds (vector_cache.keep_stats).
        generation = vector_cache.generation(namespace)
        known = vector_cache.known_stats(namespace)
        if known is not None and generation and known[0] == generation:
            stats = (known[1], known[2])
    size = stats[0] if stats is not None else recall.size_hint(namespace)
    if size is None:  # not seen for a while: count first (whether the budget applies, below)
        stats = recall.namespace_stats(namespace)
        size = stats[0]
    vectors: dict[int, float] | None = None
    matrix: vector_cache.Matrix | None = None
    if vector is not None and vector_cache.usable():
        vectors, matrix = _portable_cached(
            namespace, vector, model, limit, kinds, now, generation=generation
        )
    # Hybrid: the runs of the seeds fusion picks, from the matrix the vectors came from.
    around = (
        None if matrix is None or context is None else _around(matrix, now, kinds, context.reach)
    )
    if vector is not None and vectors is None:
        params: dict[str, Any] = {"ns": namespace, "now": now, "model": model, "dim": len(vector)}
        eligible = runs.eligible(d, "f", kinds, params)
        with d.cursor() as cursor:
            cursor.execute(
                f"SELECT f.id, f.embedding FROM {runs.fact_table()} f WHERE f.namespace = %(ns)s "
                f"AND f.embedding_model = %(model)s AND f.embedding_dim = %(dim)s AND {eligible}",
                params,
            )
            vectors = _numpy_top(cursor.fetchall(), vector, limit)
    if not terms and stats is not None:
        return Candidates({}, vectors or {}, stats[0], around=around)
    sql, params = candidate_sql.statement(
        d, namespace, terms, limit=limit, kinds=kinds, now=now, cached=stats,
        vector_ids=None if vectors is None else list(vectors),
        context=context if vector is None else None,
        budgeted=bm25.budgeted(size),
    )  # fmt: skip
    found, _ = _read(
        d, namespace, sql, params, 0 if stats is None else stats[0],
        context if vector is None else None, generation=generation or 0,
    )  # fmt: skip
    found.vector, found.around = vectors or {}, around
    return found


def _portable_cached(
    namespace: str,
    vector: list[float],
    model: str,
    limit: int,
    kinds: list[str] | None,
    now: dt.datetime,
    *,
    generation: int | None = None,
) -> tuple[dict[int, float], vector_cache.Matrix]:
    """``_numpy_top``'s answer from the namespace's matrix in memory (``vector_cache``), and
    that matrix: kept while the namespace's generation (``generation``, read now if None) is the
    one it was read with, else read again (the same rows the database read would fetch, and
    their kinds and expiry times)."""
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
    found = vector_cache.top_dot(
        matrix, vector, now=vector_cache.now_key(now), kinds=kinds, limit=limit
    )
    return found, matrix


def _numpy_top(rows: list[tuple[int, bytes]], vector: list[float], limit: int) -> dict[int, float]:
    if not rows:
        return {}
    ids = np.fromiter((pk for pk, _ in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(bytes(b) for _, b in rows), dtype="<f4")
    sims = vector_cache.similarities(matrix.reshape(len(rows), len(vector)), vector)
    return vector_cache.best(ids, sims, limit)  # best first, ties by id
