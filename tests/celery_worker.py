"""A real Celery worker for the tests: ``python -m celery -A tests.celery_worker worker ...``.

The parent test passes the test database name (``TTM_DB_NAME``), the broker (``TTM_BROKER``),
TTMEMORY overrides (``TTM_OVERRIDES``, JSON) and the broker's visibility timeout.
"""

from __future__ import annotations

import json
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
from django.conf import settings

settings.DATABASES["default"]["NAME"] = os.environ["TTM_DB_NAME"]
settings.TTMEMORY = {**settings.TTMEMORY, **json.loads(os.environ.get("TTM_OVERRIDES", "{}"))}
django.setup()

from demo_project.celery import app  # noqa: E402

app.conf.update(
    broker_url=os.environ["TTM_BROKER"],
    result_backend=None,
    task_always_eager=False,
    task_eager_propagates=False,
    worker_prefetch_multiplier=1,
    broker_transport_options={
        "visibility_timeout": float(os.environ.get("TTM_VISIBILITY", "3600"))
    },
    worker_hijack_root_logger=False,
)

# Telemetry of the worker, for tests that check it: finished spans as JSON lines in
# TTM_SPANS_FILE (an OpenTelemetry SDK), metrics in prometheus_client (served on
# CELERY_METRICS_PORT by demo_project.celery) when TTM_PROMETHEUS is set.
if os.environ.get("TTM_SPANS_FILE"):
    from collections.abc import Sequence

    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    from ttmemory import telemetry

    class JsonLinesExporter(SpanExporter):
        def __init__(self, path: str) -> None:
            self.path = path

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            with open(self.path, "a") as out:
                for span in spans:
                    out.write(json.dumps(json.loads(span.to_json())) + "\n")
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(JsonLinesExporter(os.environ["TTM_SPANS_FILE"]))
    )
    telemetry.configure(tracer_provider=provider)
if os.environ.get("TTM_PROMETHEUS"):
    from ttmemory.telemetry import prometheus

    prometheus.install()
