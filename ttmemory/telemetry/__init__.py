"""Traces, metrics and log context on the OpenTelemetry API alone (a no-op until an SDK is set).

ttmemory depends on ``opentelemetry-api`` only: the project that installs an SDK (or the
Prometheus bridge in ``ttmemory.telemetry.prometheus``) decides where spans and metrics go.
Every public memory operation is one span named after the GenAI semantic conventions for memory
(``search_memory facts``, ``create_memory messages``...) with ``gen_ai.operation.name`` and the
``gen_ai.memory.*`` attributes that are defined there; embedder and LLM calls, lock waits and
Celery jobs are child spans. No span, metric or log attribute ever carries message, fact or
query text: the query only when ``TELEMETRY_CAPTURE_QUERY`` is on, the namespace only when
``TELEMETRY_NAMESPACE_ATTRIBUTE`` is (metrics stay low-cardinality without it).

Backends and services call the helpers here (``operation``, ``embedding_call``, ``llm_call``,
``lock_wait``, ``count``, ``usage``); ``METRICS`` lists every instrument with its attributes, so
a dashboard can be checked against what the app exports (docs/observability.md).
"""

from __future__ import annotations

import contextvars
import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from django.core.signals import setting_changed
from django.dispatch import receiver
from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.metrics._internal import _ProxyMeterProvider  # the unset global's class
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ttmemory.conf import app_settings

__all__ = [
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
    "usage",
]

logger = logging.getLogger(__name__)

INSTRUMENTATION_NAME = "ttmemory"
F = TypeVar("F", bound=Callable[..., Any])

# Seconds: from a fast keyword recall (~1 ms) to a slow LLM call (tens of seconds).
LATENCY_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
)  # fmt: skip
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)


@dataclass(frozen=True)
class MetricSpec:
    """One instrument: its kind, unit, meaning and the attributes every sample carries.

    Prometheus names follow the OpenTelemetry-to-Prometheus rules: dots become underscores, the
    unit ``s`` adds ``_seconds``, a counter adds ``_total`` (``prometheus_name``).
    """

    name: str
    kind: str  # "counter", "updown" or "histogram"
    unit: str
    description: str
    attributes: tuple[str, ...]
    buckets: tuple[float, ...] | None = None

    @property
    def prometheus_name(self) -> str:
        base = self.name.replace(".", "_")
        if self.unit == "s":
            base += "_seconds"
        elif self.unit == "USD":
            base += "_usd"
        if self.kind == "counter":
            base += "_total"
        return base


_OP = ("gen_ai.operation.name", "ttmemory.operation", "error.type", "ttmemory.namespace")
_CALL = ("gen_ai.operation.name", "gen_ai.request.model", "ttmemory.purpose", "error.type")
_USAGE = ("gen_ai.request.model", "ttmemory.purpose", "ttmemory.namespace")

