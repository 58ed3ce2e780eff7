"""Each namespace's fact vectors kept in this process's memory, checked against the database's
generation of that namespace on every query.

Exact vector recall ranks every current vector of a namespace. On SQLite reading them (one
packed float32 blob per fact) cost far more than ranking them in numpy; on PostgreSQL the
exact scan in the database was most of a recall at 1,000-5,000 facts (docs/benchmarks.md,
"Fact recall: where the time goes"). So recall keeps, per database, namespace, embedding model
and dimension, a ``Matrix``: the ids, vectors, kinds and expiry times of the namespace's facts
that are not superseded or ended (and the ids, kinds and expiry times of those without a
vector of that model: the neighbour runs are made of every such fact), read in ONE statement
together with the namespace's generation (``ttmemory.models.generation``: triggers give it a
new value in the same transaction as any change to those facts, by any code path or process).

A matrix serves a query only when the generation the query reads is the one it was read with.
Both are read in one statement each, so each is one consistent snapshot of the database: the
same generation means the same committed changes, hence the same vectors. Where it is read:

- PostgreSQL with pgvector (namespaces up to ``RECALL_EXACT_LIMIT``): recall's one candidate
  statement returns the generation beside the keyword list (no round trip added). With a
  matrix in memory, numpy picks the few facts that can be among the nearest (``shortlist``)
  and that statement ranks only them, with pgvector's own arithmetic (so distances and ties
  are the full scan's), and the neighbour runs of the seeds fusion picks are taken from the
  matrix (``eligible_ids``, ``runs.around``) instead of being read with the candidates; a
  generation that differs drops the matrix and the statement runs again with the database's
  scan of every fact and the runs. A matrix is
  read (one more statement, inside that recall) once a namespace's generation was the same for
  ``READ_AFTER_RECALLS`` recalls in a row: the read costs about what that many served recalls
  save, so a namespace recalled a few times between writes never pays for one.
- SQLite and PostgreSQL without pgvector: one small statement reads the generation; a miss
  reads the matrix instead of the vectors it read before (the same rows plus kind and expiry).
  The neighbour runs come from the matrix too, as on PostgreSQL.

Expiry needs no write: each query filters the matrix by ``expires_at > now`` as the SQL does.
``kinds`` are filtered here too. Not served from memory: with a metadata filter (the ORM path),
on databases without the triggers (other vendors, or migration 0019 not applied: checked once
a minute per process), with ``RECALL_VECTOR_CACHE_MB`` 0, and for a namespace whose matrix alone
exceeds it. Transactions need no bypass: a generation written inside one is never reused, so a
matrix read there can only match that transaction's own later reads.

BM25 statistics: a namespace below ``recall.STATS_CACHE_MIN_FACTS`` facts has its statistics
(how many facts, their mean term count) counted exactly for every recall. They are kept here
with the generation of the snapshot that counted them (``keep_stats``) and reused while the
namespace's generation is that one: on PostgreSQL the candidate statement compares the
generation it reads with the one kept and counts only when they differ; on SQLite recall reads
the generation first (it serves the vectors too). Kept with ``RECALL_VECTOR_CACHE_MB`` 0 as
well (three numbers per namespace, at most ``SEEN_LIMIT`` namespaces).

Matrices are dropped least recently used first to stay within ``RECALL_VECTOR_CACHE_MB`` per
process, read on every query (a lowered bound applies at the next recall). After a fork the
child keeps its copy (still checked against the database on each use) with a new lock.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

from ttmemory.conf import app_settings
from ttmemory.models import Fact, FactGeneration
from ttmemory.models.generation import triggers_installed
from ttmemory.models.vectors import PGVECTOR, vector_storage

logger = logging.getLogger(__name__)

#: (database, namespace, embedding model, dimensions); the database is (alias, vendor, name,
#: host, port), so two databases behind one alias never share a matrix.
Key = tuple[tuple[str, ...], str, str, int]

#: How many namespaces' last seen generation PostgreSQL recall remembers (to read a matrix
#: only for a namespace whose generation held for ``READ_AFTER_RECALLS`` recalls).
SEEN_LIMIT = 10_000

#: Recalls of a namespace at one generation before PostgreSQL reads its matrix (and again after
#: each read, should the matrix be dropped). A read costs about as much as this many recalls
#: served from memory save (measured at 1,000 and 5,000 facts of 384 dimensions:
#: docs/benchmarks.md, fifth session). Reading once the recalls forgone would have paid for it
#: (the ski-rental rule) costs at most about twice the best choice made in hindsight; reading
#: on the second recall, as before, paid reads that never paid back wherever many namespaces
#: are recalled a few times each (20 namespaces recalled in turn: each second recall about
#: three times slower than with the cache off).
READ_AFTER_RECALLS = 16

_NEVER = np.iinfo(np.int64).max  # the expiry of a fact that never expires (PostgreSQL)
_NEVER_TEXT = "~"  # sorts after any date text (SQLite)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Matrix:
    """The facts of one namespace, model and dimension that are neither superseded nor ended,
    as of ``generation``, in id order. ``expires``: each row's ``expires_at`` (microseconds
    since the epoch on PostgreSQL, the stored text on SQLite), None when none expires."""

    generation: int
    ids: np.ndarray
    vectors: np.ndarray
    norms: np.ndarray  # each row's squared norm, float32 as pgvector sums it
    kinds: np.ndarray
    kind_names: tuple[str, ...]
    expires: np.ndarray | None
    #: Every fact of the namespace that is neither superseded nor ended, with a vector of this
    #: model or not (the neighbour runs' facts, ``eligible_ids``): ids in order, kinds, expiry.
    fact_ids: np.ndarray
    fact_kinds: np.ndarray
    fact_expires: np.ndarray | None

    @property
    def nbytes(self) -> int:
        arrays = [self.ids, self.vectors, self.norms, self.kinds, self.expires]
        arrays += [self.fact_ids, self.fact_kinds, self.fact_expires]
        return int(sum(array.nbytes for array in arrays if array is not None))


@dataclass
class CacheStats:
    """Process-wide counters: queries served from memory, matrices read, dropped as stale, and
    dropped to stay within the bound."""

    hits: int = 0
    reads: int = 0
    stale: int = 0
    evictions: int = 0


stats = CacheStats()
_lock = threading.Lock()
_matrices: OrderedDict[Key, Matrix] = OrderedDict()
#: Per namespace: (generation last recalled at, recalls in a row at it since the last read).
_seen: OrderedDict[Key, tuple[int, int]] = OrderedDict()
#: BM25 statistics of namespaces recall counted: (generation, facts, mean term count).
_stats_by_generation: OrderedDict[Key, tuple[int, int, float]] = OrderedDict()
_size = 0
#: How long a process trusts its last look at a database's generation triggers.
TRIGGER_CHECK_SECONDS = 60.0
_triggers: dict[tuple[str, ...], tuple[float, bool]] = {}


def _after_fork() -> None:
    global _lock
    _lock = threading.Lock()  # a thread of the parent may have held it while forking


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def budget() -> int:
    """Bytes this process may keep (``RECALL_VECTOR_CACHE_MB``, read when asked)."""
    return int(app_settings.RECALL_VECTOR_CACHE_MB) * 1024 * 1024


def usable(conn: BaseDatabaseWrapper | None = None) -> bool:
    """This connection's database may serve recall's vectors from memory: a budget, and the
    generation triggers in place (``tracked``)."""
    return budget() > 0 and tracked(conn)


def tracked(conn: BaseDatabaseWrapper | None = None) -> bool:
    """The generation triggers are in place in this connection's database (asked of it at most
    once per ``TRIGGER_CHECK_SECONDS`` per process and database, not per connection: with
    ``CONN_MAX_AGE`` 0 every request has a new one)."""
    conn = conn or connection
    if conn.vendor not in ("postgresql", "sqlite"):
        return False
    database = key("", "", 0, conn)[0]
    known = _triggers.get(database)
    now = time.monotonic()
    if known is not None and known[0] > now:
        return known[1]
    found = triggers_installed(conn)
    if not found:
        logger.warning(
            "recall keeps no vectors or statistics in memory: the fact generation triggers "
            "are missing (run ttmemory's migrations 0019 and 0020)"
        )
    _triggers[database] = (now + TRIGGER_CHECK_SECONDS, found)
    return found


def key(namespace: str, model: str, dim: int, conn: BaseDatabaseWrapper | None = None) -> Key:
    conn = conn or connection
    settings = conn.settings_dict
    database = (
        conn.alias,
        conn.vendor,
        str(settings.get("NAME") or ""),
        str(settings.get("HOST") or ""),
        str(settings.get("PORT") or ""),
    )
    return database, namespace, model, int(dim)


def get(found: Key) -> Matrix | None:
    """The matrix kept for ``found`` (whatever its generation), marked as recently used."""
    with _lock:
        _evict(budget())  # a bound lowered since the last query applies now
        matrix = _matrices.get(found)
        if matrix is not None:
            _matrices.move_to_end(found)
        return matrix


def hit() -> None:
    with _lock:
        stats.hits += 1


def drop(found: Key) -> None:
    """Forget ``found``'s matrix (its generation moved on)."""
    global _size
    with _lock:
        matrix = _matrices.pop(found, None)
        if matrix is not None:
            _size -= matrix.nbytes
            stats.stale += 1


