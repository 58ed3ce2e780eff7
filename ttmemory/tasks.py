"""Celery tasks (the only module importing Celery): thin wrappers taking ids, queued after commit.

``acks_late`` so a worker killed mid-task leaves the message to be redelivered; every job is
idempotent (learned-up-to and summarised-up-to marks, fact upserts), so a re-run adds nothing.
Retries back off exponentially, bounded, on LLM and embedding failures only; a job over its
namespace's ``LLM_RATE_LIMIT`` goes back on its queue with the bucket's countdown instead.
``TTMEMORY["QUEUES"]`` sends each job family to its own queue, and ``queue_lag()`` (installed as
``ttmemory.jobs.queue_lag``) reads each queue's backlog from the broker (docs/scaling.md).
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import ExitStack, suppress
from typing import Any

from celery import _state as celery_state  # _tls.current_app: a project's app, no public name
from celery import current_app, shared_task
from celery.signals import task_postrun, task_prerun
from django.core import checks

from ttmemory import events, jobs, telemetry
from ttmemory.backends.events import Event, WebhookObserver
from ttmemory.backends.events import webhook as webhook_delivery
from ttmemory.conf import QUEUE_FAMILIES, app_settings
from ttmemory.exceptions import EmbeddingError, LLMError, RateLimitedError
from ttmemory.services import background  # noqa: F401  (registers the job bodies)

logger = logging.getLogger(__name__)
_warned_inline = False

RETRY = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (LLMError, EmbeddingError),
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 5,
}


SENT_HEADER = telemetry.ENQUEUED_AT  # epoch seconds the job was queued: what queue_lag() ages


def _run(task: Any, job: str, *args: Any) -> dict[str, Any]:
    """Run ``job``; when the namespace's LLM_RATE_LIMIT is reached, put it back on its queue
    with a countdown instead (not counted against the retries LLM failures get)."""
    try:
        return jobs.run(job, *args)
    except RateLimitedError as exc:
        logger.info("ttmemory.%s: %s", job, exc)
        raise task.retry(
            countdown=exc.retry_after, max_retries=task.request.retries + 1, exc=exc
        ) from exc


@shared_task(name="ttmemory.learn", bind=True, **RETRY)
def learn_task(self: Any, session_id: int, upto_seq: int) -> dict[str, Any]:
    return _run(self, "learn", session_id, upto_seq)


@shared_task(name="ttmemory.learn_job", bind=True, **RETRY)
def learn_job_task(self: Any, job_id: str) -> dict[str, Any]:
    return _run(self, "learn_job", job_id)


@shared_task(name="ttmemory.summarise", bind=True, **RETRY)
def summarise_task(self: Any, session_id: int) -> dict[str, Any]:
    return _run(self, "summarise", session_id)


@shared_task(name="ttmemory.embed", **RETRY)
def embed_task(fact_id: int) -> dict[str, Any]:
    return jobs.run("embed", fact_id)


@shared_task(name="ttmemory.message_embed", **RETRY)
def message_embed_task(session_id: int) -> dict[str, Any]:
    return jobs.run("message_embed", session_id)


@shared_task(name="ttmemory.message_index", **RETRY)
def message_index_task(session_id: int, sweep: bool = True) -> dict[str, Any]:
    return jobs.run("message_index", session_id, sweep)


@shared_task(name="ttmemory.recall_touch", acks_late=True)
def recall_touch_task(counts: list[tuple[int, int]]) -> dict[str, Any]:
    return jobs.run("recall_touch", counts)


@shared_task(name="ttmemory.learn_idle", acks_late=True)
def learn_idle_task() -> dict[str, Any]:
    return jobs.run("learn_idle")


@shared_task(name="ttmemory.prune_expired", acks_late=True)
def prune_expired_task() -> dict[str, Any]:
    return jobs.run("prune_expired")


@shared_task(name="ttmemory.webhook_deliver", bind=True, acks_late=True, max_retries=None)
def webhook_deliver_task(self: Any, url: str, event: dict[str, Any]) -> dict[str, Any]:
    """POST one event to the configured webhook ``url``; Celery retries 5xx, timeouts and
    connection errors up to that observer's ``max_retries``, with its backoff."""
    observer = next(
        (o for o in events.get_observers() if isinstance(o, WebhookObserver) and o.url == url),
        None,
    )
    item = Event(**event)
    if observer is None:
        logger.error(
            "ttmemory.webhook_deliver: no WebhookObserver for this URL in this worker's "
            "EVENT_OBSERVERS; %s event %s dropped",
            item.type,
            item.id,
        )
        return {"delivered": False, "reason": "no such webhook in this worker's settings"}
    retry, reason = observer.deliver(item)
    if retry is None:
        return {"delivered": True, "attempts": self.request.retries + 1}
    attempt = self.request.retries
    if retry and attempt < observer.max_retries:
        observer.count_retry()
        raise self.retry(countdown=observer.retry_delay(attempt), max_retries=None)
    observer.gave_up(item, attempt + 1, reason)
    return {"delivered": False, "reason": reason, "attempts": attempt + 1}


