"""Emitting events: after commit, to every configured observer, never failing a write."""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from django.core.signals import setting_changed
from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from ttmemory import telemetry
from ttmemory.backends import load_backend
from ttmemory.backends.events.base import Event, EventObserver
from ttmemory.conf import app_settings

logger = logging.getLogger(__name__)


@dataclass
class EventStats:
    """Process-wide counters: events dispatched, and observer failures."""

    emitted: int = 0
    failures: int = 0


stats = EventStats()
_observers: list[EventObserver] | None = None
_guard = threading.Lock()


def get_observers() -> list[EventObserver]:
    global _observers
    if _observers is None:
        with _guard:
            if _observers is None:
                _observers = [
                    load_backend("EVENT_OBSERVERS", config, base=EventObserver)
                    for config in app_settings.EVENT_OBSERVERS
                ]
    return _observers


def reset_observers() -> None:
    global _observers
    with _guard:
        for observer in _observers or []:
            observer.close()
        _observers = None


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        reset_observers()


def emit(
    event_type: str,
    *,
    namespace: str,
    session_id: int | None = None,
    counts: dict[str, int] | None = None,
    ids: dict[str, Any] | None = None,
    duration_ms: float | None = None,
) -> Event | None:
    """Build an event and dispatch it when the current transaction commits (now if none).

    Only counts, ids and timings belong here: never message, fact or summary text. Returns
    None, building nothing, when no observer would receive it (e.g. only the signal observer
    and no receiver connected).
    """
    try:
        if not any(observer.active() for observer in get_observers()):
            return None
    except Exception:  # observers that cannot load are reported by dispatch
        pass
    event = Event(
        type=event_type,
        namespace=namespace,
        id=uuid.uuid4().hex,
        occurred_at=timezone.now().isoformat(),
        session_id=session_id,
        counts=dict(counts or {}),
        ids=dict(ids or {}),
        duration_ms=round(duration_ms, 3) if duration_ms is not None else None,
    )
    transaction.on_commit(lambda: dispatch(event))
    return event


def dispatch(event: Event) -> None:
    """Hand ``event`` to every observer; a failing observer is counted and logged, not raised."""
    stats.emitted += 1
    try:
        observers = get_observers()
    except Exception:
        stats.failures += 1
        logger.exception("ttmemory event observers cannot be loaded")
        return
    for observer in observers:
        try:
            observer.publish(event)
        except Exception:
            stats.failures += 1
            telemetry.count(
                "ttmemory.events.failures", **{"ttmemory.observer": type(observer).__name__}
            )
            logger.warning(
                "ttmemory event observer %s failed on %s", type(observer).__name__, event.type,
                exc_info=True,
            )  # fmt: skip
