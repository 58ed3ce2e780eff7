"""In-process observers: Django signals, and a list that tests read."""

from __future__ import annotations

import threading

from django.dispatch import Signal

from ttmemory.backends.events.base import Event, EventObserver

#: Sent after commit for every ttmemory event: ``sender`` is the event type, ``event`` the Event.
memory_event = Signal()


class SignalObserver(EventObserver):
    """Sends ``ttmemory.backends.events.memory_event`` (connect receivers in ``ready()``)."""

    def publish(self, event: Event) -> None:
        memory_event.send_robust(sender=event.type, event=event)

    def active(self) -> bool:
        return memory_event.has_listeners()


class ListObserver(EventObserver):
    """Keeps the events it receives in ``events`` (class-wide, for tests)."""

    events: list[Event] = []
    _lock = threading.Lock()

    def publish(self, event: Event) -> None:
        with self._lock:
            ListObserver.events.append(event)
