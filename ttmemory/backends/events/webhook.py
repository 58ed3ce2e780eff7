"""A signed webhook: events queued in memory and POSTed by one daemon thread (standard library)."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import random
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections import deque
from collections.abc import Iterable
from http.client import HTTPException
from typing import Any

from ttmemory import telemetry
from ttmemory.backends.events.base import Event, EventObserver
from ttmemory.backends.options import check_http_url, check_int, check_seconds, redacted_url

logger = logging.getLogger(__name__)

SIGNATURE_VERSION = "v1"
# Longest delay between two attempts of one event, whatever ``retry_backoff`` is (seconds).
BACKOFF_CAP = 30.0
# A receiver's answer is read (and dropped) up to this many bytes, so the connection is reused
# cleanly without a hostile receiver filling memory.
MAX_RESPONSE_BYTES = 64 * 1024


def sign(secret: str | bytes, timestamp: int | str, body: str | bytes) -> str:
    """``v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>``: the ``X-TTMemory-Signature``."""
    key = secret.encode() if isinstance(secret, str) else secret
    payload = body.encode() if isinstance(body, str) else body
    digest = hmac.new(key, f"{timestamp}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"{SIGNATURE_VERSION}={digest}"


def verify_signature(
    secret: str | bytes,
    timestamp: int | str,
    body: str | bytes,
    signature: str,
    *,
    tolerance: float = 300,
    now: float | None = None,
) -> bool:
    """Check a webhook request, for receivers: True only if the signature matches and is fresh.

    ``timestamp`` and ``signature`` are the ``X-TTMemory-Timestamp`` and
    ``X-TTMemory-Signature`` headers, ``body`` the raw request body (verify before parsing it).
    A timestamp more than ``tolerance`` seconds away from ``now`` (default: the current time) is
    rejected, so a captured request cannot be replayed later; de-duplicate within the window
    with ``X-TTMemory-Event-Id``. ``signature`` may list several comma-separated ``v1=``
    values (during a secret rotation); the comparison is constant-time.
    """
    try:
        sent_at = int(str(timestamp).strip())
    except ValueError:
        return False
    current = time.time() if now is None else now
    if abs(current - sent_at) > tolerance:
        return False
    expected = sign(secret, sent_at, body).encode()
    matched = False
    for candidate in str(signature).split(","):
        # No early exit: every candidate is compared, in constant time each.
        matched |= hmac.compare_digest(expected, candidate.strip().encode())
    return matched


def _counted(outcome: str, n: int = 1) -> None:
    """Feed the observer's counters to metrics (``ttmemory.webhook.deliveries``, drops)."""
    telemetry.count("ttmemory.webhook.deliveries", n, **{"ttmemory.outcome": outcome})
    if outcome == "dropped":
        telemetry.count("ttmemory.events.dropped", n, **{"ttmemory.observer": "WebhookObserver"})


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is a final answer: following it would re-send the event as a bodiless GET."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_observers: weakref.WeakSet[WebhookObserver] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for observer in list(_observers):
        observer._forget_parent_state()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class WebhookObserver(EventObserver):
    """POSTs every event as compact JSON to ``url``, signed with HMAC-SHA256.

    Options: ``url`` (http:// or https://), ``secret`` or ``secret_env`` (the name of an
    environment variable holding it; one is required), ``timeout`` per request (2 s),
    ``queue_size`` (1000), ``max_retries`` (3), ``retry_backoff`` (the first delay, 0.5 s,
    doubled per attempt, jittered), ``event_types`` (an allow-list; default every type) and
    ``drain_timeout`` (how long ``close()`` keeps delivering queued events, 5 s).

    ``publish`` only appends to a bounded in-memory queue and never waits: when the queue is
    full the event is dropped and counted. One daemon thread (started on first use, and again
    in a forked child) sends the queue in order. A 5xx answer, a timeout or a connection error
    is retried up to ``max_retries`` times; any other non-2xx answer (4xx, redirects) is final.

    Each request carries ``X-TTMemory-Event``, ``X-TTMemory-Event-Id``,
    ``X-TTMemory-Timestamp`` (unix seconds) and ``X-TTMemory-Signature``:
    ``v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>``; receivers check it with
    ``verify_signature``. Counters: ``sent``, ``failed`` (gave up), ``dropped`` (queue full,
    or still queued when ``close()`` gave up), ``retried`` (extra attempts) and ``pending``
    (queued or in flight); ``sent + failed + dropped + pending`` is every event accepted by
    ``event_types``. Events are lost if the process exits; this is a notification channel,
    not a durable log.
    """

    def __init__(
        self,
        *,
        url: str,
        secret: str | None = None,
        secret_env: str | None = None,
        timeout: float = 2.0,
        queue_size: int = 1000,
        max_retries: int = 3,
        retry_backoff: float = 0.5,
        event_types: Iterable[str] | None = None,
        drain_timeout: float = 5.0,
    ) -> None:
        self.url = check_http_url(url)
        self._secret = _resolve_secret(secret, secret_env)
        self.timeout = check_seconds("timeout", timeout)
        self.queue_size = check_int("queue_size", queue_size, minimum=1)
        self.max_retries = check_int("max_retries", max_retries, minimum=0)
        self.retry_backoff = check_seconds("retry_backoff", retry_backoff, zero=True)
        self.event_types = _check_event_types(event_types)
        self.drain_timeout = check_seconds("drain_timeout", drain_timeout, zero=True)

        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self.retried = 0
        self._pending = 0
        self._queue: deque[Event] = deque()
        self._cond = threading.Condition()  # guards the queue, the counters and the thread
        self._thread: threading.Thread | None = None
        self._generation = 0  # bumped by close(): a thread that outlived its join exits
        self._closing = False
        self._drain_deadline = 0.0
        self._full = False  # a "queue full" warning was logged and the queue has not emptied
        self._opener = urllib.request.build_opener(_NoRedirect())
        _observers.add(self)

    def __repr__(self) -> str:
        return f"<WebhookObserver {redacted_url(self.url)}>"

    # -- public ------------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Events queued or being delivered."""
        with self._cond:
            return self._pending

    def counts(self) -> dict[str, int]:
        """A consistent snapshot of every counter."""
        with self._cond:
            return {
                "sent": self.sent,
                "failed": self.failed,
                "dropped": self.dropped,
                "retried": self.retried,
                "pending": self._pending,
            }

    def publish(self, event: Event) -> None:
        """Queue ``event`` for delivery; drops (and counts) it when the queue is full."""
        if self.event_types is not None and event.type not in self.event_types:
            return
        with self._cond:
            if len(self._queue) >= self.queue_size:
                self.dropped += 1
                _counted("dropped")
                warn, self._full = not self._full, True
            else:
                warn = False
                self._queue.append(event)
                self._pending += 1
                self._start_worker()
                self._cond.notify_all()
        if warn:
            logger.warning(
                "ttmemory webhook queue for %s is full (%d events); dropping events until the "
                "receiver catches up",
                redacted_url(self.url),
                self.queue_size,
            )

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued event was sent or given up; False if ``timeout`` ran out."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout=timeout)

    def close(self) -> None:
        """Deliver what is queued for up to ``drain_timeout``, then stop the thread."""
        with self._cond:
            thread = self._thread
            self._closing = True
            self._drain_deadline = time.monotonic() + self.drain_timeout
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            # An attempt already running may take up to ``timeout`` past the deadline.
            thread.join(timeout=self.drain_timeout + self.timeout + 1.0)
        with self._cond:
            if self._queue:  # the thread is stuck in a request past its bound
                self._abandon_queue()
            self._generation += 1
            self._thread = None
            self._closing = False  # a later publish starts a new thread
            self._cond.notify_all()

    # -- worker ------------------------------------------------------------------------------

    def _start_worker(self) -> None:
        """Start the delivery thread unless it runs (called with ``_cond`` held)."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._run, args=(self._generation,), name="ttmemory-webhook", daemon=True
            )
            self._thread.start()

    def _run(self, generation: int) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    if generation != self._generation:
                        return
                    self._cond.wait()
                if generation != self._generation:
                    return
                if self._closing and self._queue and time.monotonic() >= self._drain_deadline:
                    self._abandon_queue()
                if not self._queue:
                    return  # closing and drained
                event = self._queue.popleft()
            delivered = False
            try:
                delivered = self._deliver(event)
            except Exception:  # a bug here must not kill the thread and strand the queue
                logger.exception("ttmemory webhook delivery of %s crashed", event.type)
            with self._cond:
                self._pending -= 1
                if delivered:
                    self.sent += 1
                    _counted("sent")
                else:
                    self.failed += 1
                    _counted("failed")
                if not self._queue:
                    self._full = False
                self._cond.notify_all()

    def _abandon_queue(self) -> None:
        """Count what ``close()`` could not deliver in time as dropped (``_cond`` held)."""
        abandoned = len(self._queue)
        self._queue.clear()
        self._pending -= abandoned
        self.dropped += abandoned
        _counted("dropped", abandoned)
        logger.warning(
            "ttmemory webhook closed with %d undelivered events for %s",
            abandoned,
            redacted_url(self.url),
        )

    def _deliver(self, event: Event) -> bool:
        """POST ``event`` until a 2xx, a final answer or the retries run out."""
        body = json.dumps(event.as_dict(), separators=(",", ":"), sort_keys=True).encode()
        attempt = 0
        while True:
            retry, reason = self._attempt(event, body)
            if retry is None:
                return True
            if not retry or attempt >= self.max_retries:
                logger.warning(
                    "ttmemory webhook %s failed for %s event %s after %d attempt(s): %s",
                    redacted_url(self.url),
                    event.type,
                    event.id,
                    attempt + 1,
                    reason,
                )
                return False
            delay = min(self.retry_backoff * 2**attempt, BACKOFF_CAP)
            if not self._backoff(random.uniform(delay / 2, delay)):
                logger.warning(
                    "ttmemory webhook %s: %s event %s not retried, the observer is closing (%s)",
                    redacted_url(self.url),
                    event.type,
                    event.id,
                    reason,
                )
                return False
            attempt += 1
            with self._cond:
                self.retried += 1
                _counted("retried")

    def _attempt(self, event: Event, body: bytes) -> tuple[bool | None, str]:
        """One POST. Returns (None, "") when delivered, else (retryable, reason)."""
        timestamp = int(time.time())  # signed per attempt: a retry is never stale on arrival
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": "ttmemory-webhook",
                "X-TTMemory-Event": event.type,
                "X-TTMemory-Event-Id": event.id,
                "X-TTMemory-Timestamp": str(timestamp),
                "X-TTMemory-Signature": sign(self._secret, timestamp, body),
            },
        )
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                response.read(MAX_RESPONSE_BYTES)
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            status = int(exc.code)
            exc.close()
        except (OSError, HTTPException) as exc:  # refused, reset, timed out, bad status line
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            return True, f"{type(exc).__name__}: {reason}"
        if 200 <= status < 300:
            return None, ""
        return status >= 500, f"HTTP {status}"

    def _backoff(self, delay: float) -> bool:
        """Sleep ``delay`` before a retry; False when ``close()``'s deadline comes first."""
        end = time.monotonic() + delay
        with self._cond:
            while True:
                if self._closing and end > self._drain_deadline:
                    return False
                remaining = end - time.monotonic()
                if remaining <= 0:
                    return True
                self._cond.wait(remaining)

    def _forget_parent_state(self) -> None:
        """In a forked child: the parent's thread, lock and queue are not ours."""
        self._cond = threading.Condition()
        self._queue = deque()
        self._pending = 0
        self._thread = None
        self._closing = False
        self._full = False


def _resolve_secret(secret: object, secret_env: object) -> bytes:
    # Error messages name the option, never the value.
    if secret is not None and secret_env is not None:
        raise TypeError("give either secret or secret_env, not both")
    if secret_env is not None:
        if not isinstance(secret_env, str) or not secret_env:
            raise TypeError("secret_env must be the name of an environment variable")
        value = os.environ.get(secret_env, "")
        if not value:
            raise TypeError(f"secret_env: the environment variable {secret_env} is unset or empty")
        return value.encode()
    if secret is None:
        raise TypeError("a signing secret is required: give secret or secret_env")
    if not isinstance(secret, str) or not secret:
        raise TypeError("secret must be a non-empty string")
    return secret.encode()


def _check_event_types(event_types: object) -> frozenset[str] | None:
    if event_types is None:
        return None
    if isinstance(event_types, str) or not isinstance(event_types, Iterable):
        raise TypeError(f"event_types must be a list of event type names, not {event_types!r}")
    types = frozenset(event_types)
    if not all(isinstance(t, str) and t for t in types):
        raise TypeError(f"event_types must hold event type names, not {sorted(map(repr, types))}")
    return types