METRICS: dict[str, MetricSpec] = {
    spec.name: spec
    for spec in (
        MetricSpec("ttmemory.operation.duration", "histogram", "s",
                   "Duration of public memory operations", _OP, LATENCY_BUCKETS),
        MetricSpec("ttmemory.lock.wait.duration", "histogram", "s",
                   "Time spent waiting for a session lock",
                   ("ttmemory.lock.backend", "ttmemory.lock.outcome"), LATENCY_BUCKETS),
        MetricSpec("ttmemory.lock.timeouts", "counter", "{timeout}",
                   "Session lock waits that ran out (LockTimeout)", ("ttmemory.lock.backend",)),
        MetricSpec("ttmemory.lock.fallbacks", "counter", "{lock}",
                   "Writes that took the database lock because Redis was unreachable",
                   ("ttmemory.lock.backend",)),
        MetricSpec("ttmemory.recall.mode", "counter", "{recall}",
                   "Recalls by mode: hybrid, or keyword when the embedder failed",
                   ("ttmemory.recall.mode", "ttmemory.namespace")),
        MetricSpec("gen_ai.client.operation.duration", "histogram", "s",
                   "Duration of embedder and LLM calls", _CALL, LATENCY_BUCKETS),
        MetricSpec("gen_ai.client.token.usage", "histogram", "{token}",
                   "Tokens per embedder or LLM call",
                   ("gen_ai.operation.name", "gen_ai.request.model", "gen_ai.token.type",
                    "ttmemory.purpose"), TOKEN_BUCKETS),
        MetricSpec("ttmemory.embedder.errors", "counter", "{error}",
                   "Embedder calls that failed (recall fell back to keywords)",
                   ("ttmemory.embedder.backend",)),
        MetricSpec("ttmemory.embedder.skipped", "counter", "{call}",
                   "Embedder calls skipped while its circuit breaker was open",
                   ("ttmemory.embedder.backend",)),
        MetricSpec("ttmemory.embedder.breaker.open", "updown", "{breaker}",
                   "1 while the embedder's circuit breaker is open in a process",
                   ("ttmemory.embedder.backend",)),
        MetricSpec("ttmemory.llm.errors", "counter", "{error}",
                   "LLM calls that failed", ("gen_ai.request.model", "ttmemory.purpose")),
        MetricSpec("ttmemory.events.dropped", "counter", "{event}",
                   "Events dropped by an observer (queue full or not delivered at close)",
                   ("ttmemory.observer",)),
        MetricSpec("ttmemory.events.failures", "counter", "{event}",
                   "Event observer failures", ("ttmemory.observer",)),
        MetricSpec("ttmemory.webhook.deliveries", "counter", "{event}",
                   "Webhook outcomes: sent, failed (gave up), retried, dropped, tasked (to Celery)",
                   ("ttmemory.outcome",)),
        MetricSpec("ttmemory.job.queue.lag", "histogram", "s",
                   "Time from queueing a Celery job to a worker starting it",
                   ("ttmemory.job",), LATENCY_BUCKETS),
        MetricSpec("ttmemory.job.duration", "histogram", "s",
                   "Duration of background jobs in a Celery worker",
                   ("ttmemory.job", "error.type"), LATENCY_BUCKETS),
        MetricSpec("ttmemory.tokens", "counter", "{token}",
                   "Tokens recorded in the cost ledger, by purpose (extract, summarise, embed)",
                   (*_USAGE, "gen_ai.token.type")),
        MetricSpec("ttmemory.cost", "counter", "USD",
                   "Spend recorded in the cost ledger, priced by TELEMETRY_MODEL_PRICES", _USAGE),
    )
}  # fmt: skip


# -- providers -----------------------------------------------------------------------------------

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
def _span(name: str, **options: Any) -> Iterator[Span]:
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
        labels["ttmemory.namespace"] = _log_context.get()[0]  # the current operation's
    return labels


# -- log context ---------------------------------------------------------------------------------

_log_context: contextvars.ContextVar[tuple[str | None, int | None]] = contextvars.ContextVar(
    "ttmemory_log_context", default=(None, None)
)
_factory_installed = False


@contextmanager
def log_context(*, namespace: str | None, session_id: int | None) -> Iterator[None]:
    """Every ttmemory log record made in the body carries ``namespace`` and ``session_id``."""
    token = _log_context.set((namespace, session_id))
    try:
        yield
    finally:
        _log_context.reset(token)


def install_log_context() -> None:
    """Give every ``ttmemory.*`` log record ``namespace`` and ``session_id`` attributes.

    Wraps the current log record factory once (``AppConfig.ready``): records of other loggers
    are untouched; ttmemory's carry the operation's namespace and session id (None outside an
    operation), so a formatter may use ``%(namespace)s`` and a JSON formatter sees both keys.
    """
    global _factory_installed
    if _factory_installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        log_record = previous(*args, **kwargs)
        if log_record.name.startswith("ttmemory") or log_record.name.startswith("celery"):
            namespace, session_id = _log_context.get()
            log_record.namespace = namespace
            log_record.session_id = session_id
        return log_record

    logging.setLogRecordFactory(factory)
    _factory_installed = True


# -- memory operations ---------------------------------------------------------------------------


