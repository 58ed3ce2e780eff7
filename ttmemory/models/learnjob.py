"""LearnJob: a fact-extraction request made through the API, with its status."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone


class LearnJobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class LearnJob(models.Model):
    """Learning from one session up to ``upto_seq``; ``changes`` counts the actions taken.

    Holds counts and ids only, never content. The API answers 202 with ``id`` and callers poll.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.CharField(max_length=255)
    session = models.ForeignKey(
        "ttmemory.MemorySession", null=True, blank=True, on_delete=models.SET_NULL
    )
    upto_seq = models.PositiveBigIntegerField(default=0)
    status = models.CharField(
        max_length=16, choices=LearnJobStatus.choices, default=LearnJobStatus.QUEUED
    )
    changes = models.JSONField(default=dict, blank=True, help_text="Action -> count.")
    fact_ids = models.JSONField(default=list, blank=True)
    error = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["namespace", "created_at"], name="ttm_learnjob_ns_idx")]

    def __str__(self) -> str:
        return f"learn {self.namespace} {self.status}"
