"""Calling the embedder safely: a circuit breaker, counters, and errors turned into fallbacks."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory import telemetry
from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings

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


def embed_texts(texts: Sequence[str]) -> tuple[list[list[float]] | None, str]:
    """Vectors for ``texts`` and "" , or ``(None, reason)`` when the embedder cannot be used.

    A failure (exception, timeout, wrong dimension) opens the breaker for
    ``EMBEDDER_BREAKER_SECONDS``: calls in that window return at once without trying.
    """
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
        with telemetry.embedding_call(
            backend=type(embedder).__name__,
            model=str(getattr(embedder, "model", "") or type(embedder).__name__),
            inputs=len(texts),
        ):
            vectors = embedder.embed(list(texts))
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
