"""The cost ledger: every LLM call and billable embedding call, counts and timings only."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ttmemory import telemetry
from ttmemory.conf import app_settings
from ttmemory.longterm.embedding import EmbeddingCall
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
