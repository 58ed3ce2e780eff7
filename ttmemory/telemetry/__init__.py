"""Traces, metrics and log context on the OpenTelemetry API alone (a no-op until an SDK is set).

The face of the package: backends and services call the helpers re-exported here. Each module
holds one concern: ``catalogue`` (the metrics ttmemory exports), ``recording`` (providers,
spans and samples), ``logs`` (log context), ``operations`` (memory operations, embedder and LLM
calls, lock waits, usage), ``jobs`` (Celery jobs) and ``prometheus`` (the ``/metrics`` view).
"""

from __future__ import annotations

from ttmemory.telemetry.catalogue import METRICS, MetricSpec
from ttmemory.telemetry.jobs import ENQUEUED_AT, job_headers, job_span
from ttmemory.telemetry.logs import install_log_context, log_context
from ttmemory.telemetry.operations import (
    embedding_call,
    llm_call,
    lock_wait,
    operation,
    records,
    usage,
)
from ttmemory.telemetry.recording import configure, count, record

__all__ = [
    "ENQUEUED_AT",
    "METRICS",
    "MetricSpec",
    "configure",
    "count",
    "embedding_call",
    "install_log_context",
    "job_headers",
    "job_span",
    "llm_call",
    "lock_wait",
    "log_context",
    "operation",
    "record",
    "records",
    "usage",
]
