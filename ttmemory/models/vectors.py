"""Where fact vectors live on each database: pgvector's ``vector``, or packed float32 bytes.

PostgreSQL with the ``vector`` extension stores embeddings in a ``vector`` column and ranks
them in SQL (with HNSW indexes in large namespaces). PostgreSQL without it, like SQLite and
every other database, stores the same vectors as little-endian float32 bytes (``bytea``) and
ranks them in numpy. Django's model state is the same on every database (one
``EmbeddingField``); only the column type differs, chosen when the table is created and read
back from the catalogue afterwards, so a server that gains pgvector later keeps working until
``ttmemory_reembed`` moves the column to ``vector``.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from django.apps import apps
from django.db import DatabaseError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Q
from django.db.models.functions import Cast

from ttmemory.models.operations import DatabaseOperation, Editor, State

logger = logging.getLogger(__name__)

VectorStorage = Literal["pgvector", "bytes"]
PGVECTOR: VectorStorage = "pgvector"
BYTES: VectorStorage = "bytes"

_CACHE_ATTRIBUTE = "_ttmemory_vector_storage"


def _fact_table() -> str:
    return str(apps.get_model("ttmemory", "Fact")._meta.db_table)


def pgvector_available(connection: BaseDatabaseWrapper) -> bool:
    """The server can install the ``vector`` extension (it is in ``pg_available_extensions``)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return cursor.fetchone() is not None


def pgvector_installed(connection: BaseDatabaseWrapper) -> bool:
    """The ``vector`` extension is installed in this database."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        return cursor.fetchone() is not None


def embedding_column_type(connection: BaseDatabaseWrapper) -> str | None:
    """The type name of ``ttmemory_fact.embedding`` on PostgreSQL; None before it exists."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
            "WHERE a.attrelid = to_regclass(%s) AND a.attname = 'embedding' "
            "AND NOT a.attisdropped",
            [_fact_table()],
        )
        row = cursor.fetchone()
    return str(row[0]) if row else None


def vector_storage(connection: BaseDatabaseWrapper) -> VectorStorage:
    """How this connection's database stores fact vectors.

    On PostgreSQL: what the existing column is, or, before the table exists (while migrating),
    ``vector`` when the extension is installed. Known answers are kept per physical connection
    (one catalogue query per connection); ``vector_storage_reset`` forgets them.
    """
    if connection.vendor != "postgresql":
        return BYTES
    cached = getattr(connection, _CACHE_ATTRIBUTE, None)
    if (
        cached is not None
        and connection.connection is not None
        and cached[0] is connection.connection
    ):
        return cached[1]
    column = embedding_column_type(connection)
    if column is None:  # not migrated yet: what the migration is about to create
        return PGVECTOR if pgvector_installed(connection) else BYTES
    storage = PGVECTOR if column == "vector" else BYTES
    setattr(connection, _CACHE_ATTRIBUTE, (connection.connection, storage))
    return storage


def vector_storage_reset(connection: BaseDatabaseWrapper) -> None:
    """Forget what ``vector_storage`` found (after the column changed type)."""
    if hasattr(connection, _CACHE_ATTRIBUTE):
        delattr(connection, _CACHE_ATTRIBUTE)


class VectorExtensionIfAvailable(DatabaseOperation):
    """``CREATE EXTENSION vector`` on PostgreSQL servers that have pgvector; nothing elsewhere.

    A server without pgvector (or a role not allowed to create it) migrates all the same:
    vectors are then stored as float32 bytes, and the system check ttmemory.W050 says how to
    turn pgvector on later. Changes no model state. Reversing it leaves the extension alone
    (other applications may use it).
    """

    reduces_to_sql = True  # sqlmigrate shows the CREATE EXTENSION where it would run

    def database_forwards(
        self, app_label: str, schema_editor: Editor, from_state: State, to_state: State
    ) -> None:
        connection = schema_editor.connection
        if connection.vendor != "postgresql" or pgvector_installed(connection):
            return
        if not pgvector_available(connection):
            logger.warning(
                "PostgreSQL without the pgvector extension: fact vectors will be stored as "
                "float32 bytes and compared in numpy (see the system check ttmemory.W050)"
            )
            return
        try:
            with transaction.atomic(using=connection.alias):
                schema_editor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except DatabaseError as exc:  # typically: permission denied to create extension
            logger.warning(
                "pgvector is available but could not be installed (%s): fact vectors will be "
                "stored as float32 bytes (see the system check ttmemory.W050)",
                exc,
            )

    def describe(self) -> str:
        return "Creates the pgvector extension where the server has it"


