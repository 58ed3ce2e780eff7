"""Retention: per-namespace lifetimes overriding the settings, and legal holds."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

LIFETIME_HELP = (
    "Empty: the TTMEMORY setting applies. 0 (00:00:00): keep forever in this namespace. "
    "Otherwise the lifetime, e.g. '90 00:00:00' for 90 days."
)


class RetentionPolicy(models.Model):
    """How long a namespace's data lives, where it differs from the ``TTMEMORY`` defaults.

    Each lifetime is a duration: NULL inherits the setting (``SESSION_TTL``, ...), zero keeps
    forever, anything else replaces the setting for this namespace. The audit trail is not
    overridable per namespace (``AUDIT_TTL`` only): a namespace's own caller must not be able
    to shorten the record of what was done to it.
    """

    namespace = models.CharField(max_length=255, unique=True)
    session_ttl = models.DurationField(null=True, blank=True, help_text=LIFETIME_HELP)
    session_expiry = models.CharField(
        max_length=16,
        blank=True,
        default="",
        choices=[("delete", "delete"), ("archive", "archive")],
        help_text="Empty: TTMEMORY['SESSION_EXPIRY'] applies.",
    )
    archived_message_ttl = models.DurationField(null=True, blank=True, help_text=LIFETIME_HELP)
    snapshot_ttl = models.DurationField(null=True, blank=True, help_text=LIFETIME_HELP)
    ledger_ttl = models.DurationField(null=True, blank=True, help_text=LIFETIME_HELP)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "retention policy"
        verbose_name_plural = "retention policies"

    def __str__(self) -> str:
        return f"retention of {self.namespace}"


class LegalHold(models.Model):
    """A legal hold on a whole namespace (``session`` empty) or on one of its sessions.

    While the row exists nothing in its scope is deleted: no expiry, no pruning, no erase, no
    session delete or clear, no fact forget; those refuse with ``LegalHoldError``. Lifting the
    hold deletes the row (both recorded in the audit log).
    """

    namespace = models.CharField(max_length=255)
    session = models.ForeignKey(
        "ttmemory.MemorySession",
        null=True,
        blank=True,
        on_delete=models.PROTECT,  # a held session cannot be deleted, even by the ORM
        related_name="+",
    )
    reason = models.CharField(max_length=500)
    placed_by = models.CharField(max_length=150, help_text="Username or API key name.")
    placed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "legal hold"
        constraints = [
            models.UniqueConstraint(
                fields=["namespace"],
                condition=models.Q(session__isnull=True),
                name="ttm_hold_namespace_uniq",
            ),
            models.UniqueConstraint(
                fields=["session"],
                condition=models.Q(session__isnull=False),
                name="ttm_hold_session_uniq",
            ),
        ]
        indexes = [models.Index(fields=["namespace"], name="ttm_hold_ns_idx")]

    def __str__(self) -> str:
        scope = f"session {self.session_id}" if self.session_id else "namespace"
        return f"legal hold on {scope} of {self.namespace}"
