"""The catalogue of ttmemory's metrics: each instrument's kind, unit, meaning and attributes.

``METRICS`` lists every instrument ttmemory records, so a dashboard can be checked against what
the app exports (docs/observability.md), and ``MetricSpec.prometheus_name`` gives the name each
becomes in Prometheus.
"""

from __future__ import annotations

from dataclasses import dataclass

# Seconds: from a fast keyword recall to a slow LLM call.
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