def put(found: Key, matrix: Matrix) -> None:
    """Keep ``matrix`` for ``found`` unless it is of an unknown generation (0) or alone larger
    than the bound; older matrices are dropped to make room."""
    global _size
    bound = budget()
    with _lock:
        stats.reads += 1
        old = _matrices.pop(found, None)
        if old is not None:
            _size -= old.nbytes
        if matrix.generation == 0 or matrix.nbytes > bound:
            return
        _evict(bound - matrix.nbytes)
        _matrices[found] = matrix
        _size += matrix.nbytes


def recalled(found: Key, generation: int) -> bool:
    """Record a recall of ``found`` at ``generation``; True when its matrix is worth reading now:
    ``READ_AFTER_RECALLS`` recalls in a row at this known generation since the last time this
    said so (the count then starts again)."""
    with _lock:
        before = _seen.pop(found, None)
        count = before[1] + 1 if before is not None and before[0] == generation else 1
        due = generation != 0 and count >= READ_AFTER_RECALLS
        _seen[found] = (generation, 0 if due else count)
        while len(_seen) > SEEN_LIMIT:
            _seen.popitem(last=False)
    return due


def known_stats(namespace: str) -> tuple[int, int, float] | None:
    """``(generation, facts, mean term count)`` last counted for ``namespace`` (BM25's N and
    avgdl): valid while the namespace's generation is that one (``keep_stats``)."""
    with _lock:
        return _stats_by_generation.get(key(namespace, "", 0))


