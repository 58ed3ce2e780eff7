"""A Standard Webhooks endpoint: events signed per the spec, POSTed over a pooled httpx client.

Delivery goes through a Celery task with retries when ``ttmemory.tasks`` installs a task sender
and Celery is in use; otherwise (and whenever the broker refuses the task) a bounded in-process
queue sent by one daemon thread. https://www.standardwebhooks.com/ defines the headers
(``webhook-id``, ``webhook-timestamp``, ``webhook-signature``) and the signature, so receivers
verify with any Standard Webhooks library (``standardwebhooks.Webhook(secret).verify``).
"""

from __future__ import annotations

import atexit
import base64
import binascii
import hashlib
import hmac
import ipaddress
import json
import logging
import os
import random
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpcore
import httpx
from django.core.exceptions import ImproperlyConfigured

from ttmemory import telemetry
from ttmemory.backends.events.base import Event, EventObserver
from ttmemory.backends.options import check_http_url, check_int, check_seconds, redacted_url
from ttmemory.conf import app_settings

logger = logging.getLogger(__name__)

SIGNATURE_VERSION = "v1"
#: The prefix of a Standard Webhooks secret: ``whsec_`` + the base64 of the key bytes.
SECRET_PREFIX = "whsec_"
# Longest delay between two attempts of one event, whatever ``retry_backoff`` is (seconds).
BACKOFF_CAP = 30.0
# A receiver's answer is read (and dropped) up to this many bytes, so the connection is reused
# cleanly without a hostile receiver filling memory.
MAX_RESPONSE_BYTES = 64 * 1024

#: Hands an event to Celery: ``sender(url, event_dict)`` returns True when the task was queued,
#: False when Celery is not in use (``ttmemory.tasks`` installs it; the backends never import
#: Celery).
TaskSender = Callable[[str, dict[str, Any]], bool]
_task_sender: TaskSender | None = None


def set_task_sender(sender: TaskSender | None) -> None:
    """Route webhook deliveries through ``sender`` (``ttmemory.tasks`` installs a Celery one)."""
    global _task_sender
    _task_sender = sender


def secret_key(secret: str | bytes) -> bytes:
    """The HMAC key of ``secret``: a ``whsec_<base64>`` secret is decoded as the spec says; any
    other string is used as its UTF-8 bytes (the secrets of ttmemory before Standard Webhooks).
    """
    if isinstance(secret, bytes):
        return secret
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            raise TypeError("a whsec_ secret must be base64 after its prefix") from None
    return secret.encode()


def sign(secret: str | bytes, msg_id: str, timestamp: int | str, body: str | bytes) -> str:
    """``v1,<base64 HMAC-SHA256(key, "<msg_id>.<timestamp>.<body>")>``: a ``webhook-signature``."""
    payload = body.encode() if isinstance(body, str) else body
    signed = f"{msg_id}.{timestamp}.".encode() + payload
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode()}"


def sign_legacy(secret: str | bytes, timestamp: int | str, body: bytes) -> str:
    """The signature of ttmemory 0.1 (``X-TTMemory-Signature``): ``v1=<hex HMAC>`` over
    ``"<timestamp>.<body>"``. Sent only with ``legacy_headers=True``, during a migration."""
    digest = hmac.new(secret_key(secret), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"v1={digest.hexdigest()}"


def verify_signature(
    secret: str | bytes,
    body: str | bytes,
    headers: Mapping[str, str],
    *,
    tolerance: float = 300,
    now: float | None = None,
) -> bool:
    """Check a Standard Webhooks request, for receivers: True only if a signature matches and
    the timestamp is fresh.

    ``headers`` is the request's headers (any mapping; names are compared case-insensitively),
    ``body`` the raw request body (verify before parsing it). A ``webhook-timestamp`` more than
    ``tolerance`` seconds away from ``now`` (default: the current time) is rejected, so a
    captured request cannot be replayed later; de-duplicate within the window by
    ``webhook-id``. ``webhook-signature`` may list several space-separated ``v1,<base64>``
    values (during a secret rotation); each is compared in constant time. Any Standard
    Webhooks library gives the same answer (``standardwebhooks.Webhook(secret).verify``).
    """
    lower = {str(name).lower(): str(value) for name, value in headers.items()}
    msg_id = lower.get("webhook-id", "")
    timestamp = lower.get("webhook-timestamp", "").strip()
    signatures = lower.get("webhook-signature", "")
    if not (msg_id and timestamp and signatures):
        return False
    try:
        sent_at = int(timestamp)
    except ValueError:
        return False
    current = time.time() if now is None else now
    if abs(current - sent_at) > tolerance:
        return False
    expected = sign(secret, msg_id, sent_at, body).encode()
    matched = False
    for candidate in signatures.split():
        # No early exit: every candidate is compared, in constant time each.
        matched |= hmac.compare_digest(expected, candidate.encode())
    return matched


def _counted(outcome: str, n: int = 1) -> None:
    """Feed the observer's counters to metrics (``ttmemory.webhook.deliveries``, drops)."""
    telemetry.count("ttmemory.webhook.deliveries", n, **{"ttmemory.outcome": outcome})
    if outcome == "dropped":
        telemetry.count("ttmemory.events.dropped", n, **{"ttmemory.observer": "WebhookObserver"})


_observers: weakref.WeakSet[WebhookObserver] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for observer in list(_observers):
        observer._forget_parent_state()


def _close_at_exit() -> None:
    """Deliver what is still queued (each observer up to its ``drain_timeout``), count the rest
    as dropped: the delivery thread is a daemon and would die silently at interpreter exit."""
    for observer in list(_observers):
        try:
            observer.close()
        except Exception:  # never turn an exit into a traceback
            logger.debug("ttmemory webhook could not drain at exit", exc_info=True)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_at_exit)


