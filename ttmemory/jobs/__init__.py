"""Background jobs by name: services enqueue them, ``ttmemory.tasks`` runs them in Celery.

A job body registers with ``@job("learn")`` (the bodies live in ``ttmemory.services.background``,
which takes ids only). ``schedule("learn", session_id, upto_seq)`` runs it after the current
transaction commits: through the dispatcher that ``ttmemory.tasks`` installs when Celery is
present, else inline in this process. This package imports nothing from the layers above it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from ttmemory.conf import app_settings
from ttmemory.jobs import deferred

logger = logging.getLogger(__name__)

JobBody = Callable[..., dict[str, Any]]
Dispatcher = Callable[[str, tuple[Any, ...]], None]

_registry: dict[str, JobBody] = {}
_dispatcher: Dispatcher | None = None
_queues: Callable[[], bool] | None = None
_lag_reporter: Callable[[], list[QueueLag]] | None = None

# Which queue family each job belongs to (``TTMEMORY["QUEUES"]`` names a queue per family).
# "delivery" is event delivery: the ``ttmemory.webhook_deliver`` task (not a job: it is sent
# by the webhook observer, see ``ttmemory.tasks.send_webhook``).
FAMILY = {
    "learn": "learn",
    "learn_job": "learn",
    "learn_idle": "learn",
    "summarise": "summarise",
    "embed": "embed",
    "message_embed": "embed",
    "message_index": "maintenance",
    "ledger_record": "maintenance",
    "recall_touch": "maintenance",
    "prune_expired": "maintenance",
}


@dataclass(frozen=True)
class QueueLag:
    """How far one queue is behind: messages waiting, and the age of the oldest one.

    ``oldest_seconds`` is None when the broker cannot show a waiting message without taking it
    (RabbitMQ) or the queue is empty; ``consumers`` is None when the broker does not count them
    (Redis).
    """

    queue: str
    families: tuple[str, ...]
    waiting: int
    oldest_seconds: float | None
    consumers: int | None


def job(name: str) -> Callable[[JobBody], JobBody]:
    """Register the decorated function as the body of background job ``name``."""

    def register(body: JobBody) -> JobBody:
        if _registry.get(name, body) is not body:
            raise ValueError(f"background job {name!r} is registered twice")
        _registry[name] = body
        return body

    return register


def registered() -> frozenset[str]:
    """Names of every registered job."""
    return frozenset(_registry)


def run(name: str, *args: Any) -> dict[str, Any]:
    """Run job ``name`` here and now (what a Celery task and inline dispatch both call)."""
    try:
        body = _registry[name]
    except KeyError:
        raise LookupError(
            f"no background job named {name!r} (registered: {', '.join(sorted(_registry))})"
        ) from None
    return body(*args)


def get_dispatcher() -> Dispatcher | None:
    return _dispatcher


def set_dispatcher(dispatcher: Dispatcher | None) -> None:
    """Route scheduled jobs through ``dispatcher`` (``ttmemory.tasks`` sends Celery tasks)."""
    global _dispatcher
    _dispatcher = dispatcher


def set_queue_check(check: Callable[[], bool] | None) -> None:
    """Tell ``queues()`` how the dispatcher decides (``ttmemory.tasks``: whether Celery is used)."""
    global _queues
    _queues = check


def set_lag_reporter(reporter: Callable[[], list[QueueLag]] | None) -> None:
    """Install what ``queue_lag()`` asks (``ttmemory.tasks`` reads the Celery broker)."""
    global _lag_reporter
    _lag_reporter = reporter


def queue_lag() -> list[QueueLag]:
    """Per-queue lag of the background jobs, read from the broker now (empty: no Celery).

    A plain function for dashboards and metrics (``manage.py ttmemory_jobs --lag`` prints it).
    """
    return _lag_reporter() if _lag_reporter is not None else []


def queues() -> bool:
    """Whether a job scheduled now would run elsewhere (a Celery task) rather than inline here."""
    if _dispatcher is None:
        return False
    return _queues() if _queues is not None else True


def schedule(name: str, *args: Any) -> None:
    """Run job ``name`` with ``args`` (ids, JSON-safe) after the transaction commits."""
    transaction.on_commit(lambda: _dispatch(name, args))


def _dispatch(name: str, args: tuple[Any, ...]) -> None:
    try:
        if _dispatcher is not None:
            _dispatcher(name, args)
        else:
            run_here(name, args)
    except Exception:  # queueing must never fail the write that triggered it
        logger.exception("ttmemory could not queue %s%r", name, args)


def in_background(name: str) -> bool:
    """Whether job ``name``, run in this process, goes to its background thread: the index
    jobs (``deferred.DEFERRED``) while ``INDEX_IN_BACKGROUND`` is on, once the caller's
    transaction has committed (a thread's connection could not see what an outer transaction
    still holds: a test's, or ``on_commit`` run inside one)."""
    return (
        name in deferred.DEFERRED
        and app_settings.INDEX_IN_BACKGROUND
        and not transaction.get_connection().in_atomic_block
    )


def run_here(name: str, args: tuple[Any, ...]) -> None:
    """Run job ``name`` in this process (no worker takes it): on the background thread when
    ``in_background(name)``, else now."""
    if in_background(name):
        _background.submit(name, args)
    else:
        run(name, *args)


def drain(timeout: float | None = None) -> bool:
    """Wait until this process's background index jobs are done (``INDEX_IN_BACKGROUND``);
    False when ``timeout`` seconds passed first. For scripts that exit at once and for tests:
    ``message_search`` never needs it (what is not indexed yet is scored from the messages)."""
    return _background.drain(timeout)


_background = deferred.Deferred(run)
#: Context manager around a change (``services.gate``): background index jobs wait to start
#: until this process's changes in flight end (``deferred.YIELD_MAX`` at most).
foreground = _background.foreground
#: Called by a background index job where it holds no lock and no transaction: waits while a
#: change is in flight in this process (``Deferred.pause``); nothing on any other thread.
pause = _background.pause