def keep_stats(namespace: str, generation: int, facts: int, avg_len: float) -> None:
    """Remember ``namespace``'s BM25 statistics as counted in the snapshot that read
    ``generation`` (nothing for the unknown generation 0)."""
    if generation == 0:
        return
    found = key(namespace, "", 0)
    with _lock:
        _stats_by_generation.pop(found, None)
        _stats_by_generation[found] = (generation, facts, avg_len)
        while len(_stats_by_generation) > SEEN_LIMIT:
            _stats_by_generation.popitem(last=False)


def _evict(bound: int) -> None:
    """Drop the least recently used matrices until at most ``bound`` bytes remain (under
    ``_lock``)."""
    global _size
    while _matrices and _size > bound:
        _, evicted = _matrices.popitem(last=False)
        _size -= evicted.nbytes
        stats.evictions += 1


def clear() -> None:
    """Drop every matrix, remembered generation and statistics, and trigger check of this
    process."""
    global _size
    with _lock:
        _matrices.clear()
        _seen.clear()
        _stats_by_generation.clear()
        _triggers.clear()
        _size = 0


def size() -> int:
    """Bytes held by this process's matrices."""
    return _size


# ---------------------------------------------------------------------------------------------
# Reading


def _tables() -> tuple[str, str]:
    quote = connection.ops.quote_name
    return quote(Fact._meta.db_table), quote(FactGeneration._meta.db_table)


def generation(namespace: str) -> int:
    """The namespace's generation now (0: no row, unknown), one statement."""
    _, gen = _tables()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT generation FROM {gen} WHERE namespace = %s", [namespace])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def generation_sql(namespace_param: str) -> str:
    """An expression of one statement reading the namespace's generation (0: unknown)."""
    _, gen = _tables()
    return f"coalesce((SELECT g.generation FROM {gen} g WHERE g.namespace = {namespace_param}), 0)"


