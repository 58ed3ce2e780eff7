"""The HNSW index of fact embeddings on PostgreSQL: one partial expression index per dimension.

The embedding column has no fixed dimension (switching embedders needs no migration), so the
index is built on ``embedding::vector(N)`` for the rows of dimension N; recall's approximate
path queries that same expression so the planner can use it.
"""

from __future__ import annotations

from django.db import connection

from ttmemory.models import Fact
from ttmemory.models.vectors import PGVECTOR, vector_storage


def index_name(dimensions: int) -> str:
    return f"ttm_fact_hnsw_{dimensions}"


def ensure_hnsw_index(dimensions: int, *, m: int = 16, ef_construction: int = 64) -> bool:
    """Create the HNSW index for ``dimensions`` if missing; True if it was created.

    A no-op on databases other than PostgreSQL with pgvector (vector search runs in numpy there).
    """
    if vector_storage(connection) != PGVECTOR:
        return False
    if not isinstance(dimensions, int) or not 1 <= dimensions <= 2000:
        raise ValueError("HNSW indexes support 1 to 2000 dimensions")
    name = index_name(dimensions)
    table = connection.ops.quote_name(Fact._meta.db_table)
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            # Deferred foreign-key checks pending in this transaction block CREATE INDEX.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
        if cursor.fetchone():
            return False
        cursor.execute(
            f"CREATE INDEX {name} ON {table} USING hnsw "
            f"((embedding::vector({dimensions})) vector_cosine_ops) "
            f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) "
            f"WHERE embedding_dim = {dimensions}"
        )
    return True
