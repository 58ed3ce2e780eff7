"""The async API: ``memory.a<name>`` twins awaited from an event loop, on both databases."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.core.exceptions import SynchronousOnlyOperation
from django.db import connections

from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _close_executor_connections() -> Iterator[None]:
    """The twins run in Django's thread-sensitive executor, which keeps its own connection;
    closed after each test (sync or async) so the test database can be flushed and dropped."""
    yield
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())


def _sync_functions() -> list[str]:
    return [
        name
        for name in memory.__all__
        if inspect.isfunction(getattr(memory, name))
        and not inspect.iscoroutinefunction(getattr(memory, name))
    ]


async def test_every_public_function_has_an_awaitable_twin_with_its_parameters() -> None:
    sync = _sync_functions()
    assert len(sync) >= 30
    for name in sync:
        twin = getattr(memory, f"a{name}")
        assert inspect.iscoroutinefunction(twin), name
        assert twin.__name__ == f"a{name}" and f"a{name}" in memory.__all__
        assert inspect.signature(twin) == inspect.signature(getattr(memory, name))


async def test_a_sync_service_refuses_the_event_loop_and_its_twin_works() -> None:
    with pytest.raises(SynchronousOnlyOperation):
        memory.session_open(namespace="user-1", key="loop")

    session = await memory.asession_open(namespace="user-1", key="loop")
    again, created = await memory.asession_open(namespace="user-1", key="loop", with_created=True)
    assert again.pk == session.pk and created is False
    first = await memory.amessage_add(session=session, message={"role": "user", "content": "hi"})
    rows = await memory.amessage_add_many(
        session=session,
        messages=[
            {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "assistant", "content": "It is sunny."},
        ],
    )
    assert [first.seq, *(row.seq for row in rows)] == [1, 2, 3, 4]
    window = await memory.acontext_window(session=session, max_tokens=4000)
    assert [m["role"] for m in window] == ["user", "assistant", "tool", "assistant"]
    assert await memory.amessage_recent(session=session, limit=1) == [
        {"role": "assistant", "content": "It is sunny."}
    ]

    checkpoint = await memory.asnapshot_create(session=session, label="before")
    await memory.amessage_add(session=session, message={"role": "user", "content": "oops"})
    safety = await memory.asnapshot_rollback(session=session, snapshot=checkpoint)
    assert safety is not None
    assert len(await memory.amessage_recent(session=session)) == 4


async def test_facts_profiles_and_prompt_through_the_twins() -> None:
    fact = await memory.afact_remember(namespace="user-2", text="Ada is allergic to peanuts")
    await memory.afact_remember(namespace="user-2", text="Ada lives in Lisbon")
    recalled = await memory.afact_recall(namespace="user-2", query="peanuts allergy", k=1)
    assert recalled.facts == [fact]
    await memory.aprofile_update(namespace="user-2", kind="user", data={"name": "Ada"})
    assert await memory.aprofile_get(namespace="user-2", kind="user") == {"name": "Ada"}
    session = await memory.asession_open(namespace="user-2", key="chat")
    await memory.amessage_add(session=session, message={"role": "user", "content": "What to eat?"})
    prompt = await memory.aprompt_build(session=session, query="peanuts", max_tokens=2000)
    assert "peanuts" in prompt.system and prompt.messages[-1]["content"] == "What to eat?"
    await memory.afact_forget(namespace="user-2", fact_id=fact.pk)
    assert [f.text for f in await memory.afact_list(namespace="user-2")] == ["Ada lives in Lisbon"]
    receipt = await memory.anamespace_erase(namespace="user-2")
    assert receipt.total > 0 and await memory.asession_list(namespace="user-2") == []


async def test_a_twin_raises_the_sync_error_and_writes_nothing() -> None:
    session = await memory.asession_open(namespace="user-3", key="chat")
    with pytest.raises(MemoryValidationError) as error:
        await memory.amessage_add_many(
            session=session,
            messages=[{"role": "user", "content": "kept?"}, {"role": "robot", "content": "x"}],
        )
    assert error.value.field == "messages[1].role"
    assert await memory.amessage_recent(session=session) == []


async def test_sixteen_concurrent_tasks_append_to_one_session_and_nothing_is_lost() -> None:
    session = await memory.asession_open(namespace="user-4", key="busy")
    tasks, per_task = 16, 6
    started = asyncio.Event()
    waiting = 0

    async def writer(task: int) -> list[int]:
        nonlocal waiting
        waiting += 1
        if waiting == tasks:
            started.set()
        await started.wait()  # all sixteen are in flight before the first append
        seqs = []
        for turn in range(per_task):
            row = await memory.amessage_add(
                session=session, message={"role": "user", "content": f"t{task}-{turn}"}
            )
            seqs.append(row.seq)
        return seqs

    results = await asyncio.gather(*(writer(task) for task in range(tasks)))

    rows = await sync_to_async(_stored)(session)
    assert [seq for seq, _ in rows] == list(range(1, tasks * per_task + 1))  # gap-free, unique
    assert sorted(text for _, text in rows) == sorted(
        f"t{task}-{turn}" for task in range(tasks) for turn in range(per_task)
    )
    for task, seqs in enumerate(results):  # each task's messages in its own order
        texts = [text for seq, text in rows if seq in seqs]
        assert texts == [f"t{task}-{turn}" for turn in range(per_task)]
    # It raced: the tasks' appends interleaved instead of running one task after another.
    assert sum(seqs != list(range(seqs[0], seqs[0] + per_task)) for seqs in results) >= 8
    stored = await MemorySession.objects.aget(pk=session.pk)
    assert (stored.last_seq, stored.message_count) == (tasks * per_task, tasks * per_task)


def _stored(session: MemorySession) -> list[tuple[int, str]]:
    rows = Message.objects.filter(session=session).order_by("seq").values_list("seq", "data")
    return [(seq, data["content"]) for seq, data in rows]


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "weather", "arguments": "{}"}}
