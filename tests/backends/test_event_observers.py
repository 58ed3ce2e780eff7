"""WebhookObserver against a loopback HTTP receiver, RedisStreamObserver against redis-server."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import Message as Headers
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import standardwebhooks
from django.core.exceptions import ImproperlyConfigured
from django.test import TestCase

from tests.backends.redis_servers import RedisServer, free_port, redis_server
from tests.conftest import user
from ttmemory import events, memory
from ttmemory.backends import load_backend
from ttmemory.backends.events import (
    Event,
    EventObserver,
    RedisStreamObserver,
    WebhookObserver,
    verify_signature,
)
from ttmemory.backends.events.webhook import sign_legacy
from ttmemory.models import MemorySession, Message

SECRET = "whsec-test-0123456789abcdef"  # a plain string: its UTF-8 bytes are the key
# A Standard Webhooks secret: "whsec_" + base64 of the key bytes.
WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
# Text that must never leave the database through an event.
CONTENT = "Zanzibar-passphrase-4417"
WEBHOOK_LOGGER = "ttmemory.backends.events.webhook"
STREAM_LOGGER = "ttmemory.backends.events.redis_streams"
STREAM = "ttmemory:test-events"
# Bound on every wait: a broken build fails instead of hanging.
WAIT = 15.0


# -- a loopback webhook receiver -------------------------------------------------------------


@dataclass
class Received:
    headers: Headers  # names are case-insensitive
    body: bytes


class Receiver:
    """A ThreadingHTTPServer on 127.0.0.1 that records every POST and answers as scripted.

    ``script`` holds one answer per request, in order: a status code, or "block" (hold the
    request until ``release`` is set). When it runs out, requests get 200.
    """

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.script: list[int | str] = []
        self.release = threading.Event()
        self._cond = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._cond:
                    receiver.requests.append(Received(self.headers, body))
                    action = receiver.script.pop(0) if receiver.script else 200
                    receiver._cond.notify_all()
                if action == "block":
                    receiver.release.wait(WAIT)
                    action = 200
                self.send_response(int(action))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/ttmemory"

    def wait_for(self, count: int) -> list[Received]:
        """Wait (bounded) until ``count`` requests arrived; return them."""
        with self._cond:
            arrived = self._cond.wait_for(lambda: len(self.requests) >= count, timeout=WAIT)
            assert arrived, f"{len(self.requests)} of {count} webhook requests arrived"
            return list(self.requests)

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=WAIT)


@pytest.fixture(autouse=True)
def _loopback_receivers(settings: Any) -> None:
    """These receivers listen on loopback, which webhook delivery refuses unless allowed
    (tests/security/test_closed_endpoints.py proves the refusal)."""
    settings.TTMEMORY = {**settings.TTMEMORY, "WEBHOOK_ALLOW_PRIVATE_TARGETS": True}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    try:
        yield server
    finally:
        server.stop()


ConfigureWebhook = Callable[..., WebhookObserver]


@pytest.fixture
def use_webhook(settings: Any, receiver: Receiver) -> Iterator[ConfigureWebhook]:
    """Configure ``TTMEMORY["EVENT_OBSERVERS"]`` as one WebhookObserver; return it."""

    def configure(**options: Any) -> WebhookObserver:
        settings.TTMEMORY = {
            **settings.TTMEMORY,
            "EVENT_OBSERVERS": [
                {
                    "BACKEND": "ttmemory.backends.events.WebhookObserver",
                    "OPTIONS": {
                        "url": receiver.url,
                        "secret": SECRET,
                        "retry_backoff": 0.01,
                        **options,
                    },
                }
            ],
        }
        [observer] = events.get_observers()
        assert isinstance(observer, WebhookObserver)
        return observer

    yield configure
    receiver.release.set()  # blocked requests finish, so close() drains quickly
    events.reset_observers()


def add(session: MemorySession, text: str) -> None:
    """Append one message and run its after-commit callbacks (the events) now."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=session, message=user(text))


def remember(namespace: str, text: str) -> None:
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.fact_remember(namespace=namespace, text=text)


