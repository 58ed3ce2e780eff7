"""Spans, metrics and log context of memory operations, through the SDK's in-memory exporters."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.conftest import user
from tests.learning.test_learning import scripted_llm  # noqa: F401  (fixture)
from tests.longterm.test_facts import BrokenEmbedder, use_broken_embedder
from tests.telemetry.conftest import Telemetry
from ttmemory import memory, telemetry
from ttmemory.longterm.embedding import reset_health

NS = "otel-user"
MARKER = "zq7marker"  # in a message, a fact and a query: it must appear nowhere in telemetry


@pytest.fixture(autouse=True)
def _closed_breaker() -> Any:
    reset_health()
    yield
    reset_health()


def _everything(otel: Telemetry, records: list[logging.LogRecord]) -> list[str]:
    """Every string telemetry produced: span names, attributes, events, metric attributes, logs."""
    seen: list[str] = []
    for span in otel.finished():
        seen.append(span.name)
        seen.extend(f"{k}={v}" for k, v in (span.attributes or {}).items())
        for event in span.events:
            seen.append(event.name)
            seen.extend(f"{k}={v}" for k, v in (event.attributes or {}).items())
        if span.status.description:
            seen.append(span.status.description)
    for name, point in otel.all_metric_points():
        seen.append(name)
        seen.extend(f"{k}={v}" for k, v in point.attributes.items())
    for log in records:
        seen.append(log.getMessage())
        seen.extend(f"{k}={v}" for k, v in vars(log).items() if k not in ("msg", "args"))
    return seen


def _run_operations() -> Any:
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add(session=session, message=user(f"my locker code is {MARKER} ok"))
    memory.fact_remember(namespace=NS, text=f"The user's locker code is {MARKER}")
    result = memory.fact_recall(namespace=NS, query=f"locker {MARKER}", k=3)
    memory.context_window(session=session, max_tokens=500)
    memory.message_search(namespace=NS, query=f"locker {MARKER}")
    return session, result


def test_memory_operations_are_genai_memory_spans_with_child_spans(
    db: Any, otel: Telemetry
) -> None:
    session, result = _run_operations()
    assert result.hits

    opened = otel.named("create_memory_store sessions")[0]
    assert opened.attributes["gen_ai.operation.name"] == "create_memory_store"
    assert opened.attributes["gen_ai.conversation.id"] == str(session.pk)

    added = otel.named("create_memory messages")[0]
    assert added.attributes["gen_ai.operation.name"] == "create_memory"
    assert added.attributes["ttmemory.operation"] == "message_add"
    assert added.attributes["gen_ai.conversation.id"] == str(session.pk)
    # The lock wait is a child of the append.
    waits = [s for s in otel.named("ttmemory.lock.wait") if s.parent is not None]
    assert any(w.parent.span_id == added.context.span_id for w in waits)
    assert all(w.attributes["ttmemory.lock.outcome"] == "acquired" for w in waits)

    remembered = otel.named("upsert_memory facts")[0]
    recalled = otel.named("search_memory facts")[0]
    assert recalled.attributes["gen_ai.memory.record.count"] == len(result.hits)
    assert recalled.attributes["ttmemory.recall.mode"] == "hybrid"
    # The embedder call is a child of both the write and the recall.
    embeds = otel.named(f"embeddings {BrokenEmbedder.__mro__[1].__name__}") or [
        s for s in otel.finished() if s.attributes.get("gen_ai.operation.name") == "embeddings"
    ]
    parents = {e.parent.span_id for e in embeds if e.parent is not None}
    assert remembered.context.span_id in parents and recalled.context.span_id in parents
    assert all(e.context.trace_id in {remembered.context.trace_id, recalled.context.trace_id}
               or e.parent is None for e in embeds)  # fmt: skip

    fact = memory.fact_list(namespace=NS)[0]
    memory.fact_forget(namespace=NS, fact_id=fact.pk)
    forgot = otel.named("delete_memory facts")[0]
    assert forgot.attributes["gen_ai.memory.record.id"] == str(fact.pk)

    # Nothing names the namespace unless opted in.
    assert all("gen_ai.memory.store.id" not in (s.attributes or {}) for s in otel.finished())

    durations = otel.points("ttmemory.operation.duration")
    operations = {p.attributes["ttmemory.operation"] for p in durations}
    assert {"session_open", "message_add", "fact_remember", "fact_recall"} <= operations
    assert all(p.attributes["ttmemory.namespace"] == "" for p in durations)
    assert otel.total("ttmemory.recall.mode", **{"ttmemory.recall.mode": "hybrid"}) == 1
    assert otel.total("gen_ai.client.operation.duration", **{"ttmemory.purpose": "embed"}) >= 2
    assert otel.total("ttmemory.lock.wait.duration", **{"ttmemory.lock.outcome": "acquired"}) >= 1


def test_no_content_reaches_spans_metrics_or_logs(
    db: Any, otel: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    _run_operations()
    seen = _everything(otel, caplog.records)
    assert len(otel.finished()) >= 8
    assert not [text for text in seen if MARKER in text]


def test_the_query_is_on_the_span_only_when_opted_in(
    db: Any, otel: Telemetry, settings: Any
) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "TELEMETRY_CAPTURE_QUERY": True,
        "TELEMETRY_NAMESPACE_ATTRIBUTE": True,
    }
    _run_operations()
    recalled = otel.named("search_memory facts")[0]
    # The opt-in shows the leak check above would catch a query on a span.
    assert MARKER in recalled.attributes["gen_ai.memory.query.text"]
    assert recalled.attributes["gen_ai.memory.store.id"] == NS
    assert otel.total("ttmemory.recall.mode", **{"ttmemory.namespace": NS}) == 1


def test_embedder_failures_feed_fallback_error_and_breaker_metrics(
    db: Any, otel: Telemetry, settings: Any
) -> None:
    use_broken_embedder(settings)
    memory.fact_remember(namespace=NS, text="Ada's passport expires in March")
    memory.fact_recall(namespace=NS, query="passport", k=3)
    memory.fact_recall(namespace=NS, query="passport", k=3)

    backend = {"ttmemory.embedder.backend": "BrokenEmbedder"}
    assert otel.total("ttmemory.embedder.errors", **backend) == 1
    assert otel.total("ttmemory.embedder.skipped", **backend) == 2
    assert otel.total("ttmemory.embedder.breaker.open", **backend) == 1
    assert otel.total("ttmemory.recall.mode", **{"ttmemory.recall.mode": "keyword"}) == 2
    failed = [
        s for s in otel.finished() if s.attributes.get("gen_ai.operation.name") == "embeddings"
    ]
    assert [s.attributes["error.type"] for s in failed] == ["TimeoutError"]
    assert failed[0].parent is not None  # a child of the fact write


def test_llm_calls_are_child_spans_and_tokens_and_cost_are_metrics(
    db: Any,
    otel: Telemetry,
    settings: Any,
    scripted_llm: Any,  # noqa: F811
) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "TELEMETRY_MODEL_PRICES": {"gpt-test": {"input": 1000.0, "output": 2000.0}},
    }
    scripted_llm.reset(f'{{"facts": [{{"action": "ADD", "text": "The user likes {MARKER}"}}]}}')
    memory.facts_learn(namespace=NS, messages=[user(f"I like {MARKER}")])

    learn = otel.named("upsert_memory facts")
    chat = otel.named("chat gpt-test")
    assert len(chat) == 1 and chat[0].parent.span_id == learn[-1].context.span_id
    assert chat[0].attributes["ttmemory.purpose"] == "extract"
    input_tokens = chat[0].attributes["gen_ai.usage.input_tokens"]
    output_tokens = chat[0].attributes["gen_ai.usage.output_tokens"]
    assert input_tokens > 0
    purpose = {"ttmemory.purpose": "extract", "gen_ai.request.model": "gpt-test"}
    assert otel.total("ttmemory.tokens", **purpose, **{"gen_ai.token.type": "input"}) == (
        input_tokens
    )
    expected = (input_tokens * 1000.0 + output_tokens * 2000.0) / 1_000_000
    assert otel.total("ttmemory.cost", **purpose) == pytest.approx(expected)
    assert not [s for s in _everything(otel, []) if MARKER in s]


def test_a_failing_llm_is_a_failed_span_and_an_error_count(
    db: Any,
    otel: Telemetry,
    scripted_llm: Any,  # noqa: F811
) -> None:
    from ttmemory.exceptions import LLMError

    scripted_llm.reset(LLMError("vendor returned 500"))
    with pytest.raises(LLMError):
        memory.facts_learn(namespace=NS, messages=[user("I like jazz")])
    chat = otel.named("chat gpt-test")[0]
    assert chat.attributes["error.type"] == "LLMError"
    assert otel.named("upsert_memory facts")[0].attributes["error.type"] == "LLMError"
    assert otel.total("ttmemory.llm.errors", **{"ttmemory.purpose": "extract"}) == 1
    failed = otel.points("ttmemory.operation.duration")
    assert any(p.attributes["error.type"] == "LLMError" for p in failed)


def test_every_ttmemory_log_line_carries_namespace_and_session_id(
    db: Any, otel: Telemetry, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="ttmemory")
    use_broken_embedder(settings)
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add(session=session, message=user("hello"))
    memory.fact_remember(namespace=NS, text="Ada's passport expires in March")

    ours = [r for r in caplog.records if r.name.startswith("ttmemory")]
    warned = [r for r in ours if "embedder failed" in r.getMessage()]
    assert warned, [r.getMessage() for r in ours]
    assert all(hasattr(r, "namespace") and hasattr(r, "session_id") for r in ours)
    assert warned[0].namespace == NS and warned[0].session_id is None
    # Outside an operation the keys are there, empty.
    logging.getLogger("ttmemory.test").warning("outside")
    outside = caplog.records[-1]
    assert outside.namespace is None and outside.session_id is None


def test_a_lock_timeout_is_a_failed_wait_and_a_count(
    transactional_db: Any, otel: Telemetry, settings: Any
) -> None:
    import threading

    from ttmemory.backends.locks import session_lock
    from ttmemory.exceptions import LockTimeout

    settings.TTMEMORY = {**settings.TTMEMORY, "LOCK_TIMEOUT": 0.2}
    session = memory.session_open(namespace=NS, key="chat")
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        from django.db import connection

        try:
            with session_lock(session):
                held.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        with pytest.raises(LockTimeout):
            memory.message_add(session=session, message=user("blocked"))
    finally:
        release.set()
        thread.join()
    assert otel.total("ttmemory.lock.timeouts") == 1
    assert otel.total("ttmemory.lock.wait.duration", **{"ttmemory.lock.outcome": "timeout"}) == 1
    failed = [s for s in otel.named("ttmemory.lock.wait") if s.status.status_code.name == "ERROR"]
    assert len(failed) == 1 and failed[0].attributes["error.type"] == "LockTimeout"


def test_every_metric_spec_has_a_valid_prometheus_name() -> None:
    names = [spec.prometheus_name for spec in telemetry.METRICS.values()]
    assert len(set(names)) == len(names)
    assert all(name.replace("_", "").isalnum() for name in names)
