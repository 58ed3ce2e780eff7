"""Each namespace's fact vectors kept in this process's memory on SQLite, checked on every query.

Exact vector recall on SQLite ranks every current vector of the namespace in numpy; reading
them (one packed float32 blob per fact) cost far more than ranking them: 205 ms of a 221 ms
recall at 50,000 facts, where the matrix product takes a few (docs/benchmarks.md, "Latency on
SQLite"). So recall keeps, per namespace, embedding model and dimension, the matrix of its
current vectors, their fact ids and kinds, and serves the vector list from it while nothing in
the database has changed since it was read.

Matrices are read through a connection opened for the purpose (never Django's, whose open
statements may hold an older snapshot in WAL mode), so they are always at least as new as the
check that preceded them.

Whether anything changed is asked of the database on every query, never of this process: one
``PRAGMA data_version`` on a connection of its own ("watcher") that never writes, so every
commit by any other connection (this process's Django connections, other processes, the
``sqlite3`` shell) changes the answer. The watcher's file is compared with the database
file's identity too (a file replaced on disk is a new database). SQLite tells whether the
database changed, not which namespace: any commit (a message appended, recall statistics
written) drops every matrix of this process, which the next query of each namespace reads again
(what every query cost before). A per-namespace generation would need a new table or column
(a migration); this needs none.

Not served from memory (the database is read, as before): inside a transaction (its own
uncommitted writes are invisible to the watcher), on an in-memory database, with
``RECALL_VECTOR_CACHE_MB`` 0, and for a namespace whose matrix alone exceeds it. Matrices are
dropped least recently used first to stay within ``RECALL_VECTOR_CACHE_MB`` per process.
Expiry is honoured without a write: a matrix is read again once the earliest ``expires_at``
among its facts has passed. The bound is read on every query (a lowered one applies at the next
recall); nothing else depends on settings, so no ``setting_changed`` receiver is needed.
"""

from __future__ import annotations

import itertools
import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.db import connection
from django.utils import timezone

from ttmemory.conf import app_settings
from ttmemory.models import Fact

logger = logging.getLogger(__name__)

Key = tuple[str, str, str, int]  # database file, namespace, embedding model, dimensions
Stamp = tuple[int, int]  # (watcher epoch, data_version)


@dataclass(frozen=True)
class Matrix:
    """The current vectors of one namespace, model and dimension, as of ``stamp``.

    ``read_at``: the time the rows were filtered at (SQLite's text form); ``expires``: the
    earliest ``expires_at`` among them (None: none expires). Rows are in id order.
    """

    stamp: Stamp
    read_at: str
    expires: str | None
    ids: np.ndarray
    vectors: np.ndarray
    kinds: np.ndarray
    kind_names: tuple[str, ...]

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes + self.vectors.nbytes + self.kinds.nbytes)

    def fresh(self, now: str) -> bool:
        """No row has expired since it was read (and the clock has not gone back)."""
        return self.read_at <= now and (self.expires is None or self.expires > now)


@dataclass
class CacheStats:
    """Process-wide counters: queries served from memory, matrices read, and dropped."""

    hits: int = 0
    reads: int = 0
    evictions: int = 0
    invalidations: int = 0


stats = CacheStats()
_epochs = itertools.count(1)
_lock = threading.Lock()
_matrices: OrderedDict[Key, Matrix] = OrderedDict()
_size = 0
_seen: dict[str, Stamp] = {}  # per database file: the stamp the matrices were checked against


class Watcher:
    """This process's connection to one SQLite file that never writes: asked only
    ``PRAGMA data_version``, which changes whenever another connection has committed since it
    was last asked (each ask is a read of the file's header or WAL index, never of memory).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.pid = os.getpid()
        self.file = _identity(path)
        self.epoch = next(_epochs)
        self.conn = _connect(path, shared=True)
        self.lock = threading.Lock()

    def current(self) -> bool:
        """Still this process's, on the file now at ``path``."""
        return self.pid == os.getpid() and _identity(self.path) == self.file

    def stamp(self) -> Stamp:
        with self.lock:
            row = self.conn.execute("PRAGMA data_version").fetchone()
        return self.epoch, int(row[0])

    def close(self) -> None:
        if self.pid == os.getpid():
            self.conn.close()


