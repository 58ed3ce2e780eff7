"""Background jobs across processes: the trace context and queue time travel with a Celery job.

``job_headers`` is called where a job is queued; ``job_span`` in the worker opens the job's span
as a child of the trace that queued it and records the queue lag and the job's duration.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.trace import Span, SpanKind

from ttmemory.telemetry.recording import record, timed_span

ENQUEUED_AT = "ttmemory_enqueued_at"


def job_headers() -> dict[str, Any]:
    """Headers for a queued job: the current trace context and the time it was queued."""
    headers: dict[str, Any] = {ENQUEUED_AT: time.time()}
    propagate.inject(headers)
    return headers


@contextmanager
def job_span(job: str, headers: Mapping[str, Any]) -> Iterator[Span]:
    """The span of one background job in a worker, a child of the trace that queued it."""
    parent = propagate.extract(dict(headers))
    enqueued_at = headers.get(ENQUEUED_AT)
    if isinstance(enqueued_at, int | float):
        record(
            "ttmemory.job.queue.lag", max(0.0, time.time() - enqueued_at), **{"ttmemory.job": job}
        )
    token = otel_context.attach(parent)
    try:
        with timed_span(
            f"ttmemory.job {job}",
            "ttmemory.job.duration",
            {"ttmemory.job": job},
            kind=SpanKind.CONSUMER,
            attributes={"ttmemory.job": job},
        ) as span:
            yield span
    finally:
        otel_context.detach(token)
