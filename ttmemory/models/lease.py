"""SessionLease: the lease row of DatabaseLeaseLock (one per currently locked session)."""

from __future__ import annotations

from django.db import models


class SessionLease(models.Model):
    """Who holds a session's lock and until when; an expired lease may be taken over."""

    session_id = models.BigIntegerField(unique=True)
    token = models.CharField(max_length=64)
    acquired_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        verbose_name = "session lease"

    def __str__(self) -> str:
        return f"lease on session {self.session_id} until {self.expires_at:%H:%M:%S}"
