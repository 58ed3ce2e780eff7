"""The cost ledger: every LLM call and billable embedding call, counts and timings only."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from ttmemory.conf import app_settings, rate_parts
from ttmemory.exceptions import RateLimitedError
from ttmemory.models import LedgerEntry, LedgerStatus, RateBucket


def ledger_record(
    *,
    namespace: str,
    purpose: str,
    model: str,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    latency_ms: float = 0.0,
    status: str = LedgerStatus.OK,
) -> LedgerEntry:
    """Record one call (or a skipped one). No content is ever passed here."""
    return LedgerEntry.objects.create(
        namespace=namespace,
        purpose=purpose,
        model=model[:200],
        prompt_tokens=max(0, int(prompt_tokens)),
        completion_tokens=max(0, int(completion_tokens)),
        latency_ms=float(latency_ms),
        status=status,
    )


def tokens_spent_today(*, namespace: str, now: dt.datetime | None = None) -> int:
    """Prompt + completion tokens ``namespace`` spent since 00:00 UTC."""
    now = now or timezone.now()
    start = now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    totals = LedgerEntry.objects.filter(namespace=namespace, created_at__gte=start).aggregate(
        p=Sum("prompt_tokens"), c=Sum("completion_tokens")
    )
    return int(totals["p"] or 0) + int(totals["c"] or 0)


def budget_left(*, namespace: str) -> int | None:
    """Tokens ``namespace`` may still spend today, or None when there is no budget."""
    budget = app_settings.DAILY_TOKEN_BUDGET
    if budget <= 0:
        return None
    return max(0, budget - tokens_spent_today(namespace=namespace))


def llm_rate_take(*, namespace: str, now: dt.datetime | None = None) -> None:
    """Take one token from ``namespace``'s LLM bucket, or raise RateLimitedError saying when
    the next token is there (``LLM_RATE_LIMIT``; None: no limit, nothing is stored).

    A token bucket in the database: holding ``count`` tokens, refilled at ``count`` per
    window, so a burst up to the count passes and the long-run rate is the limit. The row is
    locked while a token is taken, so concurrent workers never overshoot; the same on every
    database, no Redis needed.
    """
    rate = app_settings.LLM_RATE_LIMIT
    if rate is None:
        return
    capacity, window = rate_parts(rate)
    per_second = capacity / window
    now = now or timezone.now()
    with transaction.atomic():
        bucket, _ = RateBucket.objects.select_for_update().get_or_create(
            namespace=namespace, defaults={"tokens": float(capacity), "updated_at": now}
        )
        elapsed = max(0.0, (now - bucket.updated_at).total_seconds())
        tokens = min(float(capacity), bucket.tokens + elapsed * per_second)
        taken = tokens >= 1.0
        RateBucket.objects.filter(pk=bucket.pk).update(
            tokens=tokens - 1.0 if taken else tokens, updated_at=max(now, bucket.updated_at)
        )
    if not taken:
        raise RateLimitedError(namespace, max(0.05, (1.0 - tokens) / per_second))