class WebhookObserver(EventObserver):
    """POSTs every event as compact JSON to ``url``, signed per Standard Webhooks.

    Options: ``url`` (http:// or https://), ``secret`` or ``secret_env`` (the name of an
    environment variable holding it; one is required: a ``whsec_<base64>`` secret as the spec
    defines, or for older setups any string, used as its UTF-8 bytes), ``timeout`` per request
    (2 s), ``queue_size`` (1000), ``max_retries`` (3), ``retry_backoff`` (the first delay,
    0.5 s, doubled per attempt, jittered), ``event_types`` (an allow-list; default every type),
    ``drain_timeout`` (how long ``close()`` keeps delivering queued events, 5 s), ``delivery``
    ("auto": a Celery task when Celery is in use, else the in-process queue; "thread": always
    the queue) and ``legacy_headers`` (False; True also sends the ``X-TTMemory-*`` headers of
    ttmemory 0.1 while receivers migrate).

    With Celery (``delivery="auto"``, ``ttmemory.tasks`` loaded, a broker and not eager),
    ``publish`` queues the task ``ttmemory.webhook_deliver``: the worker's own observer for the
    same ``url`` sends it and Celery retries it with backoff (``acks_late``: a worker that dies
    mid-delivery leaves it to another). Otherwise, or when the broker refuses the task,
    ``publish`` only appends to a bounded in-memory queue and never waits: when the queue is
    full the event is dropped and counted. One daemon thread (started on first use, and again
    in a forked child) sends the queue in order. A 5xx answer, a timeout or a connection error
    is retried up to ``max_retries`` times; any other non-2xx answer (4xx, redirects) is final.

    Each request carries ``webhook-id`` (the event id: the same on every retry, for
    de-duplication), ``webhook-timestamp`` (unix seconds, at the attempt) and
    ``webhook-signature``: ``v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>``;
    receivers check it with any Standard Webhooks library or ``verify_signature``. Counters:
    ``sent``, ``failed`` (gave up), ``dropped`` (queue full, or still queued when ``close()``
    gave up), ``retried`` (extra attempts), ``pending`` (queued or in flight) and ``tasked``
    (handed to Celery); ``sent + failed + dropped + pending + tasked`` is every event accepted
    by ``event_types`` in this process. At interpreter exit the queue is drained for up to
    ``drain_timeout`` and what is left is counted as dropped; this is a notification channel,
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
        delivery: str = "auto",
        legacy_headers: bool = False,
        allow_private_targets: bool | None = None,
    ) -> None:
        self.url = check_http_url(url)
        if allow_private_targets is not None and not isinstance(allow_private_targets, bool):
            raise TypeError("allow_private_targets must be True, False or None (the setting)")
        self.allow_private_targets = allow_private_targets
        self._secret = _resolve_secret(secret, secret_env)
        self.timeout = check_seconds("timeout", timeout)
        self.queue_size = check_int("queue_size", queue_size, minimum=1)
        self.max_retries = check_int("max_retries", max_retries, minimum=0)
        self.retry_backoff = check_seconds("retry_backoff", retry_backoff, zero=True)
        self.event_types = _check_event_types(event_types)
        self.drain_timeout = check_seconds("drain_timeout", drain_timeout, zero=True)
        if delivery not in ("auto", "thread"):
            raise TypeError(f"delivery must be 'auto' or 'thread', not {delivery!r}")
        self.delivery = delivery
        if not isinstance(legacy_headers, bool):
            raise TypeError("legacy_headers must be True or False")
        self.legacy_headers = legacy_headers

        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self.retried = 0
        self.tasked = 0
        self._pending = 0
        self._queue: deque[Event] = deque()
        self._cond = threading.Condition()  # guards the queue, the counters and the thread
        self._thread: threading.Thread | None = None
        self._generation = 0  # bumped by close(): a thread that outlived its join exits
        self._closing = False
        self._drain_deadline = 0.0
        self._full = False  # a "queue full" warning was logged and the queue has not emptied
        self._broker_down = False  # a "broker refused" warning was logged
        self._client: httpx.Client | None = None  # this process's pool, made on first use
        self._client_lock = threading.Lock()
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
                "tasked": self.tasked,
            }

    def publish(self, event: Event) -> None:
        """Queue ``event`` for delivery (a Celery task, else the in-process queue); drops (and
        counts) it when the in-process queue is full."""
        if self.event_types is not None and event.type not in self.event_types:
            return
        if self._hand_to_celery(event):
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
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def deliver(self, event: Event) -> tuple[bool | None, str]:
        """One signed POST of ``event`` now, counted (what the Celery task calls per attempt).

        Returns ``(None, "")`` when delivered, else ``(retryable, reason)``; the caller decides
        whether to try again, then reports a final failure with ``gave_up``.
        """
        body = _body(event)
        retry, reason = self._attempt(event, body)
        with self._cond:
            if retry is None:
                self.sent += 1
        if retry is None:
            _counted("sent")
        return retry, reason

    def count_retry(self) -> None:
        """Count one extra attempt (the Celery task retries outside this object)."""
        with self._cond:
            self.retried += 1
        _counted("retried")

    def gave_up(self, event: Event, attempts: int, reason: str) -> None:
        """Count and log an event whose delivery ended without a 2xx."""
        with self._cond:
            self.failed += 1
        _counted("failed")
        logger.warning(
            "ttmemory webhook %s failed for %s event %s after %d attempt(s): %s",
            redacted_url(self.url),
            event.type,
            event.id,
            attempts,
            reason,
        )

    def retry_delay(self, attempt: int) -> float:
        """Seconds before retry ``attempt + 1``: doubled per attempt from ``retry_backoff``,
        capped at ``BACKOFF_CAP``, jittered (half fixed, half random)."""
        delay = min(self.retry_backoff * 2**attempt, BACKOFF_CAP)
        return random.uniform(delay / 2, delay)

    # -- Celery ------------------------------------------------------------------------------

    def _hand_to_celery(self, event: Event) -> bool:
        """True when ``event`` became a Celery task; False: deliver it from this process."""
        sender = _task_sender
        if sender is None or self.delivery != "auto":
            return False
        try:
            queued = sender(self.url, event.as_dict())
        except Exception as exc:  # the broker is down: the in-process queue takes over
            with self._cond:
                warn, self._broker_down = not self._broker_down, True
            if warn:
                logger.warning(
                    "ttmemory webhook for %s cannot queue its Celery task (%s: %s); events are "
                    "delivered from this process until the broker answers",
                    redacted_url(self.url),
                    type(exc).__name__,
                    exc,
                )
            return False
        if queued:
            with self._cond:
                self.tasked += 1
                self._broker_down = False
            _counted("tasked")
        return queued

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
        body = _body(event)
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
            if not self._backoff(self.retry_delay(attempt)):
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
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "ttmemory-webhook",
            "webhook-id": event.id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(self._secret, event.id, timestamp, body),
        }
        if self.legacy_headers:
            headers.update(
                {
                    "X-TTMemory-Event": event.type,
                    "X-TTMemory-Event-Id": event.id,
                    "X-TTMemory-Timestamp": str(timestamp),
                    "X-TTMemory-Signature": sign_legacy(self._secret, timestamp, body),
                }
            )
        try:
            with self._pool().stream("POST", self.url, content=body, headers=headers) as answer:
                read = 0
                for chunk in answer.iter_raw():
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES:
                        break
                status = answer.status_code
        except (httpx.TransportError, OSError) as exc:  # refused, reset, timed out, bad answer
            if str(exc).startswith(REFUSED_TARGET):
                return False, str(exc)  # a configuration error: retrying changes nothing
            return True, f"{type(exc).__name__}: {exc}"
        if 200 <= status < 300:
            return None, ""
        return status >= 500, f"HTTP {status}"

    def _pool(self) -> httpx.Client:
        """This process's pooled client (one per observer; a forked child makes its own)."""
        client = self._client
        if client is not None:
            return client
        with self._client_lock:
            if self._client is None:
                limits = httpx.Limits(max_connections=4, max_keepalive_connections=2)
                transport = httpx.HTTPTransport(limits=limits)
                # Every connection this pool opens is checked once connected (GuardedBackend).
                transport._pool._network_backend = GuardedBackend(
                    transport._pool._network_backend, allow=self._private_allowed
                )
                self._client = httpx.Client(
                    transport=transport,
                    timeout=httpx.Timeout(self.timeout),
                    follow_redirects=False,  # a redirect would re-send the event elsewhere
                    trust_env=False,  # no proxy from the environment: the socket is the target's
                )
            return self._client

    def _private_allowed(self) -> bool:
        """``allow_private_targets``, else ``WEBHOOK_ALLOW_PRIVATE_TARGETS`` (read at each
        connection; False outside a configured Django project)."""
        if self.allow_private_targets is not None:
            return self.allow_private_targets
        try:
            return bool(app_settings.WEBHOOK_ALLOW_PRIVATE_TARGETS)
        except ImproperlyConfigured:
            return False

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
        self._client_lock = threading.Lock()
        self._client = None  # the parent's sockets are not ours; never close them here


