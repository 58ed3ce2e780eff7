"""A job queued by a memory operation runs in a real Celery worker inside the same trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import user
from tests.learning.test_celery_worker import Worker, broker, eventually, producer  # noqa: F401
from tests.telemetry.conftest import Telemetry
from tests.telemetry.test_prometheus import free_port, get, value
from ttmemory import memory


def test_the_worker_job_span_is_a_child_of_the_operation_that_queued_it(
    transactional_db: Any,
    broker: Any,  # noqa: F811
    producer: Any,  # noqa: F811
    settings: Any,
    tmp_path: Path,
    otel: Telemetry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spans_file = tmp_path / "worker-spans.jsonl"
    multiproc = tmp_path / "prometheus"
    multiproc.mkdir()
    metrics_port = free_port()
    monkeypatch.setenv("TTM_SPANS_FILE", str(spans_file))
    monkeypatch.setenv("TTM_PROMETHEUS", "1")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(multiproc))
    monkeypatch.setenv("CELERY_METRICS_PORT", str(metrics_port))
    overrides = {"LEARN_EVERY": 1}
    settings.TTMEMORY = {**settings.TTMEMORY, **overrides}
    worker = Worker(broker, overrides, tmp_path / "worker.log")
    try:
        session = memory.session_open(namespace="traced-user", key="chat")
        memory.message_add(session=session, message=user("Hello! My name is Ada."))

        def job_spans() -> list[dict[str, Any]]:
            if not spans_file.exists():
                return []
            lines = spans_file.read_text().splitlines()
            return [s for s in map(json.loads, lines) if s["name"] == "ttmemory.job ttmemory.learn"]

        eventually(lambda: job_spans(), "the worker's job span")
        metrics = get(f"http://127.0.0.1:{metrics_port}/metrics").decode()
    finally:
        worker.stop()

    added = otel.named("create_memory messages")[0]
    job = job_spans()[0]
    assert job["context"]["trace_id"] == f"0x{added.context.trace_id:032x}"
    assert job["parent_id"] == f"0x{added.context.span_id:016x}"
    assert job["kind"] == "SpanKind.CONSUMER" and job["status"]["status_code"] == "UNSET"
    # The job's own work is inside the job span, in the same trace.
    worker_spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    children = [s for s in worker_spans if s["parent_id"] == job["context"]["span_id"]]
    trace_id = job["context"]["trace_id"]
    assert children and all(s["context"]["trace_id"] == trace_id for s in children)
    # Its queue lag and duration are metrics of the worker, served on its own port.
    lag = value(metrics, "ttmemory_job_queue_lag_seconds_count", ttmemory_job="ttmemory.learn")
    assert lag >= 1
    assert value(metrics, "ttmemory_job_duration_seconds_count", ttmemory_job="ttmemory.learn") >= 1
