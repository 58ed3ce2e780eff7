"""The HNSW indexes of fact embeddings on PostgreSQL: one partial expression index per dimension.

The embedding column has no fixed dimension (switching embedders needs no migration), so each
index is pgvector's ``HnswIndex`` on ``embedding::vector(N)`` with the cosine operator class,
for the rows of dimension N (``WHERE embedding_dim = N``); recall's approximate path queries
that same expression so the planner can use it. Migration 0013 creates the indexes of
``SHIPPED_DIMENSIONS``; ``ttmemory_reembed`` creates the one of any other dimension it embeds
into (``ensure_hnsw_index``).
"""

from __future__ import annotations

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

from ttmemory.models.vectors import (
    EF_CONSTRUCTION,
    PGVECTOR,
    SHIPPED_DIMENSIONS,
    M,
    hnsw_index,
    index_name,
    vector_storage,
)

__all__ = [
    "SHIPPED_DIMENSIONS",
    "ensure_hnsw_index",
    "hnsw_index",
    "hnsw_index_exists",
    "index_name",
]


def hnsw_index_exists(dimensions: int, *, using: BaseDatabaseWrapper | None = None) -> bool:
    """The HNSW index of ``dimensions`` exists (PostgreSQL)."""
    with (using or connection).cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [index_name(dimensions)])
        return cursor.fetchone() is not None


def ensure_hnsw_index(
    dimensions: int, *, m: int = M, ef_construction: int = EF_CONSTRUCTION
) -> bool:
    """Create the HNSW index for ``dimensions`` if missing; True if it was created.

    A no-op on databases other than PostgreSQL with pgvector (vector search runs in numpy there).
    """
    if vector_storage(connection) != PGVECTOR:
        return False
    index = hnsw_index(dimensions, m=m, ef_construction=ef_construction)
    from ttmemory.models import Fact

    if connection.in_atomic_block:
        # Deferred foreign-key checks pending in this transaction block CREATE INDEX.
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    if hnsw_index_exists(dimensions):
        return False
    with connection.schema_editor(atomic=False) as editor:
        editor.add_index(Fact, index)
    return True
