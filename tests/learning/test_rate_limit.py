"""Per-namespace LLM rate limits and queue routing settings (every database)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from django.core.checks import run_checks
from django.utils import timezone

from tests.conftest import user
from ttmemory import memory
from ttmemory.backends.llm import ScriptedLLM
from ttmemory.exceptions import RateLimitedError
from ttmemory.models import LearnJob, LearnJobStatus, LedgerEntry, RateBucket
from ttmemory.services.learning import facts_learn
from ttmemory.services.learnjobs import learn_job_create, learn_job_run
from ttmemory.services.ledger import llm_rate_take

pytestmark = pytest.mark.contract
ANSWER = json.dumps({"facts": [{"action": "ADD", "text": "The user likes tea", "kind": "fact"}]})


@pytest.fixture
def limited(settings: Any) -> type[ScriptedLLM]:
    ScriptedLLM.reset(ANSWER, ANSWER, ANSWER)
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "LLM": {"BACKEND": "ttmemory.backends.llm.ScriptedLLM", "OPTIONS": {"model": "gpt-test"}},
        "LLM_RATE_LIMIT": "2/min",
    }
    return ScriptedLLM


def test_the_bucket_lets_a_burst_through_then_one_call_per_refill(db: Any, limited: Any) -> None:
    start = timezone.now()
    llm_rate_take(namespace="a", now=start)
    llm_rate_take(namespace="a", now=start)
    with pytest.raises(RateLimitedError) as raised:
        llm_rate_take(namespace="a", now=start + dt.timedelta(seconds=1))
    assert 28 <= raised.value.retry_after <= 30  # 2 per minute: a token every 30 s
    llm_rate_take(namespace="b", now=start)  # another namespace has its own bucket
    llm_rate_take(namespace="a", now=start + dt.timedelta(seconds=31))
    with pytest.raises(RateLimitedError):
        llm_rate_take(namespace="a", now=start + dt.timedelta(seconds=32))


def test_a_rate_limited_extraction_calls_nothing_and_records_nothing(db: Any, limited: Any) -> None:
    facts_learn(namespace="tea", messages=[user("I like tea")])
    facts_learn(namespace="tea", messages=[user("I like tea")])
    with pytest.raises(RateLimitedError):
        facts_learn(namespace="tea", messages=[user("I like tea a lot")])

    assert len(limited.requests) == 2
    assert LedgerEntry.objects.filter(namespace="tea").count() == 2
    assert [f.text for f in memory.fact_list(namespace="tea")] == ["The user likes tea"]
    facts_learn(namespace="coffee", messages=[user("I like tea")])  # not limited
    assert len(limited.requests) == 3


def test_a_rate_limited_learn_job_goes_back_to_queued_not_failed(
    db: Any, limited: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "LLM_RATE_LIMIT": "1/h", "JOBS": "inline"}
    session = memory.session_open(namespace="jobs", key="chat")
    memory.message_add(session=session, message=user("I like tea"))
    llm_rate_take(namespace="jobs")  # the hour's only call is spent
    job = learn_job_create(session=session)

    with pytest.raises(RateLimitedError):
        learn_job_run(job_id=str(job.pk))

    assert LearnJob.objects.get(pk=job.pk).status == LearnJobStatus.QUEUED


def test_erasing_a_namespace_erases_its_bucket(db: Any, limited: Any) -> None:
    llm_rate_take(namespace="gone")
    receipt = memory.namespace_erase(namespace="gone")
    assert receipt.counts["rate_bucket"] == 1 and not RateBucket.objects.exists()


def test_queues_must_name_known_families(settings: Any) -> None:
    from ttmemory.tasks import task_routes

    settings.TTMEMORY = {**settings.TTMEMORY, "QUEUES": {"learn": "a", "embed": "b"}}
    assert task_routes()["ttmemory.learn"] == {"queue": "a"}
    assert task_routes()["ttmemory.learn_job"] == {"queue": "a"}
    assert task_routes()["ttmemory.message_embed"] == {"queue": "b"}
    assert "ttmemory.summarise" not in task_routes()  # Celery's default queue

    settings.TTMEMORY = {**settings.TTMEMORY, "QUEUES": {"learning": "a"}}
    errors = [m for m in run_checks(tags=["ttmemory"]) if m.id == "ttmemory.E046"]
    assert errors and "QUEUES" in errors[0].msg
