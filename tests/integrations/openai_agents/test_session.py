"""TTMemorySession under the Agents SDK's own Runner and scripted models, on both databases."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Runner, SQLiteSession, set_tracing_disabled
from agents.memory import Session, SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call
from asgiref.sync import sync_to_async
from django.db import connection, connections
from django.test import Client

from tests.integrations.openai_agents.script import (
    agent,
    first_turn,
    reasoning,
    run_turns,
    second_turn,
)
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.integrations.openai_agents import ITEMS_KEY, TTMemorySession

ROOT = Path(__file__).resolve().parents[3]
NAMESPACE = "user-42"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _no_tracing() -> Iterator[None]:
    set_tracing_disabled(True)
    yield


@pytest.fixture(autouse=True)
def _close_executor_connections() -> Iterator[None]:
    """The twins run in Django's thread-sensitive executor, which keeps its own connection;
    closed after each test (sync or async) so the test database can be flushed and dropped."""
    yield
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())


def _chat(key: str) -> list[dict[str, Any]]:
    """The session as Chat Completions messages, without the carried SDK items."""
    session = memory.session_get(namespace=NAMESPACE, key=key)
    assert session is not None
    return [
        {k: v for k, v in m.items() if k != ITEMS_KEY}
        for m in memory.context_window(session=session, max_tokens=100_000)
    ]


def _calls(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [
        {"id": cid, "type": "function", "function": {"name": "weather", "arguments": args}}
        for cid, args in pairs
    ]


@pytest.mark.asyncio
async def test_it_is_an_sdk_session_and_runs_turns_exactly_like_the_sdks_own_session() -> None:
    ours = TTMemorySession("trip", namespace=NAMESPACE)
    assert isinstance(ours, Session)
    reference = SQLiteSession("trip")  # the SDK's own, in memory
    turns = [("Weather in Lisbon and Porto?", first_turn()), ("And Faro?", second_turn())]

    ours_models = await run_turns(ours, copy.deepcopy(turns))
    reference_models = await run_turns(reference, copy.deepcopy(turns))

    # Every model call of both turns got the same input: the history came back exactly.
    for mine, theirs in zip(ours_models, reference_models, strict=True):
        assert [c.input for c in mine.calls] == [c.input for c in theirs.calls]
    second_input = ours_models[1].first_call.input  # type: ignore[union-attr]
    assert [item.get("type", "message") for item in second_input] == [
        "message", "reasoning", "function_call", "function_call", "function_call_output",
        "function_call_output", "message", "message",
    ]  # fmt: skip
    assert await ours.get_items() == await reference.get_items()
    assert await ours.get_items(limit=2) == await reference.get_items(limit=2)
    ours.session_settings = SessionSettings(limit=3)
    assert await ours.get_items() == (await reference.get_items())[-3:]


@pytest.mark.django_db(transaction=True)
def test_what_the_agent_stored_reads_as_chat_completions_and_in_the_admin(
    django_user_model: Any, settings: Any
) -> None:
    session = TTMemorySession("trip", namespace=NAMESPACE)
    asyncio.run(run_turns(session, [("Weather in Lisbon and Porto?", first_turn())]))

    assert _chat("trip") == [
        {"role": "user", "content": "Weather in Lisbon and Porto?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": _calls(("c1", '{"city":"Lisbon"}'), ("c2", '{"city":"Porto"}')),
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny in Lisbon"},
        {"role": "tool", "tool_call_id": "c2", "content": "sunny in Porto"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Sunny in both.", "annotations": [],
                         "logprobs": []}],
            "id": "msg_1",
            "status": "completed",
        },
    ]  # fmt: skip
    stored = memory.session_get(namespace=NAMESPACE, key="trip")
    assert stored is not None and stored.message_count == 5

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.TTMEMORY = {**settings.TTMEMORY, "ADMIN_MASK_CONTENT": False}
    staff = django_user_model.objects.create_superuser(username="sam", password=None)
    client = Client()
    client.force_login(staff)
    body = client.get(f"/admin/ttmemory/memorysession/{stored.pk}/change/").content.decode()
    start = body.index('data-call="c1"')
    assert "sunny in Lisbon" in body[start : body.index("</details>", start)]
    assert "Weather in Lisbon and Porto?" in body and "Sunny in both." in body


@pytest.mark.django_db(transaction=True)
def test_a_new_process_reads_the_session_and_continues_it() -> None:
    session = TTMemorySession("trip", namespace=NAMESPACE)
    asyncio.run(run_turns(session, [("Weather in Lisbon and Porto?", first_turn())]))
    before = asyncio.run(session.get_items())
    connections.close_all()

    env = {**os.environ, "TTM_DB_NAME": connection.settings_dict["NAME"]}
    done = subprocess.run(
        [sys.executable, "-m", "tests.integrations.openai_agents.script", NAMESPACE, "trip"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    model_input = json.loads(done.stdout.strip().splitlines()[-1])

    assert model_input == [*before, {"content": "And Faro?", "role": "user"}]
    after = asyncio.run(TTMemorySession("trip", namespace=NAMESPACE).get_items())
    assert after[: len(before)] == before
    assert [item.get("call_id") for item in after[len(before) :]] == [
        None,
        "c3",
        "c3",
        None,
        None,
    ]  # the other process's turn: input, call, output, reasoning, answer


@pytest.mark.asyncio
async def test_two_runners_on_one_session_at_once_lose_nothing() -> None:
    def script(city: str, call_id: str) -> list[Any]:
        return [
            [function_call("weather", {"city": city}, call_id=call_id)],
            [assistant_message(f"{city}: sunny.", item_id=f"msg_{call_id}")],
        ]

    models = [ScriptedModel(script("Lisbon", "a1")), ScriptedModel(script("Porto", "b1"))]
    sessions = [TTMemorySession("shared", namespace=NAMESPACE) for _ in models]  # two workers
    await asyncio.gather(
        *(
            Runner.run(agent(model), f"Weather in {city}?", session=session)
            for model, city, session in zip(models, ["Lisbon", "Porto"], sessions, strict=True)
        )
    )
    items = await TTMemorySession("shared", namespace=NAMESPACE).get_items()

    def own(prefix: str, city: str) -> list[Any]:
        return [
            i for i in items
            if str(i.get("call_id", "")).startswith(prefix)
            or str(i.get("id", "")).startswith(f"msg_{prefix}")
            or i.get("content") == f"Weather in {city}?"
        ]  # fmt: skip

    a, b = own("a", "Lisbon"), own("b", "Porto")
    assert len(items) == 8 and len(a) == len(b) == 4  # input, call, output, answer each
    for run in (a, b):
        assert [i.get("type", "message") for i in run] == [
            "message",
            "function_call",
            "function_call_output",
            "message",
        ]
    positions = {id(i): n for n, i in enumerate(items)}
    a_span = [positions[id(i)] for i in a]
    b_span = [positions[id(i)] for i in b]
    assert a_span[0] < b_span[-1] and b_span[0] < a_span[-1]  # the two runs overlapped
    # Each run's call still answered: the Chat Completions window needs no repair.
    chat = await sync_to_async(_chat)("shared")
    assert all("interrupted" not in str(m.get("content")) for m in chat)
    assert [m["role"] for m in chat].count("tool") == 2


EVERY_ITEM: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": "Prefer tools."},
    {"content": "hi", "role": "user"},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look at this"},
            {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "low"},
            {"type": "input_file", "file_id": "file-1"},
        ],
    },
    {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "plan"}],
        "content": [{"type": "reasoning_text", "text": "raw thought"}],
        "encrypted_content": "gAAAA-opaque",
    },
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
     "arguments": '{"city":"Lisbon"}', "status": "completed"},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "weather",
     "arguments": "{}", "namespace": "tools"},
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    {"type": "function_call_output", "call_id": "call_2",
     "output": [{"type": "input_text", "text": "rainy"}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "lisbon weather"}},
    {"type": "file_search_call", "id": "fs_1", "queries": ["q"], "status": "completed",
     "results": None},
    {"type": "computer_call", "id": "cu_1", "call_id": "cc_1", "pending_safety_checks": [],
     "status": "completed", "action": {"type": "click", "x": 1, "y": 2, "button": "left"}},
    {"type": "computer_call_output", "call_id": "cc_1",
     "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"}},
    {"type": "image_generation_call", "id": "ig_1", "result": "AAAA", "status": "completed"},
    {"type": "code_interpreter_call", "id": "ci_1", "code": "1+1", "container_id": "cntr",
     "outputs": [{"type": "logs", "logs": "2"}], "status": "completed"},
    {"type": "local_shell_call", "id": "ls_1", "call_id": "lsc_1", "status": "completed",
     "action": {"type": "exec", "command": ["ls"], "env": {}}},
    {"type": "local_shell_call_output", "id": "lsc_1", "output": "notes.txt"},
    {"type": "mcp_list_tools", "id": "ml_1", "server_label": "docs",
     "tools": [{"name": "search", "input_schema": {}}]},
    {"type": "mcp_approval_request", "id": "ma_1", "arguments": "{}", "name": "search",
     "server_label": "docs"},
    {"type": "mcp_approval_response", "approval_request_id": "ma_1", "approve": True},
    {"type": "mcp_call", "id": "mc_1", "arguments": "{}", "name": "search",
     "server_label": "docs", "output": "found"},
    {"type": "custom_tool_call", "call_id": "ct_1", "name": "grammar", "input": "x = 1"},
    {"type": "custom_tool_call_output", "call_id": "ct_1", "output": "ok"},
    {"type": "item_reference", "id": "msg_0"},
    {
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "Sunny.", "logprobs": [],
             "annotations": [{"type": "url_citation", "url": "https://example.com",
                              "title": "Forecast", "start_index": 0, "end_index": 6}]},
            {"type": "refusal", "refusal": "I cannot book flights."},
        ],
    },
    {"id": "rs_2", "type": "reasoning", "summary": []},
]  # fmt: skip


@pytest.mark.asyncio
async def test_every_item_type_round_trips_exactly_and_pops_one_by_one() -> None:
    session = TTMemorySession("kinds", namespace=NAMESPACE)
    await session.add_items(copy.deepcopy(EVERY_ITEM))
    assert await session.get_items() == EVERY_ITEM

    chat = await sync_to_async(_chat)("kinds")
    assert [m["role"] for m in chat] == [
        "system",
        "developer",
        "user",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert [c["id"] for c in chat[4]["tool_calls"]] == ["call_1", "call_2"]

    for size in range(len(EVERY_ITEM), 0, -1):
        assert await session.pop_item() == EVERY_ITEM[size - 1]
        assert await session.get_items() == EVERY_ITEM[: size - 1]
    assert await session.pop_item() is None


@pytest.mark.asyncio
async def test_a_token_budget_returns_whole_groups_with_their_reasoning() -> None:
    session = TTMemorySession("long", namespace=NAMESPACE)
    for turn in range(6):
        await session.add_items(
            [
                {"role": "user", "content": f"question {turn} " + "words " * 40},
                reasoning(f"rs_{turn}", "think").model_dump(exclude_unset=True),
                function_call("weather", {"city": "Lisbon"}, call_id=f"c{turn}").model_dump(
                    exclude_unset=True
                ),
                {"type": "function_call_output", "call_id": f"c{turn}", "output": "x " * 60},
                assistant_message(f"answer {turn}", item_id=f"m{turn}").model_dump(),
            ]
        )
    everything = await session.get_items()
    budgeted = TTMemorySession("long", namespace=NAMESPACE, max_tokens=300)
    window = await budgeted.get_items()

    assert 0 < len(window) < len(everything)
    assert window == everything[-len(window) :]  # the newest whole groups
    calls = [i["call_id"] for i in window if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in window if i.get("type") == "function_call_output"]
    assert calls == outputs  # no call without its output, no output without its call
    for index, item in enumerate(window):
        if item.get("type") == "function_call":
            assert window[index - 1]["type"] == "reasoning"  # kept with its call
    assert window[0].get("type") not in ("function_call", "function_call_output")
    # A plain item count (the SDK's `limit`) can cut a group; the budget never does.
    size = next(
        n
        for n in range(len(window) + 1, len(everything) + 1)
        if everything[-n].get("type") == "function_call_output"
    )
    cut = await session.get_items(limit=size)
    assert cut[0]["type"] == "function_call_output"
    assert cut[0]["call_id"] not in [i.get("call_id") for i in cut[1:]]


@pytest.mark.asyncio
async def test_history_written_as_chat_completions_reads_as_sdk_items() -> None:
    stored = await memory.asession_open(namespace=NAMESPACE, key="mixed")
    await memory.amessage_add_many(
        session=stored,
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": _calls(("c9", "{}"))},
            {"role": "tool", "tool_call_id": "c9", "content": "done"},
        ],
    )
    items = await TTMemorySession("mixed", namespace=NAMESPACE).get_items()
    assert items == [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c9", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c9", "output": "done"},
    ]


@pytest.mark.asyncio
async def test_bad_items_are_refused_whole_and_clear_empties_the_session() -> None:
    session = TTMemorySession("bad", namespace=NAMESPACE)
    await session.add_items([{"role": "user", "content": "kept"}])
    with pytest.raises(MemoryValidationError) as error:
        await session.add_items(
            [
                {"role": "user", "content": "lost with the next"},
                {"type": "function_call", "name": "weather", "arguments": "{}"},
            ]
        )
    assert error.value.field == "items[1].call_id"  # named in the batch sent
    assert await session.get_items() == [{"role": "user", "content": "kept"}]
    other = TTMemorySession("bad", namespace="user-43")  # same key, another namespace
    assert await other.get_items() == []
    await session.clear_session()
    assert await session.get_items() == [] and await session.pop_item() is None
