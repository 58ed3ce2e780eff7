"""Celery tasks (the only module importing Celery): thin wrappers taking ids, queued after commit.

``acks_late`` so a worker killed mid-task leaves the message to be redelivered; every job is
idempotent (learned-up-to and summarised-up-to marks, fact upserts), so a re-run adds nothing.
Retries back off exponentially, bounded, on LLM and embedding failures only.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from ttmemory import jobs
from ttmemory.exceptions import EmbeddingError, LLMError
from ttmemory.services import background  # noqa: F401  (registers the job bodies)

RETRY = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (LLMError, EmbeddingError),
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 5,
}


@shared_task(name="ttmemory.learn", **RETRY)
def learn_task(session_id: int, upto_seq: int) -> dict[str, Any]:
    return jobs.run("learn", session_id, upto_seq)


@shared_task(name="ttmemory.learn_job", **RETRY)
def learn_job_task(job_id: str) -> dict[str, Any]:
    return jobs.run("learn_job", job_id)


@shared_task(name="ttmemory.summarise", **RETRY)
def summarise_task(session_id: int) -> dict[str, Any]:
    return jobs.run("summarise", session_id)


@shared_task(name="ttmemory.embed", **RETRY)
def embed_task(fact_id: int) -> dict[str, Any]:
    return jobs.run("embed", fact_id)


@shared_task(name="ttmemory.recall_touch", acks_late=True)
def recall_touch_task(counts: list[tuple[int, int]]) -> dict[str, Any]:
    return jobs.run("recall_touch", counts)


@shared_task(name="ttmemory.learn_idle", acks_late=True)
def learn_idle_task() -> dict[str, Any]:
    return jobs.run("learn_idle")


@shared_task(name="ttmemory.prune_expired", acks_late=True)
def prune_expired_task() -> dict[str, Any]:
    return jobs.run("prune_expired")


TASKS = {
    "learn": learn_task,
    "learn_job": learn_job_task,
    "summarise": summarise_task,
    "embed": embed_task,
    "recall_touch": recall_touch_task,
    "learn_idle": learn_idle_task,
    "prune_expired": prune_expired_task,
}


def dispatch(job: str, args: tuple[Any, ...]) -> None:
    TASKS[job].delay(*args)


jobs.set_dispatcher(dispatch)
