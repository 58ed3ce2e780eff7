"""An OpenTelemetry SDK with in-memory exporters, given to ttmemory for one test."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ttmemory import telemetry


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    tracer_provider: TracerProvider

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.finished() if span.name == name]

    def points(self, metric: str) -> list[Any]:
        """Every data point of ``metric`` collected now (cumulative)."""
        data = self.metrics.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for item in scope.metrics:
                    if item.name == metric:
                        found.extend(item.data.data_points)
        return found

    def total(self, metric: str, **attributes: Any) -> float:
        """Sum of a counter's points (or a histogram's counts) whose attributes match."""
        total = 0.0
        for point in self.points(metric):
            if all(point.attributes.get(k) == v for k, v in attributes.items()):
                total += getattr(point, "value", None) or getattr(point, "count", 0)
        return total

    def all_metric_points(self) -> list[tuple[str, Any]]:
        data = self.metrics.get_metrics_data()
        return [
            (item.name, point)
            for resource in (data.resource_metrics if data else [])
            for scope in resource.scope_metrics
            for item in scope.metrics
            for point in item.data.data_points
        ]


@pytest.fixture
def otel() -> Iterator[Telemetry]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    telemetry.configure(tracer_provider=tracer_provider, meter_provider=meter_provider)
    yield Telemetry(spans, reader, tracer_provider)
    telemetry.configure()
    meter_provider.shutdown()
    tracer_provider.shutdown()