def make_event(n: int = 0, event_type: str = "message.added") -> Event:
    return Event(
        type=event_type,
        namespace="user-1",
        id=f"evt-{n}",
        occurred_at="2026-01-01T00:00:00+00:00",
        session_id=7,
        counts={"messages": 1},
        ids={"first_seq": n, "last_seq": n},
        duration_ms=1.5,
    )


def webhook_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ttmemory-webhook"]


def log_lines(caplog: pytest.LogCaptureFixture, logger: str, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and text in r.getMessage()]


# -- WebhookObserver -------------------------------------------------------------------------


def event_type(request: Received) -> str:
    return json.loads(request.body)["type"]


def test_requests_follow_standard_webhooks_and_the_package_verifies_them(
    session: MemorySession, use_webhook: ConfigureWebhook, receiver: Receiver
) -> None:
    use_webhook(secret=WHSEC)
    add(session, "hello")

    [request] = receiver.wait_for(1)

    headers, body = dict(request.headers.items()), request.body
    payload = json.loads(body)
    assert body == json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    assert (payload["type"], payload["namespace"], payload["session_id"]) == (
        "message.added",
        "user-1",
        session.pk,
    )
    assert payload["counts"]["messages"] == 1
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["webhook-id"] == payload["id"]
    assert request.headers["webhook-signature"].startswith("v1,")
    assert request.headers["X-TTMemory-Signature"] is None  # the 0.1 headers are gone

    # The reference verifier of the spec accepts the delivered request as it arrived ...
    assert standardwebhooks.Webhook(WHSEC).verify(body, headers) == payload
    # ... and rejects it when the body, the id or the timestamp changed, or for another secret.
    tampered = body.replace(b'"messages":1', b'"messages":2')
    assert tampered != body
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook(WHSEC).verify(tampered, headers)
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook(WHSEC).verify(body, {**headers, "webhook-id": "evt-other"})
    sent_at = int(request.headers["webhook-timestamp"])
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook(WHSEC).verify(
            body, {**headers, "webhook-timestamp": str(sent_at + 1)}
        )
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook("whsec_" + "A" * 32).verify(body, headers)

    # ttmemory's own verifier agrees with the package.
    assert verify_signature(WHSEC, body, headers)
    assert verify_signature(WHSEC, body, headers, now=sent_at + 299)
    rotated = {**headers, "webhook-signature": f"v1,AAAA {headers['webhook-signature']}"}
    assert verify_signature(WHSEC, body, rotated)
    assert standardwebhooks.Webhook(WHSEC).verify(body, rotated) == payload
    assert not verify_signature("whsec_" + "A" * 32, body, headers)
    assert not verify_signature(WHSEC, tampered, headers)
    assert not verify_signature(WHSEC, body, {**headers, "webhook-timestamp": str(sent_at + 1)})
    assert not verify_signature(WHSEC, body, {**headers, "webhook-id": "evt-other"})
    assert not verify_signature(WHSEC, body, headers, now=sent_at + 301)
    assert not verify_signature(WHSEC, body, headers, now=sent_at - 301)
    assert not verify_signature(WHSEC, body, {**headers, "webhook-timestamp": "not-a-time"})
    assert not verify_signature(WHSEC, body, {**headers, "webhook-signature": "v1,"})
    assert not verify_signature(
        WHSEC, body, {k: v for k, v in headers.items() if k != "webhook-id"}
    )


def test_a_plain_secret_verifies_as_its_bytes_and_legacy_headers_help_a_migration(
    session: MemorySession, use_webhook: ConfigureWebhook, receiver: Receiver
) -> None:
    """The migration path from 0.1: keep the old secret, turn legacy_headers on, move the
    receiver to Standard Webhooks (the old secret's bytes are the key), turn them off."""
    use_webhook(legacy_headers=True)
    add(session, "hello")

    [request] = receiver.wait_for(1)

    headers, body = dict(request.headers.items()), request.body
    assert standardwebhooks.Webhook(SECRET.encode()).verify(body, headers)["type"] == (
        "message.added"
    )
    assert verify_signature(SECRET, body, headers)
    timestamp = request.headers["X-TTMemory-Timestamp"]
    assert timestamp == request.headers["webhook-timestamp"]
    assert request.headers["X-TTMemory-Event"] == "message.added"
    assert request.headers["X-TTMemory-Event-Id"] == request.headers["webhook-id"]
    assert request.headers["X-TTMemory-Signature"] == sign_legacy(SECRET, timestamp, body)


