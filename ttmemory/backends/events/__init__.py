"""Event observers: Django signals, a webhook, Redis Streams, and a list for tests."""

from ttmemory.backends.events.base import Event, EventObserver
from ttmemory.backends.events.local import ListObserver, SignalObserver, memory_event
from ttmemory.backends.events.redis_streams import RedisStreamObserver
from ttmemory.backends.events.webhook import WebhookObserver, verify_signature

__all__ = [
    "Event",
    "EventObserver",
    "ListObserver",
    "RedisStreamObserver",
    "SignalObserver",
    "WebhookObserver",
    "memory_event",
    "verify_signature",
]
