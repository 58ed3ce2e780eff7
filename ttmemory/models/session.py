"""MemorySession: one conversation of one namespace, with exact counters."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from ttmemory.fields import EncryptedJSONField, EncryptedQuerySet, EncryptedTextField


class MemorySessionQuerySet(EncryptedQuerySet["MemorySession"]):
    def for_namespace(self, namespace: str) -> MemorySessionQuerySet:
        return self.filter(namespace=namespace)


class MemorySession(models.Model):
    """A conversation, identified by ``(namespace, key)``.

    ``message_count`` and ``token_count`` count live (not archived) messages; ``last_seq`` is the
    highest ``seq`` ever assigned and never goes back, so a seq is never reused.
    """

    namespace = models.CharField(max_length=255)
    key = models.CharField(max_length=255)
    metadata = models.JSONField(default=dict, blank=True, help_text="Stored in clear; no content.")
    message_count = models.PositiveIntegerField(default=0)
    token_count = models.PositiveBigIntegerField(default=0)
    last_seq = models.PositiveBigIntegerField(default=0)
    # Bound to (namespace, key), the identity the row has before its INSERT assigns an id.
    summary = EncryptedTextField(null=True, blank=True, bind=("namespace", "key"))
    summary_upto_seq = models.PositiveBigIntegerField(default=0)
    history_version = models.PositiveBigIntegerField(
        default=0,
        help_text=(
            "Goes up on every write that changes which messages are archived or the summary "
            "(trim, clear, rollback, summarise); never restored by a rollback. A summary "
            "computed outside the lock is stored only if it has not moved meanwhile."
        ),
    )
    learned_upto_seq = models.PositiveBigIntegerField(
        default=0, help_text="Messages up to this seq have been through fact extraction."
    )
    indexed_upto_seq = models.PositiveBigIntegerField(
        default=0,
        help_text=(
            "Messages up to this seq are in the episodic index (message_search); later ones "
            "are indexed by the message_index job and scored from the messages meanwhile."
        ),
    )
    state = EncryptedJSONField(
        default=dict,
        blank=True,
        help_text="Named variables for prompts.",
        bind=("namespace", "key"),
    )
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="branches",
        help_text="The session this one was forked from (session_fork, session_edit).",
    )
    forked_at_seq = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="The parent's last seq copied into this fork."
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = MemorySessionQuerySet.as_manager()

    class Meta:
        verbose_name = "memory session"
        permissions = [
            ("rollback_memorysession", "Can roll back a session (and undo a rollback)"),
            ("erase_namespace", "Can erase a whole namespace"),
            ("export_namespace", "Can export a whole namespace"),
            ("reveal_content", "Can reveal masked message and fact content"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "key"], name="ttm_session_ns_key_uniq"),
        ]
        # No index on updated_at: every append updates it, and an indexed column would turn
        # those row updates from HOT (in-page) into full index insertions on PostgreSQL.

    def __str__(self) -> str:
        return f"{self.namespace}/{self.key}"