def operation(
    name: str,
    store: str,
    *,
    describe: Callable[[Any], Mapping[str, Any]] | None = None,
) -> Callable[[F], F]:
    """Wrap a public service or selector: one span, one latency sample, the log context.

    ``name`` is the GenAI ``gen_ai.operation.name`` (``search_memory``, ``create_memory``,
    ``update_memory``, ``upsert_memory``, ``delete_memory``, ``create_memory_store``,
    ``delete_memory_store``); ``store`` names the memory store (``facts``, ``messages``,
    ``snapshots``, ``profiles``, ``sessions``, ``namespace``...). A ``fact_id`` argument is
    ``gen_ai.memory.record.id``.
    ``describe(result)`` adds content-free attributes from the result (a record count).
    """

    def decorate(func: F) -> F:
        function = func.__name__

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            namespace, session_id = _scope(kwargs)
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": name,
                "gen_ai.memory.store.name": store,
                "ttmemory.operation": function,
            }
            if session_id is not None:
                attributes["gen_ai.conversation.id"] = str(session_id)
            record_id = kwargs.get("fact_id")
            if isinstance(record_id, int):
                attributes["gen_ai.memory.record.id"] = str(record_id)
            if namespace and app_settings.TELEMETRY_NAMESPACE_ATTRIBUTE:
                attributes["gen_ai.memory.store.id"] = namespace
                attributes["ttmemory.namespace"] = namespace
            query = kwargs.get("query")
            if isinstance(query, str) and app_settings.TELEMETRY_CAPTURE_QUERY:
                attributes["gen_ai.memory.query.text"] = query
            started = time.perf_counter()
            error = ""
            with (
                log_context(namespace=namespace, session_id=session_id),
                _span(
                    f"{name} {store}",
                    kind=SpanKind.INTERNAL,
                    attributes=attributes,
                ) as span,
            ):
                try:
                    result = func(*args, **kwargs)
                except BaseException as exc:
                    error = type(exc).__name__
                    _fail(span, error)
                    raise
                finally:
                    record(
                        "ttmemory.operation.duration",
                        time.perf_counter() - started,
                        **{
                            "gen_ai.operation.name": name,
                            "ttmemory.operation": function,
                            "error.type": error,
                            "ttmemory.namespace": namespace,
                        },
                    )
                if describe is not None:
                    try:
                        span.set_attributes(dict(describe(result)))
                    except Exception:
                        logger.debug("ttmemory telemetry: describe failed", exc_info=True)
                if session_id is None and store == "sessions":
                    opened = getattr(result, "pk", None)
                    if isinstance(opened, int):
                        span.set_attribute("gen_ai.conversation.id", str(opened))
                return result

        return cast(F, run)  # the same signature (and overloads) as ``func``

    return decorate


