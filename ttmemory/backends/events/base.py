"""The event observer contract: receives content-free events after the write committed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened to a namespace: counts, ids and timings, never content."""

    type: str
    namespace: str
    id: str
    occurred_at: str
    session_id: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    ids: dict[str, Any] = field(default_factory=dict)
    duration_ms: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "namespace": self.namespace,
            "occurred_at": self.occurred_at,
            "session_id": self.session_id,
            "counts": dict(self.counts),
            "ids": dict(self.ids),
            "duration_ms": self.duration_ms,
        }


class EventObserver(ABC):
    """Publishes events somewhere. ``publish`` must return quickly (queue slow work) and may
    raise: the dispatcher counts and logs the failure, and the write is never affected."""

    @abstractmethod
    def publish(self, event: Event) -> None:
        """Deliver (or queue) one event."""

    def active(self) -> bool:
        """False when publishing would reach nobody (lets emit skip building the event)."""
        return True

    def close(self) -> None:  # noqa: B027 - optional hook
        """Stop threads and release connections; called when settings change."""
