"""The pipeline through a real Celery worker process and a Redis broker on loopback."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from tests.backends.redis_servers import RedisServer, require_redis_server
from tests.conftest import user
from ttmemory import memory
from ttmemory.models import Fact, MemorySession

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0
VISIBILITY = 3


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    require_redis_server()
    server = RedisServer(tmp_path_factory.mktemp("celery-broker")).start()
    yield server
    server.stop()


@pytest.fixture
def producer(broker: RedisServer) -> Iterator[Any]:
    """This process's Celery app sending real messages to the broker (not eager)."""
    from demo_project.celery import app

    saved = {k: app.conf[k] for k in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=broker.url, task_always_eager=False)
    app._pool = None
    app.amqp._producer_pool = None  # pools made before keep the old broker
    yield app
    app.conf.update(saved)
    app._pool = None
    app.amqp._producer_pool = None  # pools made before keep the old broker
    broker.client().flushall()


class Worker:
    def __init__(
        self,
        broker: RedisServer,
        overrides: dict[str, Any],
        log: Path,
        queues: list[str] | None = None,
    ) -> None:
        self.log = log
        env = {
            **os.environ,
            "TTM_DB_NAME": connection.settings_dict["NAME"],
            "TTM_BROKER": broker.url,
            "TTM_OVERRIDES": json.dumps(overrides),
            "TTM_VISIBILITY": str(VISIBILITY),
        }
        self.handle = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tests.celery_worker", "worker",
             "--pool=solo", "--concurrency=1", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "--loglevel=INFO",
             *([f"--queues={','.join(queues)}"] if queues else [])],
            cwd=ROOT, env=env, stdout=self.handle, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.wait_for("ready")

    def wait_for(self, text: str) -> None:
        deadline = time.monotonic() + WAIT
        while text not in self.log.read_text():
            if self.process.poll() is not None:
                raise AssertionError(f"worker exited:\n{self.log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"worker never logged {text!r}:\n{self.log.read_text()[-3000:]}"
                )
            time.sleep(0.1)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self.handle.close()


