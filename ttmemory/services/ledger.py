"""The cost ledger: every LLM call and billable embedding call, counts and timings only."""

from __future__ import annotations

import datetime as dt

from django.db.models import Sum
from django.utils import timezone

from ttmemory import telemetry
from ttmemory.conf import app_settings
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
    """Record one call (or a skipped one). No content is ever passed here.

    Its tokens and price also go to the ``ttmemory.tokens`` and ``ttmemory.cost`` metrics.
    """
    telemetry.usage(
        namespace=namespace,
        purpose=purpose,
        model=model,
        prompt_tokens=max(0, int(prompt_tokens)),
        completion_tokens=max(0, int(completion_tokens)),
    )
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