@shared_task(name="ttmemory.ledger_record", acks_late=True)
def ledger_record_task(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return jobs.run("ledger_record", rows)


TASKS = {
    "learn": learn_task,
    "learn_job": learn_job_task,
    "summarise": summarise_task,
    "embed": embed_task,
    "message_embed": message_embed_task,
    "message_index": message_index_task,
    "recall_touch": recall_touch_task,
    "ledger_record": ledger_record_task,
    "learn_idle": learn_idle_task,
    "prune_expired": prune_expired_task,
}


def celery_problem() -> str | None:
    """Why the current Celery app cannot take ttmemory's jobs, or None when it can.

    It can when it runs tasks eagerly or names a broker; an app nobody configured would send
    them to Celery's default ``amqp://localhost``, where nothing may ever run them.
    """
    conf = current_app._get_current_object().conf
    if conf.task_always_eager or conf.broker_url:
        return None
    return "the current Celery app has no broker_url (and task_always_eager is off)"


def use_celery() -> bool:
    """Whether jobs go to Celery: ``TTMEMORY["JOBS"]``, or when unset, a configured app."""
    global _warned_inline
    mode = app_settings.JOBS
    if mode is not None:
        return mode == "celery"
    problem = celery_problem()
    if problem is None:
        return True
    if not _warned_inline:
        _warned_inline = True
        logger.warning(
            "ttmemory: %s, so background jobs run inline after commit; configure a Celery app "
            "(CELERY_BROKER_URL) or set TTMEMORY['JOBS'] = 'inline' to say so",
            problem,
        )
    return False


def send_webhook(url: str, event: dict[str, Any]) -> bool:
    """Queue a webhook delivery as a Celery task; False (the observer's own queue delivers)
    when Celery is not used or runs tasks eagerly, where a task would block the commit."""
    if current_app._get_current_object().conf.task_always_eager or not use_celery():
        return False
    options: dict[str, Any] = {"headers": telemetry.job_headers()}
    queue = (app_settings.QUEUES or {}).get("delivery")
    if queue is not None:
        options["queue"] = queue
    webhook_deliver_task.apply_async((url, event), **options)
    return True


def queue_of(job: str) -> str | None:
    """The queue ``TTMEMORY["QUEUES"]`` names for ``job``'s family (None: Celery's default)."""
    queues = app_settings.QUEUES
    if not queues:
        return None
    return queues.get(jobs.FAMILY.get(job, ""))


def task_routes() -> dict[str, dict[str, str]]:
    """``TTMEMORY["QUEUES"]`` as a ``CELERY_TASK_ROUTES`` dict, for tasks sent by name (beat)."""
    routes = {
        task.name: {"queue": queue}
        for job, task in TASKS.items()
        if (queue := queue_of(job)) is not None
    }
    delivery = (app_settings.QUEUES or {}).get("delivery")
    if delivery is not None:
        routes[webhook_deliver_task.name] = {"queue": delivery}
    return routes


def dispatch(job: str, args: tuple[Any, ...]) -> None:
    # An eager app runs a task in the caller's thread: the index jobs go to the process's
    # background thread instead, as without Celery (jobs.in_background).
    eager = current_app._get_current_object().conf.task_always_eager
    if use_celery() and not (eager and jobs.in_background(job)):
        # The trace context and the queueing time travel in the message headers: the worker's
        # job span is a child of the operation that queued it, and queue lag is measured from it.
        options: dict[str, Any] = {"headers": telemetry.job_headers()}
        queue = queue_of(job)
        if queue is not None:
            options["queue"] = queue
        TASKS[job].apply_async(args, **options)
    else:
        jobs.run_here(job, args)


_job_spans: dict[str, ExitStack] = {}


@task_prerun.connect
def _start_job_span(task_id: str = "", task: Any = None, **kwargs: Any) -> None:
    name = getattr(task, "name", "") or ""
    if not name.startswith("ttmemory."):
        return
    request = task.request
    headers = dict(getattr(request, "headers", None) or {})
    for key in (telemetry.ENQUEUED_AT, "traceparent", "tracestate", "baggage"):
        value = getattr(request, key, None)
        if value is not None:
            headers.setdefault(key, value)
    stack = ExitStack()
    stack.enter_context(telemetry.job_span(name, headers))
    _job_spans[task_id] = stack


@task_postrun.connect
def _end_job_span(task_id: str = "", state: str | None = None, **kwargs: Any) -> None:
    stack = _job_spans.pop(task_id, None)
    if stack is None:
        return
    if state not in (None, "SUCCESS"):
        # The span's context manager marks the span failed and re-raises the marker.
        with suppress(_JobFailed):
            stack.__exit__(_JobFailed, _JobFailed(state), None)
    else:
        stack.close()


class _JobFailed(Exception):
    """Marks a job span failed when Celery reports a state other than SUCCESS (postrun)."""


def queue_lag() -> list[jobs.QueueLag]:
    """Per-queue lag read from the current Celery app's broker (``ttmemory.jobs.queue_lag``).

    Every queue ``TTMEMORY["QUEUES"]`` names, and Celery's default queue when a family has
    none. Waiting messages come from a passive declare (every broker); on Redis the oldest
    waiting message is peeked (not taken) for its age.
    """
    if not use_celery():
        return []
    app = current_app._get_current_object()
    default = app.conf.task_default_queue
    families: dict[str, list[str]] = {}
    for family in QUEUE_FAMILIES:
        queue = (app_settings.QUEUES or {}).get(family, default)
        families.setdefault(queue, []).append(family)
    report: list[jobs.QueueLag] = []
    with app.connection_for_read() as connection:
        channel = connection.default_channel
        client = getattr(channel, "client", None)  # kombu's Redis channel: a redis-py client
        for queue, names in families.items():
            waiting, consumers = 0, None
            try:
                declared = channel.queue_declare(queue=queue, passive=True)
                waiting = int(declared.message_count)
                if client is None:
                    consumers = int(declared.consumer_count)
            except connection.channel_errors:  # never declared: nothing is waiting
                channel = connection.channel()
            oldest = _oldest_seconds(client, queue) if client is not None and waiting else None
            report.append(jobs.QueueLag(queue, tuple(names), waiting, oldest, consumers))
    return report


def _oldest_seconds(client: Any, queue: str) -> float | None:
    """Age of the oldest message on a Redis queue (kombu pushes left, pops right)."""
    raw = client.lindex(queue, -1)
    if raw is None:
        return None
    try:
        sent = json.loads(raw)["headers"][SENT_HEADER]
    except (ValueError, KeyError, TypeError):
        return None  # sent by something other than dispatch() (beat, a direct delay())
    return max(0.0, time.time() - float(sent))


def configured_app_problem() -> str | None:
    """The project created a Celery app (its ``celery.py``) that cannot take jobs, or None.

    Celery's fallback app (made when nobody created one, often because Celery came as another
    package's dependency) is not the project's: jobs then run inline, as documented.
    """
    app = celery_state._tls.current_app  # set by Celery(...) unless set_as_current=False
    if app is None:
        return None
    problem = celery_problem()
    return None if problem is None else f"the Celery app {app.main!r} has no broker_url"


@checks.register("ttmemory")
def check_celery_broker(**kwargs: Any) -> list[checks.CheckMessage]:
    """JOBS unset and the project's Celery app without a broker (ttmemory.W070): jobs that
    were meant for workers run inline in the web process."""
    if app_settings.problem("JOBS") is not None or app_settings.JOBS is not None:
        return []  # "celery": E035 below; "inline": chosen
    problem = configured_app_problem()
    if problem is None:
        return []
    return [
        checks.Warning(
            f"{problem} (and task_always_eager is off): ttmemory runs its background jobs "
            "inline, in the process that wrote.",
            hint="Set CELERY_BROKER_URL (the app reading settings with "
            "app.config_from_object('django.conf:settings', namespace='CELERY')), or set "
            "TTMEMORY['JOBS'] = 'inline' to choose inline jobs.",
            id="ttmemory.W070",
        )
    ]


@checks.register("ttmemory")
def check_celery_app(**kwargs: Any) -> list[checks.CheckMessage]:
    """JOBS = "celery" needs a Celery app that can take the tasks (ttmemory.E035)."""
    if app_settings.problem("JOBS") is not None or app_settings.JOBS != "celery":
        return []
    problem = celery_problem()
    if problem is None:
        return []
    return [
        checks.Error(
            f"TTMEMORY['JOBS'] is 'celery' but {problem}: jobs would go nowhere.",
            hint="Create the project's Celery app (celery.py, loaded from the project's "
            "__init__.py) with CELERY_BROKER_URL set, or set TTMEMORY['JOBS'] = 'inline'.",
            id="ttmemory.E035",
        )
    ]


jobs.set_dispatcher(dispatch)
jobs.set_queue_check(use_celery)
webhook_delivery.set_task_sender(send_webhook)
jobs.set_lag_reporter(queue_lag)
