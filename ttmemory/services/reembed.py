"""Re-embedding: move every fact's vector to the configured embedder, in resumable batches."""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Q, QuerySet

from ttmemory.backends.embedders import Embedder, get_embedder
from ttmemory.exceptions import EmbeddingError
from ttmemory.longterm.vector_index import ensure_hnsw_index
from ttmemory.models import Fact, MessageEntry
from ttmemory.models.vectors import (
    BYTES,
    PGVECTOR,
    pgvector_installed,
    vector_storage,
    vector_storage_reset,
)

logger = logging.getLogger(__name__)

HNSW_MAX_DIMENSIONS = 2000  # pgvector's limit for an index on ``vector``


@dataclass
class ReembedStats:
    """One run: facts pending at the start, re-embedded, skipped (changed meanwhile)."""

    model: str
    dimensions: int
    pending: int = 0
    embedded: int = 0
    skipped: int = 0
    batches: int = 0
    index_created: bool = False


@dataclass(frozen=True)
class VectorGroup:
    """Facts sharing a vector model and dimension ("" and None: no vector)."""

    model: str
    dimensions: int | None
    count: int
    current: bool


def stale_facts(embedder: Embedder) -> QuerySet[Fact]:
    """Facts without a vector of ``embedder``'s model and dimension (none, or another's)."""
    return Fact.objects.filter(
        Q(embedding__isnull=True)
        | Q(embedding_dim__isnull=True)
        | ~Q(embedding_model=embedder.model)
        | ~Q(embedding_dim=embedder.dimensions)
    )


def vector_groups(embedder: Embedder) -> list[VectorGroup]:
    """Fact counts per vector model and dimension, marking the ones ``embedder`` makes."""
    groups = [
        VectorGroup(
            model=model,
            dimensions=dimensions,
            count=count,
            current=(model, dimensions) == (embedder.model, embedder.dimensions),
        )
        for model, dimensions, count in Fact.objects.filter(embedding__isnull=False)
        .values_list("embedding_model", "embedding_dim")
        .annotate(count=Count("pk"))
        .order_by("embedding_model", "embedding_dim")
    ]
    missing = Fact.objects.filter(embedding__isnull=True).count()
    if missing:
        groups.append(VectorGroup(model="", dimensions=None, count=missing, current=False))
    return groups


def facts_reembed(
    *,
    batch_size: int,
    embedder: Embedder | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> ReembedStats:
    """Give every stale fact (see ``stale_facts``) a vector of the configured embedder.

    Walks the primary key in batches of ``batch_size``: the batch's texts are decrypted and
    embedded outside any transaction, then written in one transaction per batch, each row only
    if it is still stale and its text unchanged (a fact rewritten meanwhile is counted in
    ``skipped`` and left for the next run). Stopping at any point is safe and running again
    resumes. Recall keeps working throughout, since it only compares vectors of the configured
    model: re-embedded facts are found by meaning and keyword, the others by keyword.

    An embedder failure raises ``EmbeddingError`` naming the batch; finished batches are kept.
    On PostgreSQL the HNSW index of the new dimension is created at the end (if missing).
    """
    embedder = embedder or get_embedder()
    model, dimensions = embedder.model, embedder.dimensions
    stats = ReembedStats(model=model, dimensions=dimensions, pending=stale_facts(embedder).count())
    last_pk = 0
    while True:
        batch = list(
            stale_facts(embedder)
            .filter(pk__gt=last_pk)
            .order_by("pk")
            .only("pk", "text")[:batch_size]
        )
        if not batch:
            break
        texts = {fact.pk: fact.text for fact in batch}
        vectors = _embed(embedder, list(texts.values()), batch, stats)
        by_pk = dict(zip(texts, vectors, strict=True))
        written = 0
        with transaction.atomic():
            still_stale = (
                stale_facts(embedder).select_for_update().filter(pk__in=list(by_pk)).only("text")
            )
            for fact in still_stale:
                if fact.text != texts[fact.pk]:
                    continue
                written += Fact.objects.filter(pk=fact.pk).update(
                    embedding=by_pk[fact.pk], embedding_model=model, embedding_dim=dimensions
                )
        stats.embedded += written
        stats.skipped += len(batch) - written
        stats.batches += 1
        last_pk = batch[-1].pk
        if on_batch is not None:
            on_batch(len(batch))
    if vector_storage(connection) == PGVECTOR and dimensions <= HNSW_MAX_DIMENSIONS:
        if connection.in_atomic_block:
            # Called inside a transaction: CREATE INDEX refuses to run while deferred foreign
            # key checks are pending, so run them now (they would run at commit anyway).
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        stats.index_created = ensure_hnsw_index(dimensions)
    return stats


def vector_column_upgrade() -> int | None:
    """Move the embedding column from float32 bytes to pgvector's ``vector``, keeping vectors.

    For a PostgreSQL database migrated before the ``vector`` extension was installed: once it
    is (``CREATE EXTENSION vector``), this changes the column type and writes every stored
    vector back, in one transaction (recall waits for it, then ranks in SQL). Returns how many
    vectors were moved, or None when there is nothing to do (not PostgreSQL, the column is
    already ``vector``, or the extension is not installed).
    """
    if connection.vendor != "postgresql" or vector_storage(connection) != BYTES:
        return None
    if not pgvector_installed(connection):
        return None
    quote = connection.ops.quote_name
    # The episodic index's vectors move with the facts' (one column type per database).
    tables = [quote(Fact._meta.db_table), quote(MessageEntry._meta.db_table)]
    try:
        moved = _move_vectors(*tables)
    finally:  # committed or rolled back: read the column type afresh
        vector_storage_reset(connection)
    logger.info("moved %d fact vectors to a pgvector column", moved)
    return moved


def _move_vectors(*tables: str) -> int:
    moved = 0
    with transaction.atomic(), connection.cursor() as cursor:
        # ALTER TABLE refuses to run while deferred foreign-key checks are pending.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for table in tables:
            moved += _move_table(cursor, table)
    return moved


def _move_table(cursor: Any, table: str) -> int:
    cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
    cursor.execute(f"SELECT id, embedding FROM {table} WHERE embedding IS NOT NULL")
    stored = [(pk, bytes(raw)) for pk, raw in cursor.fetchall()]
    cursor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector USING NULL")
    vector_storage_reset(connection)
    for pk, raw in stored:
        values = struct.unpack(f"<{len(raw) // 4}f", raw)
        literal = "[" + ",".join(repr(v) for v in values) + "]"
        cursor.execute(f"UPDATE {table} SET embedding = %s::vector WHERE id = %s", [literal, pk])
    return len(stored)


def _embed(
    embedder: Embedder, texts: list[str], batch: list[Fact], stats: ReembedStats
) -> list[list[float]]:
    where = (
        f"re-embedding facts #{batch[0].pk}-#{batch[-1].pk} with {embedder.model!r} failed "
        f"after {stats.embedded} facts in {stats.batches} batches (kept; run again to resume)"
    )
    try:
        vectors = embedder.embed(texts)
    except Exception as exc:  # any embedder failure stops the run, loudly
        raise EmbeddingError(f"{where}: {type(exc).__name__}: {exc}") from exc
    if len(vectors) != len(texts) or any(len(v) != embedder.dimensions for v in vectors):
        raise EmbeddingError(
            f"{where}: the embedder returned {len(vectors)} vectors for {len(texts)} texts "
            f"or a dimension other than {embedder.dimensions}"
        )
    return vectors
