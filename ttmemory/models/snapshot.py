"""Snapshot: the whole state of a session at one moment, encrypted, for safe rollback."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from ttmemory.fields import EncryptedJSONField, EncryptedQuerySet


class SnapshotKind(models.TextChoices):
    MANUAL = "manual"
    SAFETY = "safety"  # taken by a safe rollback just before it restores; undoes the rollback
    AUTOMATIC = "automatic"  # every AUTO_SNAPSHOT_EVERY messages


class SnapshotQuerySet(EncryptedQuerySet["Snapshot"]):
    def for_namespace(self, namespace: str) -> SnapshotQuerySet:
        return self.filter(namespace=namespace)

    def newest_first(self) -> SnapshotQuerySet:
        return self.order_by("-created_at", "-pk")


class Snapshot(models.Model):
    """A session's live messages (with seqs and metadata), summary and counters.

    ``payload`` is encrypted and authenticated (AES-256-GCM); a rollback also checks that its
    counters agree with the clear columns. There is no separate checksum: an unkeyed digest of
    the plaintext would let anyone holding the database test guesses of the content.
    """

    session = models.ForeignKey(
        "ttmemory.MemorySession", on_delete=models.CASCADE, related_name="snapshots"
    )
    namespace = models.CharField(max_length=255)
    label = models.CharField(max_length=200, blank=True, default="")
    kind = models.CharField(
        max_length=16, choices=SnapshotKind.choices, default=SnapshotKind.MANUAL
    )
    payload = EncryptedJSONField(bind=("namespace", "session_id", "upto_seq"))
    message_count = models.PositiveIntegerField()
    token_count = models.PositiveBigIntegerField()
    upto_seq = models.PositiveBigIntegerField(help_text="The session's last_seq when taken.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = SnapshotQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["session", "-created_at"], name="ttm_snapshot_session_idx"),
            models.Index(fields=["namespace"], name="ttm_snapshot_ns_idx"),
            models.Index(fields=["created_at"], name="ttm_snapshot_time_idx"),  # SNAPSHOT_TTL
        ]

    def __str__(self) -> str:
        return f"{self.kind} snapshot of session {self.session_id} at seq {self.upto_seq}"