_watchers: dict[str, Watcher] = {}


def _connect(path: str, *, shared: bool = False) -> sqlite3.Connection:
    """A plain autocommit connection to the file at ``path`` (never creating it), waiting for
    locks as long as Django's connection does."""
    timeout = float(connection.settings_dict.get("OPTIONS", {}).get("timeout", 5))
    uri = Path(path).resolve().as_uri() + "?mode=rw"
    return sqlite3.connect(
        uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=not shared
    )


def _identity(path: str) -> tuple[int, int]:
    found = os.stat(path)
    return found.st_dev, found.st_ino


def database_file() -> str | None:
    """The file of the default connection's SQLite database; None for anything else."""
    if connection.vendor != "sqlite":
        return None
    name = str(connection.settings_dict.get("NAME") or "")
    if not name or name == ":memory:" or name.startswith("file:") or "mode=memory" in name:
        return None
    return name  # a missing file fails the watcher's stat: the database is read


def stamp(path: str) -> Stamp:
    """What the database at ``path`` looks like now: (watcher, data_version), one read.

    A new watcher (a new epoch, so no older stamp matches) after a fork or when the file at
    ``path`` was replaced.
    """
    watcher = _watchers.get(path)
    if watcher is None or not watcher.current():
        with _lock:
            watcher = _watchers.get(path)
            if watcher is None or not watcher.current():
                if watcher is not None:
                    watcher.close()
                watcher = _watchers[path] = Watcher(path)
    return watcher.stamp()


def budget() -> int:
    """Bytes this process may keep (``RECALL_VECTOR_CACHE_MB``, read when asked)."""
    return int(app_settings.RECALL_VECTOR_CACHE_MB) * 1024 * 1024


def usable() -> str | None:
    """The database file whose matrices may serve this query, or None (read the database)."""
    if budget() <= 0:
        return None
    if connection.in_atomic_block or not connection.get_autocommit():
        return None  # its own uncommitted writes: only this connection sees them
    return database_file()


def top(
    namespace: str,
    vector: Sequence[float],
    *,
    model: str,
    limit: int,
    kinds: Sequence[str] | None,
) -> dict[int, float] | None:
    """The best ``limit`` current facts of ``namespace`` by cosine similarity to ``vector``,
    among ``kinds``: what ``candidates`` reads from the database, from memory. None when the
    cache may not serve this query (see the module's docstring): the caller reads the database.
    """
    path = usable()
    if path is None:
        return None
    now_value = timezone.now()
    now = _sqlite_text(now_value)
    try:
        seen = stamp(path)
    except (sqlite3.Error, OSError):
        logger.debug("vector cache: cannot check %s; reading the database", path, exc_info=True)
        return None
    key = (path, namespace, model, len(vector))
    matrix = _get(key, seen, now)
    if matrix is None:
        try:
            matrix = _read(path, namespace, model, len(vector), now_value, now, seen)
        except sqlite3.Error:
            logger.debug("vector cache: cannot read %s; reading the database", path, exc_info=True)
            return None
        _put(key, matrix)
    return _rank(matrix, vector, limit=limit, kinds=kinds)


def _sqlite_text(value: Any) -> str:
    """``value`` as the sqlite3 driver binds it (Django's adapter): what SQL compares with."""
    adapted = sqlite3.adapt(value, sqlite3.PrepareProtocol, value)
    return adapted if isinstance(adapted, str) else str(adapted)


def _get(key: Key, seen: Stamp, now: str) -> Matrix | None:
    global _size
    with _lock:
        _evict(budget())  # a bound lowered since the last query applies now
        if _seen.get(key[0]) != seen:
            # Something was committed: every matrix of this database may be stale (or hold an
            # erased fact). Drop them all now rather than when each is next asked for.
            dropped = [k for k in _matrices if k[0] == key[0]]
            for k in dropped:
                _size -= _matrices.pop(k).nbytes
            stats.invalidations += len(dropped)
            _seen[key[0]] = seen
            return None
        matrix = _matrices.get(key)
        if matrix is None or matrix.stamp != seen or not matrix.fresh(now):
            return None
        _matrices.move_to_end(key)
        stats.hits += 1
        return matrix


