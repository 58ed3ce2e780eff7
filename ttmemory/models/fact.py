"""Long-term memory: Fact (encrypted text, embedding, blind keyword index) and Profile."""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Mapping
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from ttmemory.fields import EncryptedJSONField, EncryptedQuerySet, EncryptedTextField
from ttmemory.models.vectors import PGVECTOR, vector_storage


class EmbeddingField(models.Field):
    """A float vector: pgvector ``vector`` on PostgreSQL with pgvector, packed little-endian
    float32 (``bytea`` / ``blob``) elsewhere, PostgreSQL without pgvector included.

    The column type follows the database (``ttmemory.models.vectors.vector_storage``), the model
    state does not, so ``makemigrations`` sees one field everywhere. The column has no fixed
    dimension, so switching embedders needs no migration; the HNSW index is an expression index
    per dimension (``ttmemory.longterm.vector_index``).
    """

    description = "Embedding vector"

    def db_type(self, connection: BaseDatabaseWrapper) -> str:
        if connection.vendor == "postgresql":
            return "vector" if vector_storage(connection) == PGVECTOR else "bytea"
        return "blob"

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        if value is None:
            return None
        if vector_storage(connection) == PGVECTOR:
            return "[" + ",".join(repr(float(v)) for v in value) + "]"
        return struct.pack(f"<{len(value)}f", *value)

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            return [float(v) for v in value.strip("[]").split(",")] if value != "[]" else []
        if isinstance(value, bytes | memoryview):
            raw = bytes(value)
            return list(struct.unpack(f"<{len(raw) // 4}f", raw))
        return [float(v) for v in value]  # pgvector's own adapter (numpy array)


class FactQuerySet(EncryptedQuerySet["Fact"]):
    def for_namespace(self, namespace: str) -> FactQuerySet:
        return self.filter(namespace=namespace)

    def current(self) -> FactQuerySet:
        """Not superseded, not ended, not expired."""
        now = timezone.now()
        return self.filter(superseded_by__isnull=True, valid_to__isnull=True).exclude(
            expires_at__lte=now
        )