def test_webhook_bodies_carry_no_content(
    session: MemorySession, use_webhook: ConfigureWebhook, receiver: Receiver
) -> None:
    observer = use_webhook()
    add(session, f"My locker code is {CONTENT}")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(
            session=session,
            messages=[user(f"again: {CONTENT}"), user("and nothing else")],
        )
    remember("user-1", f"The user's passphrase is {CONTENT}")

    assert observer.flush(WAIT)
    requests = receiver.wait_for(3)
    assert [event_type(r) for r in requests] == [
        "message.added",
        "message.added",
        "fact.changed",
    ]
    for request in requests:
        assert CONTENT.encode() not in request.body
        assert b"locker" not in request.body and b"passphrase" not in request.body
        assert not any(CONTENT in value for value in request.headers.values())
    assert observer.counts() == {
        "sent": 3,
        "failed": 0,
        "dropped": 0,
        "retried": 0,
        "pending": 0,
        "tasked": 0,
    }


def test_5xx_is_retried_until_delivered(
    session: MemorySession, use_webhook: ConfigureWebhook, receiver: Receiver
) -> None:
    receiver.script = [500, 503]
    observer = use_webhook(max_retries=3)
    add(session, "hello")

    assert observer.flush(WAIT)

    requests = receiver.wait_for(3)
    assert len(requests) == 3
    assert len({r.headers["webhook-id"] for r in requests}) == 1
    for request in requests:  # each attempt is signed afresh
        assert verify_signature(SECRET, request.body, dict(request.headers.items()))
    assert (observer.sent, observer.retried, observer.failed) == (1, 2, 0)


def test_4xx_is_final_and_the_secret_is_never_logged(
    session: MemorySession,
    use_webhook: ConfigureWebhook,
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger=WEBHOOK_LOGGER)
    receiver.script = [400]
    observer = use_webhook(max_retries=3)
    add(session, "hello")

    assert observer.flush(WAIT)

    assert len(receiver.requests) == 1
    assert (observer.sent, observer.retried, observer.failed) == (0, 0, 1)
    [warning] = log_lines(caplog, WEBHOOK_LOGGER, "HTTP 400")
    assert "message.added" in warning
    assert SECRET not in caplog.text
    assert SECRET not in repr(observer)


def test_connection_errors_and_timeouts_are_retried_then_given_up(
    session: MemorySession, use_webhook: ConfigureWebhook, receiver: Receiver
) -> None:
    closed_port = free_port()
    refused = use_webhook(url=f"http://127.0.0.1:{closed_port}/hook", max_retries=2)
    add(session, "nobody listens")
    assert refused.flush(WAIT)
    assert (refused.sent, refused.retried, refused.failed) == (0, 2, 1)

    receiver.script = ["block", "block"]
    slow = use_webhook(timeout=0.2, max_retries=1)
    add(session, "nobody answers")
    assert slow.flush(WAIT)
    assert len(receiver.requests) == 2
    assert (slow.sent, slow.retried, slow.failed) == (0, 1, 1)


def test_a_full_queue_drops_and_counts(
    session: MemorySession,
    use_webhook: ConfigureWebhook,
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=WEBHOOK_LOGGER)
    receiver.script = ["block"]
    observer = use_webhook(queue_size=2)
    add(session, "first")
    receiver.wait_for(1)  # the first event is in flight, held by the receiver

    for n in range(9):
        add(session, f"message {n}")

    counts = observer.counts()
    assert counts["sent"] + counts["failed"] + counts["dropped"] + counts["pending"] == 10
    assert counts == {"sent": 0, "failed": 0, "dropped": 7, "retried": 0, "pending": 3, "tasked": 0}
    assert len(log_lines(caplog, WEBHOOK_LOGGER, "is full")) == 1
    assert Message.objects.filter(session=session).count() == 10

    receiver.release.set()
    assert observer.flush(WAIT)
    assert observer.counts() == {
        "sent": 3,
        "failed": 0,
        "dropped": 7,
        "retried": 0,
        "pending": 0,
        "tasked": 0,
    }
    assert len(receiver.requests) == 3


