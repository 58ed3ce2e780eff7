"""Instrumenting ttmemory's own work: memory operations, embedder and LLM calls, lock waits, usage.

Every public memory operation is one span named after the GenAI semantic conventions for memory
(``search_memory facts``, ``create_memory messages``...) with ``gen_ai.operation.name`` and the
``gen_ai.memory.*`` attributes that are defined there; embedder and LLM calls and lock waits are
child spans. No span, metric or log attribute carries message, fact or query text: the query
only when ``TELEMETRY_CAPTURE_QUERY`` is on, the namespace only when
``TELEMETRY_NAMESPACE_ATTRIBUTE`` is (metrics stay low-cardinality without it).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from opentelemetry.trace import Span, SpanKind

from ttmemory.conf import app_settings
from ttmemory.telemetry.logs import log_context
from ttmemory.telemetry.recording import count, mark_failed, record, start_span, timed_span

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


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
            with (
                log_context(namespace=namespace, session_id=session_id),
                timed_span(
                    f"{name} {store}",
                    "ttmemory.operation.duration",
                    {
                        "gen_ai.operation.name": name,
                        "ttmemory.operation": function,
                        "ttmemory.namespace": namespace,
                    },
                    kind=SpanKind.INTERNAL,
                    attributes=attributes,
                ) as span,
            ):
                result = func(*args, **kwargs)
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
    labels = {
        "gen_ai.operation.name": operation_name,
        "gen_ai.request.model": model,
        "ttmemory.purpose": purpose,
    }
    with timed_span(
        f"{operation_name} {model}",
        "gen_ai.client.operation.duration",
        labels,
        kind=SpanKind.CLIENT,
        attributes={**labels, **attributes},
    ) as span:
        yield span


@contextmanager
def lock_wait(*, backend: str) -> Iterator[None]:
    """A span and a wait sample around taking a session lock; a timeout is counted too."""
    started = time.perf_counter()
    outcome = "acquired"
    with start_span(
        "ttmemory.lock.wait",
        attributes={"ttmemory.lock.backend": backend},
    ) as span:
        try:
            yield
        except BaseException as exc:
            outcome = "timeout" if type(exc).__name__ == "LockTimeout" else "error"
            mark_failed(span, type(exc).__name__)
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
