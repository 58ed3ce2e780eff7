"""Episodic index of messages: blind keyword postings and a vector per message, no plaintext.

``MessageEntry`` is one indexed message (its length in terms, its embedding once the background
job ``message_embed`` has made it); ``MessageTerm`` rows are its blind-index postings (keyed
HMACs of its own terms, as for facts). Both are keyed by ``(session, seq)``, not by a foreign
key to ``Message``: deleting messages stays a single fast DELETE (a cascade would make Django
load, and so decrypt, every message first), so each service that deletes messages deletes
their entries and postings too (``ttmemory.services.episodes.index_delete_locked``).
"""

from __future__ import annotations

from django.db import models

from ttmemory.models.fact import EmbeddingField


class MessageEntry(models.Model):
    """One message in the episodic index: term count (BM25 length) and embedding."""

    session = models.ForeignKey(
        "ttmemory.MemorySession", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    namespace = models.CharField(max_length=255)
    seq = models.PositiveBigIntegerField()
    term_count = models.PositiveIntegerField(default=0)
    embedding = EmbeddingField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    embedding_dim = models.PositiveIntegerField(null=True, blank=True)
    index_version = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session", "seq"], name="ttm_msgentry_session_seq_uniq"
            ),
        ]
        indexes = [
            models.Index(fields=["namespace"], name="ttm_msgentry_ns_idx"),
        ]

    def __str__(self) -> str:
        return f"index of {self.session_id}#{self.seq}"


class MessageTerm(models.Model):
    """One blind-index posting of a message: a keyed term hash and its frequency there."""

    session = models.ForeignKey(
        "ttmemory.MemorySession", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    namespace = models.CharField(max_length=255)
    seq = models.PositiveBigIntegerField()
    term = models.BigIntegerField()
    tf = models.PositiveSmallIntegerField(default=1)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session", "seq", "term"], name="ttm_msgterm_session_seq_term_uniq"
            ),
        ]
        indexes = [
            models.Index(fields=["namespace", "term"], name="ttm_msgterm_ns_term_idx"),
        ]

    def __str__(self) -> str:
        return f"term of {self.session_id}#{self.seq}"
