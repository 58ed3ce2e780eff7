"""CiphertextUpgrade: a pending re-encryption of stored values into the current format."""

from __future__ import annotations

import time

from django.core.signals import setting_changed
from django.db import models
from django.dispatch import receiver
from django.utils import timezone

# The upgrade that binds every ciphertext to its row (format 2).
ROW_BINDING = "row-binding"
# How long a process trusts "the upgrade is still pending" before asking the database again.
PENDING_RECHECK_SECONDS = 30.0


class CiphertextUpgrade(models.Model):
    """One re-encryption of old-format values, while it is pending and once it has finished.

    The migration that introduced row binding creates the ``row-binding`` row when the database
    already held encrypted values. ``ttmemory_rebind`` records its progress in ``progress``
    (the last primary key done, per table) and sets ``finished_at`` when no old-format value
    remains. Until then old-format values are still read and a system check warns; afterwards
    they are refused. No row at all (a database created after the change) means finished.
    """

    name = models.CharField(max_length=64, unique=True)
    progress = models.JSONField(default=dict, blank=True, help_text="Last primary key per table.")
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "ciphertext upgrade"

    def __str__(self) -> str:
        return f"{self.name} ({'finished' if self.finished_at else 'pending'})"


_pending_seen_at: float | None = None  # monotonic time of the last "still pending" answer
_finished = False


def row_binding_pending() -> bool:
    """True while values written before row binding may remain (one indexed query)."""
    return CiphertextUpgrade.objects.filter(name=ROW_BINDING, finished_at__isnull=True).exists()


def legacy_format_accepted() -> bool:
    """Whether a value in the format before row binding may be read now.

    Asked only when such a value is met. "Finished" is final for the process; "pending" is
    asked again after ``PENDING_RECHECK_SECONDS``, so other processes stop accepting old
    values shortly after ``ttmemory_rebind`` finishes.
    """
    global _pending_seen_at, _finished
    if _finished:
        return False
    now = time.monotonic()
    if _pending_seen_at is not None and now - _pending_seen_at < PENDING_RECHECK_SECONDS:
        return True
    if row_binding_pending():
        _pending_seen_at = now
        return True
    _finished = True
    return False


def reset_legacy_format_cache() -> None:
    """Forget what ``legacy_format_accepted`` learned (after a rebind, and in tests)."""
    global _pending_seen_at, _finished
    _pending_seen_at = None
    _finished = False


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: object) -> None:
    if setting in ("TTMEMORY", "DATABASES"):
        reset_legacy_format_cache()