def _scope(kwargs: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """The namespace and session id of a call, from ``session=`` or ``namespace=``."""
    session = kwargs.get("session")
    if session is not None:
        namespace = getattr(session, "namespace", None)
        session_id = getattr(session, "pk", None)
        return (
            namespace if isinstance(namespace, str) else None,
            session_id if isinstance(session_id, int) else None,
        )
    namespace = kwargs.get("namespace")
    return (namespace if isinstance(namespace, str) else None), None


def _fail(span: Span, error: str) -> None:
    span.set_attribute("error.type", error)
    span.set_status(Status(StatusCode.ERROR, error))


def records(count_of: Callable[[Any], int]) -> Callable[[Any], Mapping[str, Any]]:
    """A ``describe`` giving ``gen_ai.memory.record.count`` from the result."""

    def describe(result: Any) -> Mapping[str, Any]:
        return {"gen_ai.memory.record.count": int(count_of(result))}

    return describe


# -- child spans ---------------------------------------------------------------------------------


@contextmanager
def embedding_call(*, backend: str, model: str, inputs: int) -> Iterator[Span]:
    """A child span and latency sample around one embedder call (``embeddings``)."""
    with _call_span(
        "embeddings",
        model,
        purpose="embed",
        attributes={"ttmemory.embedder.backend": backend, "ttmemory.embedding.inputs": inputs},
    ) as span:
        yield span


@contextmanager
def llm_call(*, model: str, purpose: str) -> Iterator[Span]:
    """A child span and latency sample around one LLM call (``chat``), for ``purpose``."""
    with _call_span("chat", model, purpose=purpose, attributes={}) as span:
        yield span


@contextmanager
def _call_span(
    operation_name: str, model: str, *, purpose: str, attributes: dict[str, Any]
) -> Iterator[Span]:
    started = time.perf_counter()
    error = ""
    with _span(
        f"{operation_name} {model}",
        kind=SpanKind.CLIENT,
        attributes={
            "gen_ai.operation.name": operation_name,
            "gen_ai.request.model": model,
            "ttmemory.purpose": purpose,
            **attributes,
        },
    ) as span:
        try:
            yield span
        except BaseException as exc:
            error = type(exc).__name__
            _fail(span, error)
            raise
        finally:
            record(
                "gen_ai.client.operation.duration",
                time.perf_counter() - started,
                **{
                    "gen_ai.operation.name": operation_name,
                    "gen_ai.request.model": model,
                    "ttmemory.purpose": purpose,
                    "error.type": error,
                },
            )


@contextmanager
def lock_wait(*, backend: str) -> Iterator[None]:
    """A span and a wait sample around taking a session lock; a timeout is counted too."""
    started = time.perf_counter()
    outcome = "acquired"
    with _span(
        "ttmemory.lock.wait",
        attributes={"ttmemory.lock.backend": backend},
    ) as span:
        try:
            yield
        except BaseException as exc:
            outcome = "timeout" if type(exc).__name__ == "LockTimeout" else "error"
            _fail(span, type(exc).__name__)
            if outcome == "timeout":
                count("ttmemory.lock.timeouts", **{"ttmemory.lock.backend": backend})
            raise
        finally:
            span.set_attribute("ttmemory.lock.outcome", outcome)
            record(
                "ttmemory.lock.wait.duration",
                time.perf_counter() - started,
                **{"ttmemory.lock.backend": backend, "ttmemory.lock.outcome": outcome},
            )


def usage(
    *,
    namespace: str,
    purpose: str,
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
    operation_name: str = "",
) -> None:
    """Tokens (and their price, ``TELEMETRY_MODEL_PRICES``) of one call recorded in the ledger."""
    labels = {
        "gen_ai.request.model": model,
        "ttmemory.purpose": purpose,
        "ttmemory.namespace": namespace,
    }
    op = operation_name or ("embeddings" if purpose == "embed" else "chat")
    for token_type, tokens in (("input", prompt_tokens), ("output", completion_tokens)):
        if tokens > 0:
            count("ttmemory.tokens", tokens, **labels, **{"gen_ai.token.type": token_type})
            record(
                "gen_ai.client.token.usage",
                tokens,
                **{
                    "gen_ai.operation.name": op,
                    "gen_ai.request.model": model,
                    "gen_ai.token.type": token_type,
                    "ttmemory.purpose": purpose,
                },
            )
    price = app_settings.TELEMETRY_MODEL_PRICES.get(model)
    if price:
        cost = (
            prompt_tokens * price.get("input", 0.0) + completion_tokens * price.get("output", 0.0)
        ) / 1_000_000
        if cost > 0:
            count("ttmemory.cost", cost, **labels)


# -- Celery jobs ---------------------------------------------------------------------------------

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
    started = time.perf_counter()
    error = ""
    try:
        with _span(
            f"ttmemory.job {job}",
            kind=SpanKind.CONSUMER,
            attributes={"ttmemory.job": job},
        ) as span:
            try:
                yield span
            except BaseException as exc:
                error = type(exc).__name__
                _fail(span, error)
                raise
    finally:
        record(
            "ttmemory.job.duration",
            time.perf_counter() - started,
            **{"ttmemory.job": job, "error.type": error},
        )
        otel_context.detach(token)


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    # Instruments are cached per provider; a settings change in tests may swap providers.
    if setting == "TTMEMORY":
        _instruments.clear()
