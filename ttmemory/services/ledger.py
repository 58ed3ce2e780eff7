"""The cost ledger: every LLM call and billable embedding call, counts and timings only."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ttmemory import telemetry
from ttmemory.conf import app_settings, rate_parts
from ttmemory.exceptions import RateLimitedError
from ttmemory.longterm.embedding import EmbeddingCall
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


def ledger_record_many(*, rows: Sequence[Mapping[str, Any]]) -> int:
    """Record several calls at once (embedding calls buffered by reads); returns the count."""
    entries = [
        LedgerEntry(
            namespace=str(row["namespace"]),
            purpose=str(row["purpose"]),
            model=str(row["model"])[:200],
            prompt_tokens=max(0, int(row.get("prompt_tokens", 0))),
            completion_tokens=max(0, int(row.get("completion_tokens", 0))),
            latency_ms=float(row.get("latency_ms", 0.0)),
            status=str(row.get("status", LedgerStatus.OK)),
            created_at=_when(row.get("created_at")),
        )
        for row in rows
    ]
    LedgerEntry.objects.bulk_create(entries)
    return len(entries)


def ledger_record_embedding(*, call: EmbeddingCall | None) -> None:
    """Record one embedding call made by a write (nothing when the embedder is not billable)."""
    if call is not None:
        ledger_record_many(rows=[call.as_row()])


def _when(value: Any) -> dt.datetime:
    parsed = parse_datetime(value) if isinstance(value, str) else None
    return parsed or timezone.now()


def tokens_spent_today(*, namespace: str, now: dt.datetime | None = None) -> int:
    """Prompt + completion tokens ``namespace`` spent since 00:00 UTC (LLM and embeddings)."""
    return LedgerEntry.objects.tokens_today(namespace, now)


def budget_left(*, namespace: str) -> int | None:
    """Tokens ``namespace`` may still spend today, or None when there is no budget.

    The budget covers LLM calls and billable embedding calls alike (``DAILY_TOKEN_BUDGET``).
    """
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