def read(namespace: str, model: str, dim: int) -> Matrix:
    """The namespace's facts that are neither superseded nor ended, the vectors of those of
    ``model`` and ``dim``, and its generation, in one statement (one snapshot) on the default
    connection."""
    fact, _ = _tables()
    pgvector = vector_storage(connection) == PGVECTOR
    blob = "vector_send(f.embedding)" if pgvector else "f.embedding"
    expires = "CAST(f.expires_at AS TEXT)" if connection.vendor == "sqlite" else "f.expires_at"
    sql = (
        f"SELECT {generation_sql('%s')}, f.id, CASE WHEN f.embedding_model = %s "
        f"AND f.embedding_dim = %s THEN {blob} END, f.kind, {expires} FROM (SELECT 1 AS one) "
        f"one LEFT JOIN {fact} f ON f.namespace = %s AND f.superseded_by_id IS NULL "
        "AND f.valid_to IS NULL ORDER BY f.id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [namespace, model, dim, namespace])
        every = cursor.fetchall()
    found = int(every[0][0]) if every else 0
    every = [row for row in every if row[1] is not None]
    rows = [row for row in every if row[2] is not None]
    codes: dict[str, int] = {}
    fact_kinds = np.fromiter(
        (codes.setdefault(row[3], len(codes)) for row in every), dtype=np.int32, count=len(every)
    )
    kinds = np.fromiter((codes[row[3]] for row in rows), dtype=np.int32, count=len(rows))
    packed = b"".join(bytes(row[2]) for row in rows)
    if pgvector:  # vector_send: int16 dimensions, int16 unused, then big-endian float4s
        raw = np.frombuffer(packed, dtype=">f4").reshape(len(rows), dim + 1)[:, 1:]
        vectors = np.ascontiguousarray(raw, dtype=np.float32)
    else:
        vectors = np.frombuffer(packed, dtype="<f4").reshape(len(rows), dim)
    ids = np.fromiter((row[1] for row in rows), dtype=np.int64, count=len(rows))
    return Matrix(
        generation=found,
        ids=ids,
        vectors=vectors,
        norms=np.einsum("ij,ij->i", vectors, vectors),
        kinds=kinds,
        kind_names=tuple(codes),
        expires=_expiries([row[4] for row in rows]),
        fact_ids=np.fromiter((row[1] for row in every), dtype=np.int64, count=len(every)),
        fact_kinds=fact_kinds,
        fact_expires=_expiries([row[4] for row in every]),
    )


def _expiries(values: list[Any]) -> np.ndarray | None:
    if all(value is None for value in values):
        return None
    if connection.vendor == "sqlite":
        return np.array([_NEVER_TEXT if v is None else str(v) for v in values])
    return np.fromiter(
        (_NEVER if v is None else _microseconds(v) for v in values),
        dtype=np.int64,
        count=len(values),
    )


def _microseconds(value: dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def now_key(now: dt.datetime) -> Any:
    """``now`` as a matrix's expiry times are compared with it, as the SQL compares them (on
    SQLite: the text the driver binds)."""
    if connection.vendor == "sqlite":
        adapted = sqlite3.adapt(now, sqlite3.PrepareProtocol, now)
        return adapted if isinstance(adapted, str) else str(adapted)
    return _microseconds(now)


# ---------------------------------------------------------------------------------------------
# Ranking


def _kept(
    matrix: Matrix,
    codes: np.ndarray,
    expires: np.ndarray | None,
    now: Any,
    kinds: Sequence[str] | None,
) -> np.ndarray | None:
    """Which rows of ``codes`` (kinds) and ``expires`` are current at ``now`` and of ``kinds``
    (None: all of them)."""
    keep = None
    if expires is not None:
        keep = expires > now
    if kinds:
        asked = set(kinds)
        wanted = [code for code, name in enumerate(matrix.kind_names) if name in asked]
        of_kind = np.isin(codes, wanted)
        keep = of_kind if keep is None else keep & of_kind
    return keep


def _eligible(
    matrix: Matrix, now: Any, kinds: Sequence[str] | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows current at ``now`` and of ``kinds``: (row indexes or None for all, ids)."""
    keep = _kept(matrix, matrix.kinds, matrix.expires, now, kinds)
    if keep is None:
        return None
    rows = np.flatnonzero(keep)
    return rows, matrix.ids[rows]


def eligible_ids(matrix: Matrix, *, now: Any, kinds: Sequence[str] | None) -> np.ndarray:
    """The ids, in order, of the facts recall may return at ``now`` (``now_key``) of ``kinds``,
    whatever their vectors: the facts neighbour runs are made of (``runs.around``)."""
    keep = _kept(matrix, matrix.fact_kinds, matrix.fact_expires, now, kinds)
    return matrix.fact_ids if keep is None else matrix.fact_ids[keep]


def top_dot(
    matrix: Matrix, vector: Sequence[float], *, now: Any, kinds: Sequence[str] | None, limit: int
) -> dict[int, float]:
    """The ``limit`` best eligible rows by dot product (what SQLite recall scores): fact id ->
    score, best first, ties by id."""
    picked = _eligible(matrix, now, kinds)
    if picked is None:
        return best(matrix.ids, similarities(matrix.vectors, vector), limit)
    rows, ids = picked
    return best(ids, similarities(matrix.vectors[rows], vector), limit)


#: How far (cosine distance) numpy's float32 arithmetic may be from pgvector's for one row: its
#: own SIMD sums differ in the last bits (seen: 7.5e-9 on 384 dimensions), so memory picks the
#: rows the database is to rank, never their final order.
TOLERANCE = 1e-4


def shortlist(
    matrix: Matrix, vector: Sequence[float], *, now: Any, kinds: Sequence[str] | None, limit: int
) -> list[int]:
    """The eligible rows that can be among the ``limit`` nearest by pgvector's cosine distance
    (``<=>``), for the candidate statement to rank with pgvector's own arithmetic: every row
    within ``TOLERANCE`` of the ``limit``-th distance computed here, and of the rows orthogonal
    to ``vector`` (a dot product of exactly 0 in any order of summation: distance exactly 1),
    the ``limit`` lowest ids, as ``ORDER BY distance, id`` takes them.
    """
    picked = _eligible(matrix, now, kinds)
    rows = None if picked is None else picked[0]
    ids = matrix.ids if picked is None else picked[1]
    if not len(ids) or limit <= 0:
        return []
    vectors = matrix.vectors if rows is None else matrix.vectors[rows]
    norms = matrix.norms if rows is None else matrix.norms[rows]
    query = np.asarray(vector, dtype=np.float32)
    dots = similarities(vectors, query)
    with np.errstate(divide="ignore", invalid="ignore"):
        sims = dots.astype(np.float64) / np.sqrt(
            norms.astype(np.float64) * float(np.dot(query, query))
        )
    distances = 1.0 - np.clip(sims, -1.0, 1.0)
    distances[np.isnan(distances)] = np.inf  # a zero vector: pgvector's NaN sorts last
    if len(ids) <= limit:
        return [int(i) for i in ids]
    cut = np.partition(distances, limit - 1)[limit - 1]
    orthogonal = dots == 0.0
    near = ~orthogonal & (distances <= cut + TOLERANCE)
    chosen = ids[near]
    if cut + TOLERANCE >= 1.0:
        chosen = np.concatenate([chosen, np.sort(ids[orthogonal])[:limit]])
    if np.isinf(cut):
        chosen = np.concatenate([chosen, np.sort(ids[np.isinf(distances)])[:limit]])
    return [int(i) for i in chosen]


def similarities(vectors: np.ndarray, vector: Sequence[float] | np.ndarray) -> np.ndarray:
    """Each row of ``vectors`` dotted with ``vector`` (float32), the same number for a row
    wherever it sits: einsum's loop, unlike BLAS's matrix-vector product, does not sum a row
    differently by its position, so memory and the database's rows rank alike to the last bit
    (and it was faster here, at 50,000 x 384 on 2 busy cores).
    """
    return np.einsum("ij,j->i", vectors, np.asarray(vector, dtype=np.float32))


def best(ids: np.ndarray, sims: np.ndarray, limit: int) -> dict[int, float]:
    """The ``limit`` highest ``sims``, best first, ties by id (lowest first): a full sort's
    answer, sorting only the rows that can be in it."""
    if not len(ids) or limit <= 0:
        return {}
    rows = np.arange(len(ids))
    if len(ids) > limit:
        negated = -sims
        cut = np.partition(negated, limit - 1)[limit - 1]
        if not np.isnan(cut):  # NaN scores sort last in a full sort; let that handle them
            rows = np.flatnonzero(negated <= cut)  # every row tied with the last one too
    order = rows[np.lexsort((ids[rows], -sims[rows]))][:limit]
    return {int(ids[i]): float(sims[i]) for i in order}
