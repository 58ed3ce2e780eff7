"""Events appended to a Redis Stream with ``XADD``, behind a circuit breaker."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ttmemory.backends.events.base import Event, EventObserver
from ttmemory.backends.options import check_redis_url, check_seconds, redacted_url
from ttmemory.backends.redis_client import close_quietly, fail_fast_client

logger = logging.getLogger(__name__)


def stream_fields(event: Event) -> dict[str, str]:
    """The flat string fields of one stream entry (nested values as compact JSON)."""

    def optional(value: Any) -> str:
        return "" if value is None else str(value)

    return {
        "id": event.id,
        "type": event.type,
        "namespace": event.namespace,
        "occurred_at": event.occurred_at,
        "session_id": optional(event.session_id),
        "duration_ms": optional(event.duration_ms),
        "counts": json.dumps(event.counts, separators=(",", ":"), sort_keys=True),
        "ids": json.dumps(event.ids, separators=(",", ":"), sort_keys=True),
    }


class RedisStreamObserver(EventObserver):
    """``XADD <stream> MAXLEN ~ <maxlen> * id … type … namespace … counts … ids …``.

    Options: ``url`` (redis://, rediss:// or unix://), ``stream`` ("ttmemory:events"),
    ``maxlen`` (100000, approximate trimming; 0 keeps everything), ``socket_timeout`` (0.2 s,
    also the connect timeout) and ``breaker_seconds`` (30).

    ``publish`` runs after the write committed, in the writer's thread, so it never waits
    longer than one socket timeout: a Redis error is counted in ``failed`` (not raised), logged
    once per outage, and opens a breaker; for ``breaker_seconds`` later events are skipped
    (``skipped``) without touching the network. Then one publish probes Redis again, and an
    info line says when it answers. ``sent`` counts entries added. Consumers read the stream
    with ``XREAD``/``XREADGROUP``; entries hold counts, ids and timings, never content.
    """

    def __init__(
        self,
        *,
        url: str,
        stream: str = "ttmemory:events",
        maxlen: int = 100_000,
        socket_timeout: float = 0.2,
        breaker_seconds: float = 30.0,
    ) -> None:
        try:
            import redis  # noqa: F401 - fail here, with a clear message, not after a write
        except ImportError as exc:
            raise ImproperlyConfigured(
                "RedisStreamObserver needs the redis package: pip install 'ttmemory[redis]'"
            ) from exc
        self.url = check_redis_url(url)
        if not isinstance(stream, str) or not stream:
            raise TypeError(f"stream must be a non-empty key name, not {stream!r}")
        self.stream = stream
        if isinstance(maxlen, bool) or not isinstance(maxlen, int) or maxlen < 0:
            raise TypeError(f"maxlen must be an integer >= 0 (0: no trimming), not {maxlen!r}")
        self.maxlen = maxlen
        self.socket_timeout = check_seconds("socket_timeout", socket_timeout)
        self.breaker_seconds = check_seconds("breaker_seconds", breaker_seconds, zero=True)

        self.sent = 0
        self.failed = 0
        self.skipped = 0
        self._client: Any = None
        self._state = threading.Lock()  # guards the breaker and the counters
        self._connecting = threading.Lock()  # one thread creates the client
        self._outage = False  # a warning was logged and "Redis is back" not yet
        self._retry_at = 0.0  # monotonic time before which Redis is not tried
        self._probing = False  # one publish is trying Redis again after the breaker period

    def __repr__(self) -> str:
        return f"<RedisStreamObserver {redacted_url(self.url)} {self.stream}>"

    def publish(self, event: Event) -> None:
        """Add ``event`` to the stream, or skip it while the breaker is open; never raises
        for Redis errors."""
        from redis.exceptions import RedisError  # optional dependency

        probe = self._route()
        if probe is None:
            return
        try:
            self._get_client().xadd(
                self.stream,
                stream_fields(event),
                maxlen=self.maxlen or None,
                approximate=True,
            )
        except (RedisError, OSError) as exc:
            self._unreachable(exc)
            return
        except BaseException:
            if probe:
                with self._state:
                    self._probing = False
            raise
        self._answered()

    def close(self) -> None:
        with self._connecting:
            client, self._client = self._client, None
        close_quietly(client)

    # -- Redis -------------------------------------------------------------------------------

    def _get_client(self) -> Any:
        if self._client is not None:
            return self._client
        with self._connecting:
            if self._client is None:
                self._client = fail_fast_client(self.url, socket_timeout=self.socket_timeout)
            return self._client

    # -- circuit breaker ---------------------------------------------------------------------

    def _route(self) -> bool | None:
        """None: skip (breaker open). False: use Redis. True: use Redis as the probe."""
        with self._state:
            if not self._outage:
                return False
            if self._probing or time.monotonic() < self._retry_at:
                self.skipped += 1
                return None
            self._probing = True
            return True

    def _answered(self) -> None:
        with self._state:
            self.sent += 1
            back = self._outage
            self._outage = False
            self._probing = False
        if back:
            logger.info(
                "Redis is back at %s; ttmemory events go to stream %s again",
                redacted_url(self.url),
                self.stream,
            )

    def _unreachable(self, exc: BaseException) -> None:
        with self._state:
            self.failed += 1
            first = not self._outage
            self._outage = True
            self._probing = False
            self._retry_at = time.monotonic() + self.breaker_seconds
        if first:
            logger.warning(
                "Redis failed at %s (%s: %s); ttmemory events for stream %s are skipped "
                "for %gs at a time until it answers again",
                redacted_url(self.url),
                type(exc).__name__,
                exc,
                self.stream,
                self.breaker_seconds,
            )
