"""The cost ledger: every LLM call and billable embedding call, counts and timings only."""

from __future__ import annotations

import datetime as dt

from django.db.models import Sum
from django.utils import timezone

from ttmemory.conf import app_settings, rate_parts
from ttmemory.exceptions import RateLimitedError
from ttmemory.models import LedgerEntry, LedgerStatus


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


# Ledger purposes that count against LLM_RATE_LIMIT (embedding calls do not).
LLM_PURPOSES = ("extract", "summarise")


def llm_rate_check(*, namespace: str, now: dt.datetime | None = None) -> None:
    """Raise RateLimitedError when ``namespace`` started ``LLM_RATE_LIMIT`` LLM calls already
    in the trailing window; its ``retry_after`` is when the oldest of them leaves the window.

    A sliding window over the ledger (calls made, ok or failed; skips do not count): no table
    or Redis of its own, the same on every database. Workers checking at the same instant may
    each start one call more than the limit, so the overshoot is at most the number of
    concurrent workers of the namespace.
    """
    rate = app_settings.LLM_RATE_LIMIT
    if rate is None:
        return
    limit, window = rate_parts(rate)
    now = now or timezone.now()
    since = now - dt.timedelta(seconds=window)
    recent = list(
        LedgerEntry.objects.filter(
            namespace=namespace,
            purpose__in=LLM_PURPOSES,
            status__in=(LedgerStatus.OK, LedgerStatus.ERROR),
            created_at__gt=since,
        )
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(recent) < limit:
        return
    retry_after = (recent[-1] - since).total_seconds()
    raise RateLimitedError(namespace, max(0.05, retry_after))