# ---------------------------------------------------------------------------------------------
# HNSW indexes: pgvector's HnswIndex, one partial expression index per dimension

#: Dimensions indexed by migration 0013: the default HashEmbedder and all-MiniLM-L6-v2 (384),
#: OpenAI's text-embedding-3-small (1536). Others: ``ttmemory_reembed`` creates theirs.
SHIPPED_DIMENSIONS = (384, 1536)
M = 16
EF_CONSTRUCTION = 64


def index_name(dimensions: int) -> str:
    return f"ttm_fact_hnsw_{dimensions}"


def hnsw_index(dimensions: int, *, m: int = M, ef_construction: int = EF_CONSTRUCTION) -> Any:
    """pgvector's ``HnswIndex`` of the facts of ``dimensions``: cosine distance, partial.

    The column has no fixed dimension, so the index is on ``embedding::vector(N)`` for the rows
    with ``embedding_dim = N``; approximate recall orders by that same expression.
    """
    if not isinstance(dimensions, int) or not 1 <= dimensions <= 2000:
        raise ValueError("HNSW indexes support 1 to 2000 dimensions")
    from django.contrib.postgres.indexes import OpClass
    from django.db.models import OrderBy
    from django.db.models.functions import Collate
    from django.db.models.indexes import IndexExpression
    from pgvector.django import HnswIndex, VectorField  # the postgres extra

    # What django.contrib.postgres's AppConfig.ready() registers (the app need not be
    # installed): an OpClass then follows its parenthesised expression instead of being
    # wrapped into it.
    IndexExpression.register_wrappers(OrderBy, OpClass, Collate)
    return HnswIndex(
        # opclasses= applies to plain columns only; an expression takes Django's OpClass.
        OpClass(Cast("embedding", VectorField(dimensions=dimensions)), name="vector_cosine_ops"),
        name=index_name(dimensions),
        m=int(m),
        ef_construction=int(ef_construction),
        condition=Q(embedding_dim=dimensions),
    )


class HnswIndexesIfAvailable(DatabaseOperation):
    """pgvector's ``HnswIndex`` for each of ``dimensions`` where fact vectors are pgvector's.

    Nothing on SQLite or on PostgreSQL storing float32 bytes (vectors ranked in numpy there);
    changes no model state, so every database's migration graph is the same. Reversing it
    drops the indexes.
    """

    def __init__(self, dimensions: list[int] | tuple[int, ...]) -> None:
        self.dimensions = tuple(dimensions)

    def database_forwards(
        self, app_label: str, schema_editor: Editor, from_state: State, to_state: State
    ) -> None:
        connection = schema_editor.connection
        if vector_storage(connection) != PGVECTOR:
            return
        model = to_state.apps.get_model(app_label, "Fact")
        for dimensions in self.dimensions:
            schema_editor.add_index(model, hnsw_index(dimensions))

    def database_backwards(
        self, app_label: str, schema_editor: Editor, from_state: State, to_state: State
    ) -> None:
        if vector_storage(schema_editor.connection) != PGVECTOR:
            return
        for dimensions in self.dimensions:
            schema_editor.execute(f"DROP INDEX IF EXISTS {index_name(dimensions)}")

    def describe(self) -> str:
        return f"Creates the HNSW indexes of fact vectors of {self.dimensions} dimensions"

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return (self.__class__.__name__, [], {"dimensions": list(self.dimensions)})
