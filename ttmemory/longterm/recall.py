"""Hybrid recall: BM25 over the blind keyword index, cosine similarity over embeddings, blended.

Keyword ranking is BM25 (``bm25``, the one definition) on keyed term hashes: term frequency,
inverse document frequency within the namespace and length normalisation all survive the
hashing. Vector
ranking is cosine similarity: in SQL with pgvector on PostgreSQL (exact within small
namespaces, the HNSW index with iterative scans in large ones), with numpy elsewhere (SQLite,
PostgreSQL without pgvector). The
two are fused by a weighted blend of max-normalised scores, tuned on the evaluation set in
docs/benchmarks.md (plain reciprocal rank fusion ranked worse there).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, TypeVar

import numpy as np
from django.db import connection, transaction
from django.db.models import Avg, Case, Count, F, FloatField, Q, QuerySet, Sum, Value, When
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast
from django.utils import timezone

from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings
from ttmemory.longterm import blind, bm25
from ttmemory.models import Fact, FactTerm
from ttmemory.models.vectors import PGVECTOR, vector_storage

K = TypeVar("K")  # what blended scores are keyed by: a fact id, a (session, seq) pair


def fact_filter(
    *, kinds: Iterable[str] | None, metadata: dict[str, Any] | None, prefix: str = ""
) -> Q:
    """Current facts (not superseded, not ended, not expired) of ``kinds`` with ``metadata``.

    ``prefix`` ("fact__") applies it across a join, as the keyword query does: a join on the
    fact's primary key stays fast even when the planner's statistics are stale.
    """
    q = Q(**{f"{prefix}superseded_by__isnull": True, f"{prefix}valid_to__isnull": True})
    q &= ~Q(**{f"{prefix}expires_at__lte": timezone.now()})
    if kinds:
        q &= Q(**{f"{prefix}kind__in": list(kinds)})
    for key, value in (metadata or {}).items():
        q &= Q(**{f"{prefix}metadata__{key}": value})
    return q


def filtered_facts(
    namespace: str, *, kinds: Iterable[str] | None, metadata: dict[str, Any] | None
) -> QuerySet[Fact]:
    return Fact.objects.filter(fact_filter(kinds=kinds, metadata=metadata), namespace=namespace)


def keyword_scores(
    namespace: str,
    query: str,
    limit: int,
    *,
    kinds: Iterable[str] | None = None,
    metadata: dict[str, Any] | None = None,
    stats: tuple[int, float] | None = None,
    terms: Mapping[int, int] | None = None,
) -> dict[int, float]:
    """BM25 scores of the best ``limit`` facts for ``query``'s terms, ranked in the database.

    ``terms`` is ``blind.query_hashes(query, namespace=...)``: every hash a posting of a query
    word may carry (facts not yet rebuilt by ``ttmemory_reindex`` carry an older one) mapped to
    the word, whose document frequency counts both.
    """
    terms = blind.query_hashes(query, namespace=namespace) if terms is None else terms
    if not terms:
        return {}
    total, avg_len = stats if stats is not None else namespace_stats(namespace)
    found = dict(
        FactTerm.objects.filter(namespace=namespace, term__in=list(terms))
        .values_list("term")
        .annotate(n=Count("*"))  # the (namespace, term) index alone
        .values_list("term", "n")
    )
    if not found:
        return {}
    df: dict[int, int] = {}
    for term, n in found.items():
        df[terms[term]] = df.get(terms[term], 0) + n
    weights = Case(
        *[
            When(term=term, then=Value(bm25.idf(total, n)))
            for term, n in ((term, df[terms[term]]) for term in found)
        ],
        default=Value(0.0),
        output_field=FloatField(),
    )
    tf = Cast("tf", FloatField())
    length = Cast("length", FloatField())  # the fact's term_count, kept on its posting
    score = bm25.term_score(tf, length, weight=weights, avgdl=Value(avg_len))
    rows = (
        FactTerm.objects.filter(
            fact_filter(kinds=kinds, metadata=metadata, prefix="fact__"),
            namespace=namespace,
            term__in=list(found),
        )
        .values("fact_id")
        .annotate(score=Sum(score, output_field=FloatField()))
        .order_by("-score", "fact_id")
        .values_list("fact_id", "score")[:limit]
    )
    return {int(fact_id): float(score) for fact_id, score in rows}


# Namespaces this large keep their BM25 statistics for a few seconds: counting every fact on
# every query costs more than the statistics change. Smaller ones are counted each time (in
# recall's own statement on PostgreSQL, see ``candidates``); only their size is remembered, to
# choose exact or approximate vector search without another round trip.
STATS_CACHE_MIN_FACTS = 2000
STATS_CACHE_SECONDS = bm25.KEPT_SECONDS
_stats = bm25.KeptStats()


def cached_stats(namespace: str) -> tuple[int, float] | None:
    """N and avgdl of a large namespace counted less than ``STATS_CACHE_SECONDS`` ago."""
    stats = recent_stats(namespace)
    return stats if stats is not None and stats[0] >= STATS_CACHE_MIN_FACTS else None


def recent_stats(namespace: str) -> tuple[int, float] | None:
    """N and avgdl of ``namespace`` counted less than ``STATS_CACHE_SECONDS`` ago, whatever its
    size (recall's candidate statement has usually just counted them)."""
    cached = _stats.get(namespace)
    return None if cached is None else (cached[0], cached[1])


def size_hint(namespace: str) -> int | None:
    """How many facts ``namespace`` had when last counted (within ``STATS_CACHE_SECONDS``)."""
    stats = recent_stats(namespace)
    return None if stats is None else stats[0]


def remember_stats(namespace: str, total: int, avg_len: float) -> None:
    """Keep a namespace's counted statistics (used as BM25's only when it is large)."""
    _stats.put(namespace, total, avg_len or 1.0)


def namespace_stats(namespace: str) -> tuple[int, float]:
    """Facts in ``namespace`` and their mean indexed length (BM25's N and avgdl)."""
    cached = cached_stats(namespace)
    if cached is not None:
        return cached
    # COUNT(*), not COUNT(id): the (namespace, kind, term_count) index then answers alone (an
    # index-only scan); counting ids read every fact row.
    stats = Fact.objects.filter(namespace=namespace).aggregate(n=Count("*"), avg=Avg("term_count"))
    total = int(stats["n"] or 0)
    avg_len = float(stats["avg"] or 1.0) or 1.0
    remember_stats(namespace, total, avg_len)
    return total, avg_len


def vector_scores(
    facts: QuerySet[Fact], vector: list[float], model: str, limit: int, *, approximate: bool
) -> dict[int, float]:
    """Cosine similarity of the best ``limit`` facts embedded by ``model``.

    pgvector's ``CosineDistance`` in SQL on PostgreSQL (``approximate``: on the expression the
    HNSW index of this dimension is built on, under ``planner_settings``); numpy elsewhere.
    """
    facts = facts.filter(embedding_model=model, embedding_dim=len(vector))
    if vector_storage(connection) == PGVECTOR:
        from pgvector.django import CosineDistance, VectorField

        dim = len(vector)
        query = Cast(Value(vector_literal(vector)), VectorField(dimensions=dim))
        column = Cast("embedding", VectorField(dimensions=dim)) if approximate else F("embedding")
        # The index returns rows in distance order; exact search breaks ties by id.
        order = ("distance",) if approximate else ("distance", "pk")
        rows = facts.annotate(distance=CosineDistance(column, query)).order_by(*order)
        with planner_settings() if approximate else nullcontext():
            found = list(rows.values_list("pk", "distance")[:limit])
        return {pk: 1.0 - float(d) for pk, d in found}
    # The packed float32 bytes as stored, straight into numpy (no per-float Python objects).
    blob = RawSQL(f"{connection.ops.quote_name(Fact._meta.db_table)}.embedding", [])
    pairs = list(facts.annotate(blob=blob).values_list("pk", "blob"))
    if not pairs:
        return {}
    ids = np.fromiter((pk for pk, _ in pairs), dtype=np.int64, count=len(pairs))
    raw = b"".join(bytes(b) for _, b in pairs)
    matrix = np.frombuffer(raw, dtype="<f4").reshape(len(pairs), len(vector))
    sims = matrix @ np.asarray(vector, dtype=np.float32)
    top = np.argsort(-sims)[:limit]
    return {int(ids[i]): float(sims[i]) for i in top}


def vector_literal(vector: Iterable[float]) -> str:
    """pgvector's text form of ``vector``, as the float32 values pgvector stores.

    Nine significant digits give every float32 back exactly; one ``%`` formats them all (a
    ``repr`` per float was a visible share of a recall's CPU).
    """
    values = np.asarray(list(vector), dtype=np.float32).tolist()
    return "[" + ",".join(["%.9g"] * len(values)) % tuple(values) + "]"


#: HNSW search settings of approximate recall (pgvector 0.8): iterative scans keep the filtered
#: (one namespace) search going until it has ``limit`` rows; ef_search 100 reached recall@10
#: >= 0.95 of exact in docs/benchmarks.md.
PLANNER_SETTINGS = "SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = 100"


@contextmanager
def planner_settings() -> Iterator[None]:
    """HNSW search settings for the body's queries only, never left on a pooled connection.

    ``SET LOCAL`` (never ``SET``: a session setting would stay on the server connection that
    PgBouncer hands the next client) in a transaction of its own, or a nested atomic block
    inside a caller's transaction, rolled back afterwards (the body only reads), which undoes
    the ``SET LOCAL`` too. Both settings go in one round trip.
    """
    with transaction.atomic():  # a transaction, or a savepoint inside the caller's
        with connection.cursor() as cursor:
            cursor.execute(PLANNER_SETTINGS)
        try:
            yield
        finally:
            # Rolled back on the way out (the body only reads): undoes the SET LOCAL too.
            transaction.set_rollback(True)


def run_with_planner_settings(sql: str, params: Mapping[str, Any] | Sequence[Any]) -> list[Any]:
    """The rows of the read ``sql`` run under ``PLANNER_SETTINGS``, in one round trip when it can.

    In autocommit (no transaction open): the settings and the statement go as one
    multi-statement query, which PostgreSQL runs as one implicit transaction, so ``SET LOCAL``
    ends with the statement; the parameters are bound client-side for it (the simple
    protocol has none). Four round trips were one: BEGIN, the settings, the statement,
    ROLLBACK (``planner_settings``), which is still what runs inside a caller's transaction.
    """
    if connection.get_autocommit() and not connection.in_atomic_block:
        ops: Any = connection.ops  # PostgreSQL's: HNSW search is pgvector's
        composed = ops.compose_sql(sql, params)
        with connection.cursor() as cursor:
            cursor.execute(f"{PLANNER_SETTINGS}; {composed}")
            # psycopg 3 starts at the first result (the SETs'), psycopg 2 at the last.
            while cursor.description is None and cursor.nextset():
                pass
            return list(cursor.fetchall())
    with planner_settings(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def vector_weight() -> float:
    """The blend weight in force: ``RECALL_VECTOR_WEIGHT``, else the embedder's own default."""
    configured = app_settings.RECALL_VECTOR_WEIGHT
    return float(get_embedder().recall_vector_weight if configured is None else configured)


def blend(
    keyword: Mapping[K, float], vector: Mapping[K, float], *, vector_weight: float
) -> dict[K, float]:
    """Weighted sum of scores normalised to [0, 1] per list (max for BM25, min-max for cosine).

    The one fusion: ``fusion.fuse`` calls it for every ranking in Python, and the SQL of
    ``candidates`` (neighbour seeds picked in the database) is generated from ``blend_score``.
    """
    top_kw = max(keyword.values(), default=0.0) or 1.0
    if vector:
        low, high = min(vector.values()), max(vector.values())
        span = (high - low) or 1.0
    fused: dict[K, float] = {}
    for fact_id in set(keyword) | set(vector):
        kw = keyword.get(fact_id, 0.0) / top_kw
        vec = (vector[fact_id] - low) / span if fact_id in vector else 0.0
        fused[fact_id] = blend_score(kw, vec, weight=vector_weight)
    return fused


def blend_score(keyword: Any, vector: Any, *, weight: Any) -> Any:
    """A candidate's blended score from its normalised keyword and vector scores (0 where a
    list lacks it). Operands: floats or ``bm25.Sql``."""
    return weight * vector + (1.0 - weight) * keyword