def test_a_stalled_webhook_does_not_hold_up_writes(
    session: MemorySession, use_webhook: ConfigureWebhook, receiver: Receiver
) -> None:
    receiver.script = ["block"]  # the receiver holds the first request until released
    observer = use_webhook(timeout=WAIT)

    for n in range(20):
        add(session, f"message {n}")

    # Every write committed and published while the receiver had at most one request open.
    assert Message.objects.filter(session=session).count() == 20
    assert len(receiver.requests) <= 1
    assert observer.sent == 0 and observer.pending == 20

    receiver.release.set()
    assert observer.flush(WAIT)
    assert observer.sent == 20 and len(receiver.requests) == 20


def test_event_types_limit_what_is_sent(
    session: MemorySession, use_webhook: ConfigureWebhook, receiver: Receiver
) -> None:
    observer = use_webhook(event_types=["fact.changed"])
    add(session, "hello")
    remember("user-1", "The user likes tea")

    assert observer.flush(WAIT)
    assert [event_type(r) for r in receiver.wait_for(1)] == ["fact.changed"]
    assert observer.sent == 1


def test_close_drains_the_queue_and_stops_the_thread(receiver: Receiver) -> None:
    observer = WebhookObserver(url=receiver.url, secret=SECRET)
    for n in range(3):
        observer.publish(make_event(n))

    observer.close()

    assert observer.counts()["sent"] == 3 and observer.pending == 0
    assert webhook_threads() == []
    assert [r.headers["webhook-id"] for r in receiver.requests] == [
        "evt-0",
        "evt-1",
        "evt-2",
    ]


def test_close_gives_up_after_its_bound(receiver: Receiver) -> None:
    receiver.script = ["block"] * 3
    observer = WebhookObserver(
        url=receiver.url, secret=SECRET, timeout=0.5, max_retries=0, drain_timeout=0.2
    )
    for n in range(3):
        observer.publish(make_event(n))
    receiver.wait_for(1)

    observer.close()

    counts = observer.counts()
    assert counts["sent"] == 0 and counts["pending"] == 0
    assert counts["failed"] >= 1 and counts["dropped"] >= 1
    assert counts["failed"] + counts["dropped"] == 3
    assert webhook_threads() == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_worker(receiver: Receiver) -> None:
    observer = WebhookObserver(url=receiver.url, secret=SECRET)
    try:
        observer.publish(make_event(1))
        assert observer.flush(WAIT)

        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                observer.publish(make_event(2))
                code = 0 if observer.flush(WAIT) and observer.sent == 2 else 2
            finally:
                os._exit(code)
        deadline = time.monotonic() + WAIT
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail("the forked child did not finish")
            time.sleep(0.01)
        assert os.waitstatus_to_exitcode(status) == 0
        ids = [r.headers["webhook-id"] for r in receiver.wait_for(2)]
        assert ids == ["evt-1", "evt-2"]
    finally:
        observer.close()


