"""Message: one chat message of a session, encrypted whole, with packing metadata in clear."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from ttmemory.fields import EncryptedJSONField, EncryptedQuerySet


class Role(models.TextChoices):
    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    FUNCTION = "function"


class MessageQuerySet(EncryptedQuerySet["Message"]):
    def live(self) -> MessageQuerySet:
        return self.filter(archived_at__isnull=True)

    def for_namespace(self, namespace: str) -> MessageQuerySet:
        return self.filter(namespace=namespace)


class Message(models.Model):
    """One OpenAI Chat Completions message dict, stored encrypted in ``data``.

    ``role``, ``token_count``, ``tool_call_id``, ``tool_call_ids`` and ``group_seq`` are kept in
    clear (ids and counts, no content) so budget packing never decrypts. ``group_seq`` is the seq
    of the assistant message whose tool call this row answers, or the row's own seq.
    """

    # No separate index on session: the (session, seq) unique constraint leads with it.
    session = models.ForeignKey(
        "ttmemory.MemorySession",
        on_delete=models.CASCADE,
        related_name="messages",
        db_index=False,
    )
    namespace = models.CharField(max_length=255)
    seq = models.PositiveBigIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    data = EncryptedJSONField(bind=("namespace", "session_id", "seq"))
    token_count = models.PositiveIntegerField(default=0)
    tool_call_id = models.CharField(max_length=255, blank=True, default="")
    tool_call_ids = models.JSONField(default=list, blank=True)
    group_seq = models.PositiveBigIntegerField()
    archived_at = models.DateTimeField(null=True, blank=True)
    rewound_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set with archived_at when a rewind, not a trim, archived it.",
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = MessageQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="ttm_message_session_seq_uniq"),
        ]
        indexes = [
            models.Index(
                fields=["session", "seq"],
                condition=models.Q(archived_at__isnull=True),
                name="ttm_message_live_idx",
            ),
            # Archived rows only (for ARCHIVED_MESSAGE_TTL): appends never touch it.
            models.Index(
                fields=["archived_at"],
                condition=models.Q(archived_at__isnull=False),
                name="ttm_message_archived_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.role}"
