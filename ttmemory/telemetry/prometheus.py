"""ttmemory's metrics in ``prometheus_client``, multiprocess-safe: a view for ``/metrics``.

An OpenTelemetry SDK keeps its metrics in each process, so behind gunicorn's workers a scrape
of ``/metrics`` would see one worker's numbers; the Celery worker's would never be seen at all.
``prometheus_client``'s multiprocess mode is the known-good answer: with
``PROMETHEUS_MULTIPROC_DIR`` set (an empty directory, shared by the web workers and the Celery
worker of one host, emptied at deploy), every process writes its samples to memory-mapped files
there and ``metrics_view`` sums them. ``PrometheusMeterProvider`` is an OpenTelemetry
``MeterProvider`` whose instruments write straight to ``prometheus_client``: install it with
``install()`` (the demo's settings do) and ttmemory's instruments (``ttmemory.telemetry.METRICS``)
become Prometheus metrics named by ``MetricSpec.prometheus_name``. Instruments of other
libraries get no-ops from it: use an OpenTelemetry SDK for those.

The metrics live in ttmemory's own ``CollectorRegistry`` (``registry()``), never in
``prometheus_client.REGISTRY``: the host project's metrics do not show on ttmemory's
``/metrics``, nor ttmemory's on the host's. Rendering is ``prometheus_client``'s
(``generate_latest``); only the protection of the view (``METRICS_*`` settings) is ttmemory's.

Needs the ``prometheus`` extra (``prometheus-client``). gunicorn: call ``child_exit`` from the
config's ``child_exit`` hook so a dead worker's live gauges are dropped.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import threading
from collections.abc import Sequence
from typing import Any

from django.http import HttpRequest, HttpResponse
from opentelemetry import metrics
from opentelemetry.context import Context
from opentelemetry.metrics import (
    Counter,
    Histogram,
    Meter,
    MeterProvider,
    NoOpCounter,
    NoOpHistogram,
    NoOpMeter,
    NoOpUpDownCounter,
    UpDownCounter,
)
from opentelemetry.util.types import Attributes
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)
from prometheus_client import Counter as PromCounter
from prometheus_client import Gauge as PromGauge
from prometheus_client import Histogram as PromHistogram
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from ttmemory.conf import app_settings
from ttmemory.telemetry.catalogue import METRICS, MetricSpec

__all__ = ["PrometheusMeterProvider", "child_exit", "install", "metrics_view", "registry"]

# ttmemory's own registry, not prometheus_client's global REGISTRY: a host project's metrics
# (and its /metrics) stay apart from ttmemory's, whichever of the two a scrape reads.
_REGISTRY = CollectorRegistry(auto_describe=True)
_metrics: dict[str, Any] = {}
_guard = threading.Lock()


def _label(attribute: str) -> str:
    return attribute.replace(".", "_")


def _prometheus_metric(spec: MetricSpec) -> Any:
    """The ``prometheus_client`` metric of ``spec``, made once per process."""
    metric = _metrics.get(spec.name)  # made already: no lock to take (every append records)
    if metric is not None:
        return metric
    with _guard:
        metric = _metrics.get(spec.name)
        if metric is None:
            labels = [_label(a) for a in spec.attributes]
            # prometheus_client adds _total itself and wants the base name.
            name = spec.prometheus_name.removesuffix("_total")
            if spec.kind == "counter":
                metric = PromCounter(name, spec.description, labels, registry=_REGISTRY)
            elif spec.kind == "updown":
                # livesum: the sum over processes still running (a dead worker's breaker is gone)
                metric = PromGauge(
                    name,
                    spec.description,
                    labels,
                    multiprocess_mode="livesum",
                    registry=_REGISTRY,
                )
            else:
                metric = PromHistogram(
                    name,
                    spec.description,
                    labels,
                    buckets=spec.buckets or PromHistogram.DEFAULT_BUCKETS,
                    registry=_REGISTRY,
                )
            _metrics[spec.name] = metric
        return metric


def _values(spec: MetricSpec, attributes: Attributes) -> list[str]:
    given = attributes or {}
    return [str(given.get(a, "")) for a in spec.attributes]


# Children by metric and label values: ``labels()`` checks and converts its values and takes
# the metric's lock on every call; a metric's children are never removed here, so the child
# once given is the one it would give again.
_children: dict[tuple[str, tuple[str, ...]], Any] = {}
_MAX_CHILDREN = 10_000  # label sets kept (a namespace label can make many): then start again


def _child(spec: MetricSpec, attributes: Attributes) -> Any:
    values = tuple(_values(spec, attributes))
    key = (spec.name, values)
    child = _children.get(key)
    if child is None:
        child = _prometheus_metric(spec).labels(*values)
        if len(_children) >= _MAX_CHILDREN:
            _children.clear()
        _children[key] = child
    return child


class _Instrument:
    """An OpenTelemetry no-op instrument that feeds the prometheus-client metric of ``spec``."""

    def __init__(self, spec: MetricSpec) -> None:
        super().__init__(spec.name, unit=spec.unit, description=spec.description)  # type: ignore[call-arg]
        self._spec = spec


class _Adds(_Instrument):
    def add(
        self, amount: int | float, attributes: Attributes = None, context: Context | None = None
    ) -> None:
        _child(self._spec, attributes).inc(amount)


class _Counter(_Adds, NoOpCounter):
    pass


class _UpDownCounter(_Adds, NoOpUpDownCounter):
    pass


class _Histogram(_Instrument, NoOpHistogram):
    def record(
        self, amount: int | float, attributes: Attributes = None, context: Context | None = None
    ) -> None:
        _child(self._spec, attributes).observe(amount)


class _Meter(NoOpMeter):
    """ttmemory's instruments become Prometheus metrics; any other instrument is a no-op."""

    def create_counter(self, name: str, unit: str = "", description: str = "") -> Counter:
        spec = METRICS.get(name)
        if spec is None or spec.kind != "counter":
            return super().create_counter(name, unit, description)
        return _Counter(spec)

    def create_up_down_counter(
        self, name: str, unit: str = "", description: str = ""
    ) -> UpDownCounter:
        spec = METRICS.get(name)
        if spec is None or spec.kind != "updown":
            return super().create_up_down_counter(name, unit, description)
        return _UpDownCounter(spec)

    def create_histogram(
        self,
        name: str,
        unit: str = "",
        description: str = "",
        *,
        explicit_bucket_boundaries_advisory: Sequence[float] | None = None,
    ) -> Histogram:
        spec = METRICS.get(name)
        if spec is None or spec.kind != "histogram":
            return super().create_histogram(
                name,
                unit,
                description,
                explicit_bucket_boundaries_advisory=explicit_bucket_boundaries_advisory,
            )
        return _Histogram(spec)


