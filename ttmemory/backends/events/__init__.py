"""Event observers: Django signals, a webhook, Redis Streams, and a list for tests."""

from ttmemory.backends.events.base import Event, EventObserver
from ttmemory.backends.events.local import ListObserver, SignalObserver, memory_event

__all__ = ["Event", "EventObserver", "ListObserver", "SignalObserver", "memory_event"]
