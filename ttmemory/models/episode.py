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
    """One blind-index posting of a message: a keyed term hash and its frequency there.

    Two B-trees per posting, both needed: the primary key ``(session, seq, term)`` (deletes by
    session and seq, one posting per term) and ``(term, session, seq)`` (search: a term's
    newest postings are read in index order and the read stops at ``MESSAGE_SEARCH_TERM_LIMIT``;
    on ``(term)`` alone, before 0025, a word in most of a namespace's messages had every posting
    read and sorted by each search). The term hashes are keyed
    per namespace, so the search index needs no namespace column in front; queries still filter
    by ``namespace`` (checked on the rows the term index finds). Before 0018 each posting also
    had a surrogate ``id`` and a ``(namespace, term)`` index: three B-trees, written 2,800 times
    for 100 messages on the append path.

    No foreign-key constraint in the database (``db_constraint=False``; before 0021 there was
    one): PostgreSQL checks a deferred constraint once per inserted row at commit, and those
    2,700 checks for 100 messages cost as much as the postings' own COPY. The rows stay tied to
    their session all the same: every service that deletes a session or its messages holds the
    session's lock and deletes the postings first (``index_delete_locked``, the namespace
    erase, the retention job), the ``message_index`` job writes them under that lock only after
    reading the session row again, and Django's ``on_delete=CASCADE`` still deletes them with
    a session deleted through the ORM.
    """

    pk = models.CompositePrimaryKey("session", "seq", "term")
    session = models.ForeignKey(
        "ttmemory.MemorySession",
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    namespace = models.CharField(max_length=255)
    seq = models.PositiveBigIntegerField()
    term = models.BigIntegerField()
    tf = models.PositiveSmallIntegerField(default=1)

    class Meta:
        indexes = [
            models.Index(fields=["term", "session", "seq"], name="ttm_msgterm_term_seq_idx"),
        ]

    def __str__(self) -> str:
        return f"term of {self.session_id}#{self.seq}"
