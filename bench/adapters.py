"""The cost of the adapters over the core: async twins and the Agents SDK session.

Each pair runs alternately in one process and one event loop, on the same database connection:
the core side is the sync function timed inside Django's thread-sensitive executor thread
(where the twin runs it), the adapter side is the awaited call timed in the event loop, so the
difference is what the adapter adds (the thread hop, the item conversion). Medians in
microseconds. Everything is written in namespaces starting with ``bench-adapters-`` and erased.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connections

from bench.session_memory import sample_message
from ttmemory import memory
from ttmemory.aio import twin
from ttmemory.integrations.formats import from_responses_items
from ttmemory.integrations.openai_agents import TTMemorySession

PREFIX = "bench-adapters-"


@dataclass
class Row:
    operation: str
    core: str
    core_us: float
    adapter_us: float
    runs: int


def turn_items(n: int) -> list[dict[str, Any]]:
    """One agent turn as the SDK stores it: input, a tool call, its output, the answer."""
    return [
        {"role": "user", "content": sample_message(2 * n)["content"]},
        {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "lookup",
         "arguments": json.dumps({"order": 1000 + n}), "status": "completed"},
        {"type": "function_call_output", "call_id": f"call_{n}", "output": "ships Friday"},
        {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": sample_message(2 * n + 1)["content"],
                      "annotations": [], "logprobs": []}]},
    ]  # fmt: skip


async def _pair(
    operation: str,
    core_name: str,
    core: Callable[[int], Any],
    adapter: Callable[[int], Awaitable[Any]],
    runs: int,
) -> Row:
    """Median of ``core(i)`` timed in the executor thread and ``await adapter(i)`` timed in
    the loop, alternating so drift in the machine hits both."""

    def timed_core(i: int) -> float:
        start = time.perf_counter_ns()
        core(i)
        return (time.perf_counter_ns() - start) / 1000

    run_core = sync_to_async(timed_core, thread_sensitive=True)
    core_us: list[float] = []
    adapter_us: list[float] = []
    for i in range(runs):
        core_us.append(await run_core(i))
        start = time.perf_counter_ns()
        await adapter(i)
        adapter_us.append((time.perf_counter_ns() - start) / 1000)
    return Row(
        operation, core_name, statistics.median(core_us), statistics.median(adapter_us), runs
    )


async def _measure(runs: int, facts: int, progress: Callable[[str], None]) -> list[Row]:
    tag = uuid.uuid4().hex[:8]
    ns = f"{PREFIX}{tag}"
    rows = []
    core_chat = await memory.asession_open(namespace=ns, key="core")
    twin_chat = await memory.asession_open(namespace=ns, key="twin")

    progress("hop")
    noop_twin = twin(_noop)
    rows.append(
        await _pair(
            "twin of a no-op (the thread hop alone)",
            "the no-op called directly",
            lambda i: _noop(),
            lambda i: noop_twin(),
            runs,
        )
    )

    progress("message_add")
    rows.append(
        await _pair(
            "amessage_add (one message)",
            "message_add",
            lambda i: memory.message_add(session=core_chat, message=sample_message(i)),
            lambda i: memory.amessage_add(session=twin_chat, message=sample_message(i)),
            runs,
        )
    )

    progress("fact_recall")
    for i in range(facts):
        await memory.afact_remember(namespace=ns, text=f"{sample_message(i)['content']} #{i}")
    rows.append(
        await _pair(
            f"afact_recall (k=5, {facts} facts)",
            "fact_recall",
            lambda i: memory.fact_recall(namespace=ns, query=f"order #{1000 + i % facts} jacket"),
            lambda i: memory.afact_recall(namespace=ns, query=f"order #{1000 + i % facts} jacket"),
            runs,
        )
    )

    progress("add_items")
    core_turns = await memory.asession_open(namespace=ns, key="core-turns")
    agents = TTMemorySession("agents-turns", namespace=ns, max_tokens=4000)
    rows.append(
        await _pair(
            "TTMemorySession.add_items (one turn: 4 items)",
            "message_add_many (the turn: 3 chat messages)",
            lambda i: memory.message_add_many(
                session=core_turns, messages=from_responses_items(turn_items(i))
            ),
            lambda i: agents.add_items(turn_items(i)),  # type: ignore[arg-type]
            runs,
        )
    )

    progress("get_items")
    reads = max(3, runs // 4)
    rows.append(
        await _pair(
            f"TTMemorySession.get_items (max_tokens=4000, {runs} turns stored)",
            "context_window(max_tokens=4000)",
            lambda i: memory.context_window(session=core_turns, max_tokens=4000),
            lambda i: agents.get_items(),
            reads,
        )
    )
    await memory.anamespace_erase(namespace=ns)
    # The executor thread's connection, closed like a request's (a test database can be dropped).
    await sync_to_async(connections.close_all, thread_sensitive=True)()
    return rows


def _noop() -> None:
    return None


def run(
    *, runs: int = 200, facts: int = 200, progress: Callable[[str], None] | None = None
) -> list[Row]:
    """Measure every pair in a fresh event loop; one row per pair."""
    return asyncio.run(_measure(runs, facts, progress or (lambda _: None)))