def test_bad_options_are_reported_with_the_setting_named(monkeypatch: Any) -> None:
    def load(**options: Any) -> Any:
        config = {"BACKEND": "ttmemory.backends.events.WebhookObserver", "OPTIONS": options}
        return load_backend("EVENT_OBSERVERS", config, base=EventObserver)

    url = "https://hooks.example.com/ttmemory"
    bad: list[dict[str, Any]] = [
        {"url": "ftp://hooks.example.com/x", "secret": SECRET},
        {"url": "https://", "secret": SECRET},
        {"url": url},
        {"url": url, "secret": ""},
        {"url": url, "secret": SECRET, "secret_env": "TTMEMORY_TEST_WEBHOOK_SECRET"},
        {"url": url, "secret_env": "TTMEMORY_TEST_WEBHOOK_SECRET_UNSET"},
        {"url": url, "secret": SECRET, "queue_size": 0},
        {"url": url, "secret": SECRET, "max_retries": -1},
        {"url": url, "secret": SECRET, "timeout": 0},
        {"url": url, "secret": SECRET, "event_types": "message.added"},
        {"url": url, "secret": SECRET, "colour": "blue"},
    ]
    monkeypatch.delenv("TTMEMORY_TEST_WEBHOOK_SECRET_UNSET", raising=False)
    for options in bad:
        with pytest.raises(ImproperlyConfigured, match="EVENT_OBSERVERS") as info:
            load(**options)
        assert SECRET not in str(info.value)

    monkeypatch.setenv("TTMEMORY_TEST_WEBHOOK_SECRET", "from-the-environment")
    observer = load(url=url, secret_env="TTMEMORY_TEST_WEBHOOK_SECRET")
    assert isinstance(observer, WebhookObserver)
    assert "from-the-environment" not in repr(observer)


# -- RedisStreamObserver ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis-events")) as server:
        yield server


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test's own, which it may stop and restart."""
    with redis_server(tmp_path / "own-redis") as server:
        yield server


ConfigureStream = Callable[..., RedisStreamObserver]


@pytest.fixture
def use_stream(settings: Any) -> Iterator[ConfigureStream]:
    """Configure ``TTMEMORY["EVENT_OBSERVERS"]`` as one RedisStreamObserver; return it."""

    def configure(url: str, **options: Any) -> RedisStreamObserver:
        settings.TTMEMORY = {
            **settings.TTMEMORY,
            "EVENT_OBSERVERS": [
                {
                    "BACKEND": "ttmemory.backends.events.RedisStreamObserver",
                    "OPTIONS": {"url": url, "stream": STREAM, **options},
                }
            ],
        }
        [observer] = events.get_observers()
        assert isinstance(observer, RedisStreamObserver)
        return observer

    yield configure
    events.reset_observers()


def stream_entries(server: RedisServer) -> list[dict[str, str]]:
    client = server.client()
    try:
        entries: list[tuple[bytes, dict[bytes, bytes]]] = client.xrange(STREAM)  # type: ignore[assignment]
        return [{k.decode(): v.decode() for k, v in fields.items()} for _, fields in entries]
    finally:
        client.close()


def test_events_land_in_the_stream_without_content(
    session: MemorySession, standalone: RedisServer, use_stream: ConfigureStream
) -> None:
    client = standalone.client()
    client.flushall()
    client.close()
    observer = use_stream(standalone.url)

    add(session, f"My locker code is {CONTENT}")
    remember("user-1", f"The user's passphrase is {CONTENT}")

    entries = stream_entries(standalone)
    assert [e["type"] for e in entries] == ["message.added", "fact.changed"]
    added = entries[0]
    assert set(added) == {
        "id",
        "type",
        "namespace",
        "occurred_at",
        "session_id",
        "duration_ms",
        "counts",
        "ids",
    }
    assert (added["namespace"], added["session_id"]) == ("user-1", str(session.pk))
    assert json.loads(added["counts"])["messages"] == 1
    assert json.loads(added["ids"]) == {"first_seq": 1, "last_seq": 1}
    assert float(added["duration_ms"]) >= 0
    assert len({e["id"] for e in entries}) == 2
    assert entries[1]["session_id"] == ""
    for entry in entries:
        assert not any(CONTENT in value or "locker" in value for value in entry.values())
    assert (observer.sent, observer.failed, observer.skipped) == (2, 0, 0)


def test_the_stream_is_trimmed_approximately(
    standalone: RedisServer, use_stream: ConfigureStream
) -> None:
    client = standalone.client()
    client.flushall()
    observer = use_stream(standalone.url, maxlen=10)
    try:
        for n in range(300):
            observer.publish(make_event(n))
        assert observer.sent == 300
        # MAXLEN ~ trims whole stream nodes (100 entries by default), never below maxlen.
        assert 10 <= client.xlen(STREAM) < 300
    finally:
        client.close()


