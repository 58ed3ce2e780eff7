"""IdempotencyRecord: the stored answer to a POST sent with an ``Idempotency-Key`` header."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from ttmemory.fields import EncryptedJSONField, EncryptedQuerySet


class IdempotencyRecord(models.Model):
    """One key per namespace and scope; a retry with the same key gets ``response`` again.

    ``fingerprint`` is a keyed hash of the request, so reusing a key for a different request is
    refused instead of answered with the wrong response. The response holds message content,
    so it is encrypted. Records older than ``API_IDEMPOTENCY_SECONDS`` are removed by
    ``idempotency_prune``.
    """

    namespace = models.CharField(max_length=255)
    scope = models.CharField(max_length=64, help_text="What was called, e.g. 'messages:<id>'.")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    response = EncryptedJSONField(default=dict, bind=("namespace", "scope", "key"))
    created_at = models.DateTimeField(default=timezone.now)

    objects = EncryptedQuerySet["IdempotencyRecord"].as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "scope", "key"], name="ttm_idempotency_uniq"
            ),
        ]
        indexes = [models.Index(fields=["created_at"], name="ttm_idempotency_time_idx")]

    def __str__(self) -> str:
        return f"{self.namespace} {self.scope} {self.key}"