def _put(key: Key, matrix: Matrix) -> None:
    global _size
    bound = budget()
    with _lock:
        stats.reads += 1
        old = _matrices.pop(key, None)
        if old is not None:
            _size -= old.nbytes
        if matrix.nbytes > bound or _seen.get(key[0]) != matrix.stamp:
            return  # too large to keep, or the database changed while it was read
        _evict(bound - matrix.nbytes)
        _matrices[key] = matrix
        _size += matrix.nbytes


def _evict(bound: int) -> None:
    """Drop the least recently used matrices until at most ``bound`` bytes remain (under
    ``_lock``)."""
    global _size
    while _matrices and _size > bound:
        _, evicted = _matrices.popitem(last=False)
        _size -= evicted.nbytes
        stats.evictions += 1


def _read(
    path: str, namespace: str, model: str, dim: int, now_value: Any, now: str, seen: Stamp
) -> Matrix:
    """The namespace's current vectors of ``model`` and ``dim``, read after ``seen`` was taken
    (so a commit in between makes the next query read them again, never the reverse).

    Read through a connection opened for it, not Django's: a statement left open on Django's
    connection (a queryset iterated in chunks around the recall) keeps, in WAL mode, a
    snapshot older than ``seen``, which would then be kept as current.
    """
    table = connection.ops.quote_name(Fact._meta.db_table)
    # candidates._current's conditions, with the same bound `now` (the same adapter binds it).
    sql = (
        f"SELECT f.id, f.embedding, f.kind, CAST(f.expires_at AS TEXT) FROM {table} f "
        "WHERE f.namespace = ? AND f.embedding_model = ? AND f.embedding_dim = ? "
        "AND f.superseded_by_id IS NULL AND f.valid_to IS NULL "
        "AND (f.expires_at IS NULL OR f.expires_at > ?) ORDER BY f.id"
    )
    reader = _connect(path)
    try:
        rows = reader.execute(sql, [namespace, model, dim, now_value]).fetchall()
    finally:
        reader.close()
    codes: dict[str, int] = {}
    kinds = np.fromiter(
        (codes.setdefault(kind, len(codes)) for _, _, kind, _ in rows), dtype=np.int32
    )
    expiring = [expires for _, _, _, expires in rows if expires is not None]
    vectors = np.frombuffer(b"".join(bytes(blob) for _, blob, _, _ in rows), dtype="<f4")
    return Matrix(
        stamp=seen,
        read_at=now,
        expires=min(expiring) if expiring else None,
        ids=np.fromiter((pk for pk, _, _, _ in rows), dtype=np.int64, count=len(rows)),
        vectors=vectors.reshape(len(rows), dim),
        kinds=kinds,
        kind_names=tuple(codes),
    )


def _rank(
    matrix: Matrix, vector: Sequence[float], *, limit: int, kinds: Sequence[str] | None
) -> dict[int, float]:
    if not len(matrix.ids):
        return {}
    sims = similarities(matrix.vectors, vector)
    ids = matrix.ids
    if kinds:
        asked = set(kinds)
        wanted = [code for code, name in enumerate(matrix.kind_names) if name in asked]
        keep = np.isin(matrix.kinds, wanted)
        sims, ids = sims[keep], ids[keep]
    return best(ids, sims, limit)


def similarities(vectors: np.ndarray, vector: Sequence[float]) -> np.ndarray:
    """Each row of ``vectors`` dotted with ``vector`` (float32), the same number for a row
    wherever it sits: einsum's loop, unlike BLAS's matrix-vector product, does not sum a row
    differently by its position, so memory and the database rank alike to the last bit (and
    it was faster here: 3-7 ms for 50,000 x 384 against 7-15 ms, on 2 busy cores).
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


def clear() -> None:
    """Drop every matrix and watcher of this process."""
    global _size
    with _lock:
        _matrices.clear()
        _seen.clear()
        _size = 0
        for watcher in _watchers.values():
            watcher.close()
        _watchers.clear()


def size() -> int:
    """Bytes held by this process's matrices."""
    return _size
