"""LedgerEntry: one LLM or embedding call (or a skipped one): who, what for, which model, cost."""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import Sum
from django.utils import timezone


class LedgerStatus(models.TextChoices):
    OK = "ok"
    ERROR = "error"
    SKIPPED = "skipped"  # not called: the namespace's daily token budget was spent


class LedgerQuerySet(models.QuerySet["LedgerEntry"]):
    def tokens_today(self, namespace: str, now: dt.datetime | None = None) -> int:
        """Prompt + completion tokens ``namespace`` spent since 00:00 UTC (LLM and embeddings)."""
        now = now or timezone.now()
        start = now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        totals = self.filter(namespace=namespace, created_at__gte=start).aggregate(
            p=Sum("prompt_tokens"), c=Sum("completion_tokens")
        )
        return int(totals["p"] or 0) + int(totals["c"] or 0)


class LedgerEntry(models.Model):
    """Counts and timings only, never content."""

    namespace = models.CharField(max_length=255)
    purpose = models.CharField(max_length=32)  # embed, embed_query, extract, summarise
    model = models.CharField(max_length=200)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.FloatField(default=0.0)
    status = models.CharField(max_length=16, choices=LedgerStatus.choices, default=LedgerStatus.OK)
    created_at = models.DateTimeField(default=timezone.now)

    objects = LedgerQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "ledger entries"
        indexes = [
            models.Index(fields=["namespace", "created_at"], name="ttm_ledger_ns_time_idx"),
            models.Index(fields=["created_at"], name="ttm_ledger_time_idx"),  # LEDGER_TTL
        ]

    def __str__(self) -> str:
        return f"{self.purpose} {self.model} {self.status}"

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RateBucket(models.Model):
    """A token bucket of one namespace's LLM calls (``LLM_RATE_LIMIT``): a number, no content.

    ``tokens`` is what was left at ``updated_at``; it refills at the limit's rate up to its
    count. A call takes one token under a row lock, so workers on many machines share it.
    """

    namespace = models.CharField(max_length=255)
    tokens = models.FloatField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["namespace"], name="ttm_ratebucket_ns_uniq")]

    def __str__(self) -> str:
        return f"{self.namespace}: {self.tokens:.1f}"
