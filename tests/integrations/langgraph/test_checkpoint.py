"""TTMemorySaver: LangGraph's own conformance suite, encryption at rest, thread binding."""

from __future__ import annotations

import io
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


def test_key_rotation_re_encrypts_checkpoints_writes_and_store_values(
    db: Any, settings: Any
) -> None:
    from django.core.management import call_command

    from tests.management.test_rotate_keys import key_ids
    from ttmemory.crypto import generate_key
    from ttmemory.integrations.langgraph import TTMemoryStore
    from ttmemory.models import GraphCheckpoint, GraphCheckpointWrite, GraphStoreItem

    old = settings.TTMEMORY["ENCRYPTION_KEYS"][0]
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [old]}
    saver = TTMemorySaver(namespace="user-rot")
    config = async_to_sync(_put_one)(saver)
    saver.put_writes(config, [("messages", ["hello"]), ("__error__", "boom")], "task-1")
    TTMemoryStore(namespace="user-rot").put(("prefs",), "tea", {"text": "green tea"})
    new = generate_key("lgrot")
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [new, old]}
    call_command("ttmemory_rotate_keys", stdout=io.StringIO())
    assert set(key_ids(GraphCheckpoint, "checkpoint")) == {"lgrot"}
    assert set(key_ids(GraphCheckpoint, "metadata")) == {"lgrot"}
    assert set(key_ids(GraphCheckpointWrite, "value")) == {"lgrot"}
    assert set(key_ids(GraphStoreItem, "value")) == {"lgrot"}
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [new]}  # the old key goes
    found = saver.get_tuple(config)
    assert found is not None and found.checkpoint["channel_values"] == {"messages": ["hi"]}
    assert sorted(w[1:] for w in found.pending_writes) == [
        ("__error__", "boom"),
        ("messages", ["hello"]),
    ]
    assert TTMemoryStore(namespace="user-rot").get(("prefs",), "tea").value == {"text": "green tea"}


async def _put_one(saver: TTMemorySaver) -> Any:
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": ["hi"]}
    checkpoint["channel_versions"] = {"messages": 1}
    return await saver.aput(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
        checkpoint,
        {"source": "input", "step": -1, "parents": {}},
        {"messages": 1},
    )
