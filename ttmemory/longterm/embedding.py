"""Calling the embedder safely: a circuit breaker, counters, errors turned into fallbacks, and
the daily token budget; billable calls come back as ``EmbeddingCall`` rows for the cost ledger
(written by the caller: a service directly, a read through ``ttmemory.jobs.ledger_calls``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils import timezone

from ttmemory import telemetry
from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings
from ttmemory.models import LedgerEntry, LedgerStatus

logger = logging.getLogger(__name__)


@dataclass
class EmbedderHealth:
    """Process-wide counters of embedder calls, failures and calls skipped by the breaker."""

    calls: int = 0
    failures: int = 0
    skipped: int = 0
    open_until: float = 0.0
    last_error: str = ""


health = EmbedderHealth()
_lock = threading.Lock()


@dataclass(frozen=True)
class EmbeddingCall:
    """One billable embedding call, as a cost ledger row: counts and timings, never text."""

    namespace: str
    purpose: str
    model: str
    tokens: int
    latency_ms: float
    status: str
    created_at: str  # ISO 8601: the call's time, also when the row is written later

    def as_row(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "purpose": self.purpose,
            "model": self.model,
            "prompt_tokens": self.tokens,
            "latency_ms": self.latency_ms,
            "status": self.status,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class Embedded:
    """Vectors (or None and the reason), and the ledger row of the call (None: not billable)."""

    vectors: list[list[float]] | None
    reason: str
    call: EmbeddingCall | None


def embed_for(texts: Sequence[str], *, namespace: str, purpose: str) -> Embedded:
    """``embed_texts`` on behalf of ``namespace``: a billable embedder is not called once the
    namespace's ``DAILY_TOKEN_BUDGET`` is spent (the caller falls back as for a failure), and
    every billable call, skipped or not, comes back as ``call`` for the ledger."""
    embedder = get_embedder()
    if not embedder.billable:
        vectors, reason = embed_texts(texts)
        return Embedded(vectors, reason, None)
    budget = app_settings.DAILY_TOKEN_BUDGET
    if budget > 0 and LedgerEntry.objects.tokens_today(namespace) >= budget:
        call = _call_row(namespace, purpose, embedder.model, 0, 0.0, LedgerStatus.SKIPPED)
        return Embedded(None, f"daily token budget of {namespace} is spent", call)
    started = time.monotonic()
    tokens: list[int] = []
    vectors, reason = _embed(texts, tokens)
    if not tokens:
        return Embedded(None, reason, None)  # the breaker is open: nothing was called
    latency_ms = (time.monotonic() - started) * 1000.0
    status = LedgerStatus.OK if vectors is not None else LedgerStatus.ERROR
    call = _call_row(namespace, purpose, embedder.model, sum(tokens), latency_ms, status)
    return Embedded(vectors, reason, call)


def embed_texts(texts: Sequence[str]) -> tuple[list[list[float]] | None, str]:
    """Vectors for ``texts`` and "" , or ``(None, reason)`` when the embedder cannot be used.

    A failure (exception, timeout, wrong dimension) opens the breaker for
    ``EMBEDDER_BREAKER_SECONDS``: calls in that window return at once without trying. Nothing
    is recorded in the ledger: ``embed_for`` does that, for a namespace.
    """
    return _embed(texts, [])


def _embed(texts: Sequence[str], tokens: list[int]) -> tuple[list[list[float]] | None, str]:
    now = time.monotonic()
    with _lock:
        if now < health.open_until:
            health.skipped += 1
            skipped = True
        else:
            skipped = False
    if skipped:
        telemetry.count("ttmemory.embedder.skipped", **_backend_label())
        return None, f"embedder skipped after a failure: {health.last_error}"
    embedder = get_embedder()
    label = {"ttmemory.embedder.backend": type(embedder).__name__}
    try:
        health.calls += 1
        tokens.append(0)  # called: a failed call is recorded too
        with telemetry.embedding_call(
            backend=type(embedder).__name__,
            model=str(getattr(embedder, "model", "") or type(embedder).__name__),
            inputs=len(texts),
        ) as span:
            vectors, used = embedder.embed_with_usage(list(texts))
            tokens[-1] = used
            if used:
                span.set_attribute("gen_ai.usage.input_tokens", used)
            if len(vectors) != len(texts) or any(len(v) != embedder.dimensions for v in vectors):
                raise ValueError(
                    f"embedder returned {len(vectors)} vectors for {len(texts)} texts or a "
                    f"wrong dimension (expected {embedder.dimensions})"
                )
        _breaker(opened=False, label=label)
        return vectors, ""
    except Exception as exc:  # any embedder failure becomes a keyword-only fallback
        with _lock:
            first = health.open_until <= now
            health.failures += 1
            health.last_error = f"{type(exc).__name__}: {exc}"
            health.open_until = time.monotonic() + app_settings.EMBEDDER_BREAKER_SECONDS
        telemetry.count("ttmemory.embedder.errors", **label)
        _breaker(opened=True, label=label)
        if first:
            logger.warning("ttmemory embedder failed (%s); recall uses keywords", health.last_error)
        return None, f"embedder failed: {health.last_error}"


_breaker_open = False


def _breaker(*, opened: bool, label: dict[str, str]) -> None:
    """Move the ``ttmemory.embedder.breaker.open`` gauge when the breaker opens or closes."""
    global _breaker_open
    with _lock:
        changed, _breaker_open = _breaker_open != opened, opened
    if changed:
        telemetry.count("ttmemory.embedder.breaker.open", 1 if opened else -1, **label)


def _backend_label() -> dict[str, str]:
    try:
        return {"ttmemory.embedder.backend": type(get_embedder()).__name__}
    except Exception:
        return {"ttmemory.embedder.backend": ""}


def _call_row(
    namespace: str, purpose: str, model: str, tokens: int, latency_ms: float, status: str
) -> EmbeddingCall:
    return EmbeddingCall(
        namespace=namespace,
        purpose=purpose,
        model=model,
        tokens=max(0, int(tokens)),
        latency_ms=round(latency_ms, 3),
        status=status,
        created_at=timezone.now().isoformat(),
    )


def reset_health() -> None:
    with _lock:
        health.calls = health.failures = health.skipped = 0
        health.open_until = 0.0
        health.last_error = ""


@receiver(setting_changed)
def _close_breaker_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    # A new embedder (or breaker period) is tried at once, not after the old one's failure.
    if setting == "TTMEMORY":
        with _lock:
            health.open_until = 0.0
