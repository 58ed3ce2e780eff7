"""Background jobs go where the user expects: never to a Celery broker nobody configured."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from celery import Celery
from django.core.checks import run_checks
from django.test import TestCase

from demo_project.celery import app as demo_app
from tests.conftest import user
from ttmemory import jobs, memory

NS = "user-jobs"


@pytest.fixture
def bare_celery_app(monkeypatch: Any) -> Any:
    """A Celery app nobody configured (what arrives as another package's dependency)."""
    monkeypatch.setattr("ttmemory.tasks._warned_inline", False)
    app = Celery("nobody-configured-me", set_as_current=False)
    app.set_current()
    try:
        yield app
    finally:
        demo_app.set_current()


def test_without_a_configured_celery_app_jobs_run_inline_and_say_so(
    db: Any, settings: Any, bare_celery_app: Any, caplog: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "LEARN_EVERY": 1}
    session = memory.session_open(namespace=NS, key="chat")

    with (
        caplog.at_level(logging.WARNING, logger="ttmemory.tasks"),
        TestCase.captureOnCommitCallbacks(execute=True),
    ):
        memory.message_add(session=session, message=user("I'm allergic to peanuts"))

    # Sent to amqp://localhost instead, the job would never have run here.
    assert [f.text for f in memory.fact_list(namespace=NS)] == ["The user is allergic to peanuts"]
    assert "jobs run inline" in caplog.text


def test_jobs_celery_without_a_broker_is_a_check_error(settings: Any, bare_celery_app: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "celery"}

    ids = [message.id for message in run_checks(tags=["ttmemory"])]

    assert "ttmemory.E035" in ids


def test_a_configured_app_passes_the_check_and_a_bad_mode_is_named(settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "celery"}
    assert "ttmemory.E035" not in [m.id for m in run_checks(tags=["ttmemory"])]

    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "rabbit"}
    errors = [m for m in run_checks(tags=["ttmemory"]) if m.id == "ttmemory.E034"]
    assert errors and "JOBS" in errors[0].msg


def test_summaries_are_queued_once_per_crossing_of_the_threshold(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "SUMMARISE_AT_TOKENS": 40}
    session = memory.session_open(namespace=NS, key="long")
    queued: list[str] = []
    previous = jobs.get_dispatcher()
    jobs.set_dispatcher(lambda job, args: queued.append(job))
    try:
        with TestCase.captureOnCommitCallbacks(execute=True):
            for n in range(12):  # about 12 tokens each: crosses 40 once, then 80
                memory.message_add(session=session, message=user(f"message number {n} here"))
    finally:
        jobs.set_dispatcher(previous)

    session.refresh_from_db()
    assert session.token_count > 80
    # One per multiple of 40 passed (40, 80, ...), not one per message past 40.
    assert queued.count("summarise") == (session.token_count - 1) // 40