REFUSED_TARGET = "webhook target refused"


def refused_address(address: str) -> str | None:
    """Why a webhook may not be delivered to ``address`` (None: it may). Every address that is
    not globally routable is refused: private, loopback, link-local (cloud metadata services
    at 169.254.169.254 included), shared (100.64.0.0/10, Alibaba's metadata), reserved,
    multicast and unspecified ones, IPv4-mapped IPv6 by its IPv4 address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_global and not ip.is_multicast:
        return None
    kinds = [
        name
        for name, flag in (
            ("loopback", ip.is_loopback),
            ("link-local (metadata services)", ip.is_link_local),
            ("private", ip.is_private),
            ("multicast", ip.is_multicast),
            ("reserved", ip.is_reserved),
        )
        if flag
    ]
    return f"{ip} is {' and '.join(kinds) or 'not globally routable'}"


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's network backend, checking each connected socket's peer address: DNS is
    asked once, by the connection itself, so a name that answers a public address to a check
    and a private one to the connection (DNS rebinding) is still refused. Off while
    ``allow()`` is true (``WEBHOOK_ALLOW_PRIVATE_TARGETS``: development)."""

    def __init__(self, inner: httpcore.NetworkBackend, *, allow: Callable[[], bool]) -> None:
        self.inner = inner
        self.allow = allow

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self.inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        if self.allow():
            return stream
        sock = stream.get_extra_info("socket")
        peer = sock.getpeername()[0] if sock is not None else ""
        why = refused_address(str(peer))
        if why is not None:
            stream.close()
            raise httpcore.ConnectError(
                f"{REFUSED_TARGET}: {host} connected to {why} (set "
                "TTMEMORY['WEBHOOK_ALLOW_PRIVATE_TARGETS'] = True for development only)"
            )
        return stream

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        if not self.allow():
            raise httpcore.ConnectError(f"{REFUSED_TARGET}: a Unix socket is local")
        return self.inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def _body(event: Event) -> bytes:
    return json.dumps(event.as_dict(), separators=(",", ":"), sort_keys=True).encode()


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
        return _key(value)
    if secret is None:
        raise TypeError("a signing secret is required: give secret or secret_env")
    if not isinstance(secret, str) or not secret:
        raise TypeError("secret must be a non-empty string")
    return _key(secret)


def _key(secret: str) -> bytes:
    key = secret_key(secret)
    if not key:
        raise TypeError("the signing secret is empty")
    return key


def _check_event_types(event_types: object) -> frozenset[str] | None:
    if event_types is None:
        return None
    if isinstance(event_types, str) or not isinstance(event_types, Iterable):
        raise TypeError(f"event_types must be a list of event type names, not {event_types!r}")
    types = frozenset(event_types)
    if not all(isinstance(t, str) and t for t in types):
        raise TypeError(f"event_types must hold event type names, not {sorted(map(repr, types))}")
    return types