class Fact(models.Model):
    """Something known about a namespace (a user), with provenance and validity.

    ``text`` is encrypted; ``text_hash`` (keyed per namespace) makes the same normalised text one
    fact per namespace; ``FactTerm`` rows are the blind keyword index, written with the index
    named by ``index_version`` (``ttmemory_reindex`` rebuilds stale ones). A contradicted fact
    keeps its row with ``valid_to`` and ``superseded_by`` set.
    """

    namespace = models.CharField(max_length=255)
    kind = models.CharField(max_length=32, default="fact")
    text = EncryptedTextField(bind=("namespace", "text_hash"))
    text_hash = models.CharField(max_length=64)
    metadata = models.JSONField(default=dict, blank=True, help_text="Stored in clear.")
    embedding = EmbeddingField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    embedding_dim = models.PositiveIntegerField(null=True, blank=True)
    term_count = models.PositiveIntegerField(default=0, help_text="Indexed terms (BM25 length).")
    index_version = models.CharField(
        max_length=32,
        blank=True,
        default="",
        db_default="",  # a row inserted without it (COPY, raw SQL) counts as stale
        help_text="Blind index the postings were written with; '' is the first release's.",
    )
    source_session = models.ForeignKey(
        "ttmemory.MemorySession",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    source_seqs = models.JSONField(default=list, blank=True)
    source_expired_at = models.DateTimeField(
        null=True, blank=True, help_text="When the source session expired (the fact stays)."
    )
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = FactQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "text_hash"], name="ttm_fact_ns_text_uniq"
            ),
        ]
        indexes = [
            # term_count too: recall's BM25 statistics (count, mean length) of a namespace are
            # then an index-only scan, not a read of every fact row with its vector.
            models.Index(
                fields=["namespace", "kind", "term_count"], name="ttm_fact_ns_kind_len_idx"
            ),
            models.Index(fields=["source_session"], name="ttm_fact_source_idx"),
            models.Index(fields=["expires_at"], name="ttm_fact_expiry_idx"),
            # Recall's neighbour context: the facts remembered just before and after a hit.
            models.Index(fields=["namespace", "id"], name="ttm_fact_ns_id_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} of {self.namespace}"

    @property
    def recall_count(self) -> int:
        """How many recalls returned this fact (``FactUsage``; written in the background)."""
        usage = self._usage()
        return usage.recall_count if usage is not None else 0

    @property
    def last_recalled_at(self) -> dt.datetime | None:
        """When a recall last returned this fact (``FactUsage``), None if never."""
        usage = self._usage()
        return usage.last_recalled_at if usage is not None else None

    def _usage(self) -> FactUsage | None:
        # One query, unless fetched with ``select_related("usage")`` (the API and the admin
        # do); for facts read together (``fetch_usage_together``: ``fact_recall``'s hits), one
        # query for all of them at the first read.
        together = self.__dict__.pop("_usage_together", None)
        if together is not None:
            for fact in together:
                fact.__dict__.pop("_usage_together", None)
            models.prefetch_related_objects(together, "usage")  # skips those fetched already
        try:
            return self.usage
        except FactUsage.DoesNotExist:
            return None


def fetch_usage_together(facts: list[Fact]) -> None:
    """Mark ``facts`` as read together: the first read of one's ``recall_count`` or
    ``last_recalled_at`` fetches the ``FactUsage`` of all of them in one query (none is
    fetched if nobody reads them, as when hits are rendered into a prompt)."""
    if len(facts) > 1:
        for fact in facts:
            fact.__dict__["_usage_together"] = facts


class FactUsage(models.Model):
    """A fact's recall statistics, in a narrow row of their own.

    Kept off the fact row on purpose: updating a column of ``ttmemory_fact`` writes a new
    version of the whole wide row (the vector inline), and with no free space on its page
    PostgreSQL inserts that version into every index of the table again, the HNSW index
    included: a few hundred recall counts took 0.2-3 s in a 1,100,000-fact database
    (docs/benchmarks.md). Here a count is an upsert of a small row with one index. No row: never
    recalled. Deleted with its fact (``on_delete``, by Django). No foreign-key constraint in the
    database: a count written while its fact is being deleted must not make that delete fail
    at commit (the write joins the fact table, so only that race can leave a row behind).
    """

    fact = models.OneToOneField(
        Fact, primary_key=True, on_delete=models.CASCADE, related_name="usage", db_constraint=False
    )
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"recalls of fact #{self.pk}"


class FactTerm(models.Model):
    """One blind-index posting: a keyed term hash in a fact, with its frequency there."""

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="terms", db_index=False)
    namespace = models.CharField(max_length=255)
    term = models.BigIntegerField()
    tf = models.PositiveSmallIntegerField(default=1)
    #: The fact's ``term_count``, kept on each of its postings: BM25 then ranks from the index
    #: alone, and a fact row is read only for the facts ranked first (``candidate_sql``).
    length = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["fact", "term"], name="ttm_factterm_fact_term_uniq"),
        ]
        indexes = [
            # Covering: a word's postings with everything BM25 needs, read by index-only scans.
            models.Index(
                fields=["namespace", "term", "fact", "tf", "length"],
                name="ttm_factterm_ns_term_cov_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"term of fact {self.fact_id}"

    @classmethod
    def of(cls, fact: Fact, counts: Mapping[int, int]) -> list[FactTerm]:
        """The postings of ``fact`` from its term counts: the one place they are built, so each
        carries the fact's namespace and length (``term_count``, set before this is called)."""
        return [
            cls(
                fact=fact,
                namespace=fact.namespace,
                term=term,
                tf=min(tf, 32767),
                length=fact.term_count,
            )
            for term, tf in counts.items()
        ]


class Profile(models.Model):
    """Structured data about a namespace, one JSON object per kind, merged on update."""

    namespace = models.CharField(max_length=255)
    kind = models.CharField(max_length=32, default="user")
    data = EncryptedJSONField(default=dict, bind=("namespace", "kind"))
    expires_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = EncryptedQuerySet["Profile"].as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["namespace", "kind"], name="ttm_profile_ns_kind_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} profile of {self.namespace}"
