"""turn_add: one call stores a turn and learns from it, inline or queued, or not at all."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import TestCase

from tests.conftest import assistant, user
from ttmemory import memory
from ttmemory.models import LearnJob, LearnJobStatus, Message

NS = "user-1"


def test_inline_learning_returns_the_stored_messages_and_the_fact_changes(
    session: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "inline"}

    result = memory.turn_add(
        session=session,
        messages=[user("I'm allergic to peanuts"), assistant("Noted: no peanuts.")],
    )

    assert result.learning == "inline" and result.job_id == ""
    assert [(m.seq, m.role) for m in result.messages] == [(1, "user"), (2, "assistant")]
    assert [(c.action, c.fact.text) for c in result.changes] == [
        ("ADD", "The user is allergic to peanuts")
    ]
    assert [f.text for f in memory.fact_list(namespace=NS)] == ["The user is allergic to peanuts"]
    # The next turn learns only what is new: the first turn is not learned twice.
    again = memory.turn_add(session=session, messages=[user("What should I order?")])
    assert again.learning == "inline" and all(c.action != "ADD" for c in again.changes)
    assert memory.message_recent(session=session)[-1] == user("What should I order?")


def test_queued_learning_returns_the_job_to_poll(session: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "celery"}  # eager Celery in the tests

    with TestCase.captureOnCommitCallbacks(execute=False) as pending:
        result = memory.turn_add(session=session, messages=[user("I live in Lisbon")])

    assert result.learning == "queued" and result.changes == []
    job = LearnJob.objects.get(pk=result.job_id)
    assert (job.status, job.upto_seq, job.session_id) == (LearnJobStatus.QUEUED, 1, session.pk)
    assert memory.fact_list(namespace=NS) == []  # nothing learned before the commit
    for callback in pending:
        callback()
    job.refresh_from_db()
    assert job.status == LearnJobStatus.DONE and len(job.fact_ids) == 1
    assert [f.text for f in memory.fact_list(namespace=NS)] == ["The user lives in Lisbon"]


def test_learn_false_only_stores(session: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "inline"}

    result = memory.turn_add(
        session=session, messages=[user("I'm allergic to peanuts")], learn=False
    )

    assert (result.learning, result.changes, result.job_id) == ("off", [], "")
    assert [m.seq for m in result.messages] == [1]
    assert memory.fact_list(namespace=NS) == [] and LearnJob.objects.count() == 0


def test_a_bad_message_stores_and_learns_nothing(session: Any) -> None:
    with pytest.raises(memory.MemoryValidationError) as caught:
        memory.turn_add(session=session, messages=[user("I live in Lisbon"), {"role": "robot"}])

    assert caught.value.field == "messages[1].role"
    assert Message.objects.count() == 0 and LearnJob.objects.count() == 0
    assert memory.fact_list(namespace=NS) == []
