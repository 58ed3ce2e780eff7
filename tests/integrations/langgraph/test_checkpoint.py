"""TTMemorySaver: LangGraph's own conformance suite, encryption at rest, thread binding."""

from __future__ import annotations

import time
import uuid
from typing import Any

from asgiref.sync import async_to_sync
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import BASE_CAPABILITIES, EXTENDED_CAPABILITIES

from ttmemory.integrations.langgraph import TTMemorySaver


@checkpointer_test(name="TTMemorySaver")
async def ttmemory_saver() -> Any:
    yield TTMemorySaver(namespace=f"conformance-{uuid.uuid4().hex[:8]}")


def test_conformance_suite_passes(db: Any, capsys: Any) -> None:
    """langgraph-checkpoint-conformance: every base capability passes, and so do the extended
    ones the saver implements (copy_thread, prune, delete_for_runs)."""
    started = time.perf_counter()
    # async_to_sync runs the suite's event loop in another thread and brings each
    # sync_to_async(thread_sensitive=True) call back to this one: the test's connection.
    report = async_to_sync(validate)(ttmemory_saver)
    elapsed = time.perf_counter() - started
    report.print_report()
    print(f"conformance suite: {elapsed:.1f} s")
    failures = {
        name: result.failures for name, result in report.results.items() if result.passed is False
    }
    assert not failures, failures
    assert report.passed_all_base()
    for capability in BASE_CAPABILITIES | EXTENDED_CAPABILITIES:
        result = report.results[capability.value]
        assert result.detected and result.passed, (capability, result)