class PrometheusMeterProvider(MeterProvider):
    """An OpenTelemetry ``MeterProvider`` writing ttmemory's instruments to prometheus_client."""

    def get_meter(
        self,
        name: str,
        version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes | None = None,
    ) -> Meter:
        return _Meter(name, version=version, schema_url=schema_url)


def install() -> PrometheusMeterProvider:
    """Make ``PrometheusMeterProvider`` the global meter provider (once per process)."""
    provider = PrometheusMeterProvider()
    metrics.set_meter_provider(provider)
    return provider


def registry() -> CollectorRegistry:
    """What a scrape sees: ttmemory's metrics only, summed over every process in multiprocess
    mode, else this process's (ttmemory's own ``CollectorRegistry``)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        collected = CollectorRegistry()
        collected.register(_OwnMultiProcessCollector())
        return collected
    return _REGISTRY


class _OwnMultiProcessCollector(Collector):
    """``MultiProcessCollector`` limited to ttmemory's metrics: the directory is shared with
    whatever else the host project records in multiprocess mode."""

    def __init__(self) -> None:
        self._all = multiprocess.MultiProcessCollector(None)

    def collect(self) -> list[Metric]:
        own = {spec.prometheus_name.removesuffix("_total") for spec in METRICS.values()}
        return [metric for metric in self._all.collect() if metric.name in own]


def metrics_view(request: HttpRequest) -> HttpResponse:
    """``/metrics`` in Prometheus' text format, closed by default.

    404 unless ``METRICS_ENABLED``; then only for a request bearing ``METRICS_TOKEN``
    (``Authorization: Bearer <token>``) or coming from ``METRICS_ALLOWED_NETWORKS`` (matched
    on ``REMOTE_ADDR``: behind a proxy, list the proxy's network or use the token); 403
    otherwise, and always when neither is configured.
    """
    if not app_settings.METRICS_ENABLED:
        return HttpResponse("Not found.\n", status=404, content_type="text/plain")
    if not metrics_allowed(request):
        return HttpResponse(
            "Forbidden: a METRICS_TOKEN bearer token or an address in "
            "METRICS_ALLOWED_NETWORKS is required.\n",
            status=403,
            content_type="text/plain",
        )
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)


def metrics_allowed(request: HttpRequest) -> bool:
    """Whether ``request`` bears the metrics token or comes from an allowed network."""
    token = app_settings.METRICS_TOKEN
    if token:
        scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode("utf-8", "surrogatepass"), token.encode("utf-8")
        ):
            return True
    networks = app_settings.METRICS_ALLOWED_NETWORKS
    if networks:
        try:
            address = ipaddress.ip_address(str(request.META.get("REMOTE_ADDR", "")))
        except ValueError:
            return False
        return any(address in ipaddress.ip_network(net, strict=False) for net in networks)
    return False


def child_exit(server: Any, worker: Any) -> None:
    """gunicorn's ``child_exit`` hook: forget a dead worker's live gauges."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(worker.pid)
