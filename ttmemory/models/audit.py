"""AuditEntry: one action of a staff member or API client, with who, when, where and why."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditAction(models.TextChoices):
    ROLLBACK = "rollback", "Roll back a session"
    UNDO = "undo", "Undo a rollback"
    REWIND = "rewind", "Rewind a session to a message"
    FORK = "fork", "Fork a session at a message"
    SNAPSHOT = "snapshot", "Take a snapshot"
    FACT_CORRECT = "fact_correct", "Correct a fact"
    FACT_FORGET = "fact_forget", "Forget a fact"
    EXPORT = "export", "Export a namespace"
    ERASE = "erase", "Erase a namespace"
    REVEAL = "reveal", "Reveal masked content"
    PRUNE = "prune", "Delete expired data"
    RETENTION = "retention", "Change a retention policy"
    HOLD = "hold", "Place a legal hold"
    HOLD_LIFT = "hold_lift", "Lift a legal hold"


class AuditEntry(models.Model):
    """Never content: ``details`` holds ids and counts. Entries outlive an erased namespace
    (the erase itself is recorded), and nothing edits or deletes them through the admin."""

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor = models.CharField(max_length=150, help_text="Username or API key name at the time.")
    action = models.CharField(max_length=32, choices=AuditAction.choices)
    namespace = models.CharField(max_length=255)
    object_type = models.CharField(max_length=32, blank=True, default="")
    object_id = models.CharField(max_length=64, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "audit entries"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["namespace", "created_at"], name="ttm_audit_ns_time_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor} {self.action} {self.namespace}"
