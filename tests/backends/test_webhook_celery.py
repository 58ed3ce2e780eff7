"""Webhook delivery through a real Celery worker (Redis broker on loopback) with retries, and
the in-process queue taking over when the broker refuses the task."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import standardwebhooks

from tests.backends.redis_servers import free_port
from tests.backends.test_event_observers import WAIT, Receiver
from tests.conftest import user
from tests.learning.test_celery_worker import Worker, broker, eventually, producer
from ttmemory import events, memory
from ttmemory.backends.events import WebhookObserver

__all__ = ["broker", "producer"]  # fixtures used by name

WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    try:
        yield server
    finally:
        server.stop()


def webhook_settings(receiver: Receiver) -> dict[str, Any]:
    return {
        "WEBHOOK_ALLOW_PRIVATE_TARGETS": True,  # the receiver listens on loopback
        "EVENT_OBSERVERS": [
            {
                "BACKEND": "ttmemory.backends.events.WebhookObserver",
                "OPTIONS": {
                    "url": receiver.url,
                    "secret": WHSEC,
                    "max_retries": 3,
                    "retry_backoff": 0.05,
                },
            }
        ],
    }


def test_a_worker_delivers_the_webhook_and_celery_retries_a_5xx(
    transactional_db: Any, broker: Any, producer: Any, settings: Any, tmp_path: Path
) -> None:
    receiver = Receiver()
    overrides = webhook_settings(receiver)
    settings.TTMEMORY = {**settings.TTMEMORY, **overrides}
    receiver.script = [500, 503]  # then 200
    worker = Worker(broker, overrides, tmp_path / "worker.log")
    try:
        session = memory.session_open(namespace="hooked", key="chat")
        memory.message_add(session=session, message=user("hello"))
        [observer] = events.get_observers()
        assert isinstance(observer, WebhookObserver)

        requests = receiver.wait_for(3)
        eventually(lambda: "succeeded" in worker.log.read_text(), "the task to succeed")
    finally:
        worker.stop()
        receiver.stop()
        events.reset_observers()

    # This process only queued the task: nothing went through its own thread or queue.
    counts = observer.counts()
    assert counts["tasked"] == 1
    assert counts["sent"] == counts["pending"] == counts["dropped"] == counts["retried"] == 0
    # The worker sent it three times (two retries by Celery), one id, each signed afresh.
    assert len(requests) == 3
    assert len({r.headers["webhook-id"] for r in requests}) == 1
    for request in requests:
        payload = standardwebhooks.Webhook(WHSEC).verify(
            request.body, dict(request.headers.items())
        )
        assert (payload["type"], payload["namespace"]) == ("message.added", "hooked")
        assert b"hello" not in request.body
    log = worker.log.read_text()
    assert "ttmemory.webhook_deliver" in log
    assert log.count("retry: Retry in") == 2
    assert "'delivered': True, 'attempts': 3" in log


def test_a_refused_task_falls_back_to_the_in_process_queue(
    transactional_db: Any,
    producer: Any,
    settings: Any,
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="ttmemory.backends.events.webhook")
    producer.conf.update(
        broker_url=f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
        broker_connection_retry=False,
        broker_connection_max_retries=0,
        task_publish_retry=False,
    )
    producer._pool = None
    producer.amqp._producer_pool = None
    settings.TTMEMORY = {**settings.TTMEMORY, **webhook_settings(receiver)}
    try:
        session = memory.session_open(namespace="hooked", key="chat")
        memory.message_add(session=session, message=user("hello"))
        [observer] = events.get_observers()
        assert isinstance(observer, WebhookObserver)
        assert observer.flush(WAIT)
    finally:
        events.reset_observers()
        producer.conf.update(
            broker_connection_retry=True,
            broker_connection_max_retries=100,
            task_publish_retry=True,
        )

    [request] = receiver.requests
    assert json.loads(request.body)["type"] == "message.added"
    assert observer.counts()["sent"] == 1 and observer.counts()["tasked"] == 0
    assert "cannot queue its Celery task" in caplog.text