def eventually(check: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_a_worker_learns_facts_and_summarises_a_conversation(
    transactional_db: Any, broker: RedisServer, producer: Any, settings: Any, tmp_path: Path
) -> None:
    overrides = {"LEARN_EVERY": 2, "SUMMARISE_AT_TOKENS": 120, "SUMMARY_KEEP_TOKENS": 60}
    settings.TTMEMORY = {**settings.TTMEMORY, **overrides}
    worker = Worker(broker, overrides, tmp_path / "worker.log")
    try:
        session = memory.session_open(namespace="worker-user", key="chat")
        memory.message_add(session=session, message=user("Hello! My name is Ada."))
        memory.message_add(session=session, message=user("I'm allergic to peanuts."))
        for i in range(6):
            memory.message_add(session=session, message=user(f"Small talk {i}: " + "words " * 12))

        eventually(lambda: Fact.objects.filter(namespace="worker-user").count() >= 2, "facts")
        eventually(
            lambda: MemorySession.objects.get(pk=session.pk).summary is not None, "a summary"
        )
    finally:
        worker.stop()
    assert {f.text for f in memory.fact_list(namespace="worker-user")} == {
        "The user's name is Ada",
        "The user is allergic to peanuts",
    }
    stored = MemorySession.objects.get(pk=session.pk)
    assert stored.learned_upto_seq >= 2 and stored.summary_upto_seq > 0
    assert memory.context_window(session=session, max_tokens=500)[0]["role"] == "system"
    assert "ttmemory.learn" in worker.log.read_text()
    assert "ttmemory.summarise" in worker.log.read_text()


def test_a_task_for_an_erased_namespace_does_nothing(
    transactional_db: Any, broker: RedisServer, producer: Any, tmp_path: Path
) -> None:
    from ttmemory.tasks import learn_task

    session = memory.session_open(namespace="gone", key="chat")
    memory.message_add(session=session, message=user("My name is Bob"))
    memory.namespace_erase(namespace="gone")
    worker = Worker(broker, {}, tmp_path / "worker.log")
    try:
        sent = learn_task.delay(session.pk, 1)  # not the message_index task the append queued
        worker.wait_for(f"{sent.id}] succeeded")
    finally:
        worker.stop()
    assert Fact.objects.filter(namespace="gone").count() == 0
    assert not MemorySession.objects.filter(namespace="gone").exists()


def test_the_periodic_prune_runs_in_a_worker_and_expires_an_idle_session(
    transactional_db: Any, broker: RedisServer, producer: Any, tmp_path: Path
) -> None:
    """What Celery beat sends hourly: the worker applies the worker's SESSION_TTL."""
    from ttmemory.tasks import prune_expired_task

    idle = memory.session_open(namespace="prune", key="idle")
    active = memory.session_open(namespace="prune", key="active")
    for session in (idle, active):
        memory.message_add(session=session, message=user("hello"))
    MemorySession.objects.filter(pk=idle.pk).update(
        updated_at=idle.updated_at - dt.timedelta(hours=2)
    )
    worker = Worker(broker, {"SESSION_TTL": 3600}, tmp_path / "worker.log")
    try:
        # The appends queued message_index tasks too: wait for this task's own success.
        sent = prune_expired_task.delay()
        worker.wait_for(f"{sent.id}] succeeded")
    finally:
        worker.stop()
    assert list(MemorySession.objects.filter(namespace="prune")) == [active]
    assert "ttmemory.prune_expired" in worker.log.read_text()


EXTRACTED = json.dumps(
    {
        "facts": [
            {"action": "ADD", "text": "The user is allergic to peanuts", "kind": "fact"},
            {"action": "ADD", "text": "The user prefers window seats", "kind": "preference"},
        ]
    }
)


def test_a_worker_killed_mid_task_is_replaced_and_the_task_runs_once_more_without_duplicates(
    transactional_db: Any, broker: RedisServer, producer: Any, tmp_path: Path
) -> None:
    from tests.fakes.openai_server import FakeOpenAI
    from ttmemory.longterm import extraction
    from ttmemory.tasks import learn_task

    fake = FakeOpenAI().start()
    try:
        fake.require_system_prompt(extraction.EXTRACTION_SYSTEM_PROMPT)
        fake.delay_next(60)  # the first extraction hangs: the worker dies while waiting
        fake.chat_reply(EXTRACTED)
        fake.chat_reply(EXTRACTED)
        overrides = {
            "LLM": {
                "BACKEND": "ttmemory.backends.llm.OpenAIChatLLM",
                "OPTIONS": {
                    "model": "gpt-4o-mini",
                    "base_url": fake.base_url,
                    "api_key": fake.api_key,
                    "timeout": 90,
                },
            }
        }
        session = memory.session_open(namespace="killed", key="chat")
        memory.message_add_many(
            session=session,
            messages=[user("I'm allergic to peanuts"), user("I prefer window seats")],
        )
        first = Worker(broker, overrides, tmp_path / "first.log")
        learn_task.delay(session.pk, 2)
        eventually(lambda: len(fake.requests_to("/v1/chat/completions")) >= 1, "the LLM call")
        first.stop(signal.SIGKILL)
        # The broker hands an unacknowledged message to a new consumer once its visibility
        # timeout (3 s here) has passed; a worker starting earlier would not look again soon.
        time.sleep(VISIBILITY + 1)

        second = Worker(broker, overrides, tmp_path / "second.log")
        try:
            eventually(
                lambda: MemorySession.objects.get(pk=session.pk).learned_upto_seq == 2,
                "the redelivered task",
            )
        finally:
            second.stop()
    finally:
        fake.stop()
    texts = sorted(f.text for f in Fact.objects.filter(namespace="killed"))
    assert texts == ["The user is allergic to peanuts", "The user prefers window seats"]
    assert "ttmemory.learn" in second.log.read_text()


def test_the_api_learn_endpoint_answers_202_and_a_worker_finishes_the_job(
    transactional_db: Any, broker: RedisServer, producer: Any, tmp_path: Path
) -> None:
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    alice = User.objects.create_user("alice-worker")
    client = APIClient()
    client.force_authenticate(alice)
    base = "/api/memory/"
    sid = client.post(f"{base}sessions/", {"key": "chat"}, "json").json()["id"]
    client.post(
        f"{base}sessions/{sid}/messages/",
        {"messages": [user("My name is Ada."), user("I'm allergic to peanuts.")]},
        "json",
    )
    queued = client.post(f"{base}facts/learn/", {"session": sid}, "json")
    assert queued.status_code == 202 and queued.json()["status"] == "queued"  # no worker yet
    worker = Worker(broker, {}, tmp_path / "worker.log")
    try:
        eventually(
            lambda: client.get(queued.headers["Location"]).json()["status"] == "done", "the job"
        )
    finally:
        worker.stop()
    job = client.get(queued.headers["Location"]).json()
    assert job["changes"] == {"ADD": 2} and len(job["fact_ids"]) == 2
    assert "ttmemory.learn_job" in worker.log.read_text()
    texts = {f["text"] for f in client.get(f"{base}facts/").json()["results"]}
    assert texts == {"The user's name is Ada", "The user is allergic to peanuts"}