def test_writes_go_on_when_redis_dies_and_the_breaker_skips(
    session: MemorySession,
    own_server: RedisServer,
    use_stream: ConfigureStream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=STREAM_LOGGER)
    observer = use_stream(own_server.url, breaker_seconds=60)
    add(session, "before the outage")
    assert len(stream_entries(own_server)) == 1
    failures_before = events.stats.failures

    own_server.stop()
    for n in range(5):
        add(session, f"during the outage {n}")

    assert Message.objects.filter(session=session).count() == 6
    assert (observer.sent, observer.failed, observer.skipped) == (1, 1, 4)
    assert len(log_lines(caplog, STREAM_LOGGER, "Redis failed")) == 1
    assert events.stats.failures == failures_before  # the observer absorbed the error


def test_events_return_to_the_stream_when_redis_is_back(
    session: MemorySession,
    own_server: RedisServer,
    use_stream: ConfigureStream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=STREAM_LOGGER)
    observer = use_stream(own_server.url, breaker_seconds=0)
    own_server.stop()
    add(session, "while Redis is down")
    assert observer.failed == 1

    own_server.start()
    add(session, "Redis is back")

    assert [e["type"] for e in stream_entries(own_server)] == ["message.added"]
    assert (observer.sent, observer.failed) == (1, 1)
    assert len(log_lines(caplog, STREAM_LOGGER, "Redis failed")) == 1
    assert len(log_lines(caplog, STREAM_LOGGER, "Redis is back")) == 1


def test_bad_stream_options_are_reported() -> None:
    def load(**options: Any) -> Any:
        config = {"BACKEND": "ttmemory.backends.events.RedisStreamObserver", "OPTIONS": options}
        return load_backend("EVENT_OBSERVERS", config, base=EventObserver)

    bad: list[dict[str, Any]] = [
        {"url": "http://127.0.0.1:1/0"},
        {"url": "redis://127.0.0.1:1/0", "stream": ""},
        {"url": "redis://127.0.0.1:1/0", "maxlen": -1},
        {"url": "redis://127.0.0.1:1/0", "socket_timeout": 0},
    ]
    for options in bad:
        with pytest.raises(ImproperlyConfigured, match="EVENT_OBSERVERS"):
            load(**options)


EXIT_SCRIPT = """
import atexit, json, sys

observers = []
# Registered before ttmemory is imported: atexit runs it after the webhook module's drain.
atexit.register(lambda: print(json.dumps(observers[0].counts()), flush=True))
from ttmemory.backends.events.base import Event
from ttmemory.backends.events.webhook import WebhookObserver

url, count, drain = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
observer = WebhookObserver(url=url, secret="s", timeout=0.5, max_retries=0, drain_timeout=drain,
                           allow_private_targets=True)
observers.append(observer)
for n in range(count):
    observer.publish(Event(type="message.added", namespace="ns", id=f"evt-{n}",
                           occurred_at="2026-01-01T00:00:00+00:00"))
# no close(), no flush(): the process just ends
"""


def run_and_exit(url: str, count: int, drain: float) -> dict[str, int]:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, url, str(count), str(drain)],
        capture_output=True,
        text=True,
        timeout=WAIT * 2,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_queued_events_are_delivered_when_the_process_exits(receiver: Receiver) -> None:
    counts = run_and_exit(receiver.url, 20, drain=WAIT)

    assert counts["sent"] == 20 and counts["dropped"] == 0 and counts["pending"] == 0
    assert [r.headers["webhook-id"] for r in receiver.requests] == [f"evt-{n}" for n in range(20)]


def test_what_cannot_be_delivered_at_exit_is_counted_as_dropped(receiver: Receiver) -> None:
    receiver.script = ["block"] * 5  # the receiver never answers within the drain bound

    counts = run_and_exit(receiver.url, 5, drain=0.2)

    assert counts["sent"] == 0 and counts["pending"] == 0
    assert counts["failed"] >= 1 and counts["dropped"] >= 1
    assert counts["failed"] + counts["dropped"] == 5
