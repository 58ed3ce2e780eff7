"""Where ttmemory's spans and samples go: the providers, a span opened, a sample recorded.

ttmemory depends on ``opentelemetry-api`` only: until the project installs an SDK (or the
Prometheus bridge in ``ttmemory.telemetry.prometheus``) every helper here is a no-op at no cost.
``configure`` sends ttmemory's telemetry to providers of its own instead of the global ones.
Every sample carries exactly its spec's attributes (``catalogue.METRICS``); ``count`` and
``record`` never raise.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver
from opentelemetry import metrics, trace
from opentelemetry.metrics._internal import _ProxyMeterProvider  # the unset global's class
from opentelemetry.trace import Span, Status, StatusCode

from ttmemory.conf import app_settings
from ttmemory.telemetry.catalogue import METRICS
from ttmemory.telemetry.logs import current_scope

logger = logging.getLogger(__name__)

INSTRUMENTATION_NAME = "ttmemory"

_tracer_provider: trace.TracerProvider | None = None
_meter_provider: metrics.MeterProvider | None = None
_instruments: dict[str, Any] = {}
_tracers: dict[int, trace.Tracer] = {}
# Providers of the API alone: a no-op until the project sets an SDK's.
_NO_TRACES = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
_NO_METRICS = (metrics.NoOpMeterProvider, _ProxyMeterProvider)


def configure(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
) -> None:
    """Send ttmemory's spans and metrics to these providers instead of the global ones.

    For tests and for a process that keeps ttmemory's telemetry apart; ``None`` returns to the
    global providers (``opentelemetry.trace.set_tracer_provider``...), which is the usual way.
    """
    global _tracer_provider, _meter_provider
    _tracer_provider, _meter_provider = tracer_provider, meter_provider
    _instruments.clear()
    _tracers.clear()


def _tracer() -> trace.Tracer | None:
    """ttmemory's tracer, or None while no SDK is installed (the API alone records nothing)."""
    provider = _tracer_provider or trace.get_tracer_provider()
    if isinstance(provider, _NO_TRACES):
        return None
    tracer = _tracers.get(id(provider))
    if tracer is None:
        tracer = _tracers[id(provider)] = provider.get_tracer(INSTRUMENTATION_NAME)
    return tracer


def _metering() -> bool:
    """Whether a meter provider that records is set (the API alone records nothing)."""
    return _meter_provider is not None or not isinstance(metrics.get_meter_provider(), _NO_METRICS)


@contextmanager
def start_span(name: str, **options: Any) -> Iterator[Span]:
    """``start_as_current_span``; a non-recording span, at no cost, while no SDK is set."""
    tracer = _tracer()
    if tracer is None:
        yield trace.INVALID_SPAN
        return
    with tracer.start_as_current_span(
        name, record_exception=False, set_status_on_exception=False, **options
    ) as span:
        yield span


def _instrument(name: str) -> Any:
    instrument = _instruments.get(name)
    if instrument is None:
        spec = METRICS[name]
        meter = (_meter_provider or metrics.get_meter_provider()).get_meter(INSTRUMENTATION_NAME)
        if spec.kind == "counter":
            instrument = meter.create_counter(name, unit=spec.unit, description=spec.description)
        elif spec.kind == "updown":
            instrument = meter.create_up_down_counter(
                name, unit=spec.unit, description=spec.description
            )
        else:
            instrument = meter.create_histogram(
                name,
                unit=spec.unit,
                description=spec.description,
                explicit_bucket_boundaries_advisory=list(spec.buckets or ()),
            )
        _instruments[name] = instrument
    return instrument


def _attributes(name: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    # Every sample carries exactly its spec's attributes ("" when unknown): a Prometheus series
    # needs one label set, and nothing outside the spec (content) can slip into a metric.
    return {key: _plain(attributes.get(key)) for key in METRICS[name].attributes}


def _plain(value: Any) -> str | int | float | bool:
    if value is None:
        return ""
    if isinstance(value, str | int | float | bool):
        return value
    return str(value)


def count(name: str, value: float = 1, /, **attributes: Any) -> None:
    """Add ``value`` to counter ``name`` (a key of ``METRICS``); never raises."""
    if not _metering():
        return
    try:
        _instrument(name).add(value, _attributes(name, _labels(attributes)))
    except Exception:  # telemetry never breaks a write
        logger.debug("ttmemory telemetry: %s not recorded", name, exc_info=True)


def record(name: str, value: float, /, **attributes: Any) -> None:
    """Record ``value`` in histogram ``name`` (a key of ``METRICS``); never raises."""
    if not _metering():
        return
    try:
        _instrument(name).record(value, _attributes(name, _labels(attributes)))
    except Exception:
        logger.debug("ttmemory telemetry: %s not recorded", name, exc_info=True)


def _labels(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The attributes with the namespace blanked unless ``TELEMETRY_NAMESPACE_ATTRIBUTE``."""
    labels = dict(attributes)
    if not app_settings.TELEMETRY_NAMESPACE_ATTRIBUTE:
        labels["ttmemory.namespace"] = ""
    elif not labels.get("ttmemory.namespace"):
        labels["ttmemory.namespace"] = current_scope()[0]  # the current operation's
    return labels


class timed_span:
    """``start_span``, and the time it took in histogram ``metric`` with ``labels`` and
    ``error.type``: the class name of what the body raised (which also marks the span failed),
    or "" when it returned.

    A class rather than a generator: it wraps every public memory operation, and one object
    with ``__enter__`` / ``__exit__`` costs less than a generator context manager in another.
    """

    __slots__ = ("_inner", "_labels", "_metric", "_name", "_options", "_span", "_started")

    def __init__(self, name: str, metric: str, labels: Mapping[str, Any], **options: Any) -> None:
        self._name = name
        self._metric = metric
        self._labels = labels
        self._options = options

    def __enter__(self) -> Span:
        self._started = time.perf_counter()
        tracer = _tracer()
        if tracer is None:
            self._inner: Any = None
            self._span: Span = trace.INVALID_SPAN
        else:
            self._inner = tracer.start_as_current_span(
                self._name, record_exception=False, set_status_on_exception=False, **self._options
            )
            self._span = self._inner.__enter__()
        return self._span

    def __exit__(self, kind: Any, exc: BaseException | None, traceback: Any) -> None:
        error = ""
        try:
            if kind is not None:
                error = kind.__name__
                mark_failed(self._span, error)
            if self._inner is not None:
                self._inner.__exit__(kind, exc, traceback)
        finally:
            elapsed = time.perf_counter() - self._started
            record(self._metric, elapsed, **self._labels, **{"error.type": error})


def mark_failed(span: Span, error: str) -> None:
    """Mark ``span`` as failed with the error's class name."""
    span.set_attribute("error.type", error)
    span.set_status(Status(StatusCode.ERROR, error))


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    # Instruments are cached per provider; a settings change in tests may swap providers.
    if setting == "TTMEMORY":
        _instruments.clear()
