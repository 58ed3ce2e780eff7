"""The MCP server driven by the MCP SDK's own client: in-process and over streamable HTTP on
loopback (a real uvicorn server in a thread, the Django ASGI app mounted beside it).

The namespace comes from the API key only: two keys never see each other's memories, and
bad arguments come back as MCP tool errors naming the problem.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from django.core.asgi import get_asgi_application
from django.core.management import CommandError, call_command
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ttmemory import memory
from ttmemory.integrations.mcp import Credentials, create_server, mount
from ttmemory.models import ApiKey
from ttmemory.services.access import api_key_create, api_key_revoke

TOOLS = {"remember", "recall", "forget", "list_memories", "get_context", "append_messages"}


def payload(result: Any) -> dict[str, Any]:
    """A tool's answer: its structured content, else the JSON of its text."""
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        return dict(result.structured_content.get("result", result.structured_content))
    return dict(json.loads(result.content[0].text))


def error_text(result: Any) -> str:
    assert result.is_error, result
    return str(result.content[0].text)


@pytest.fixture
def keys(transactional_db: Any) -> dict[str, str]:
    """Two API keys, each granted one namespace, and a key granted both."""
    return {
        "a": api_key_create(name="agent-a", namespaces=["user-a"])[1],
        "b": api_key_create(name="agent-b", namespaces=["user-b"])[1],
        "both": api_key_create(name="agent-ab", namespaces=["user-a", "user-b"])[1],
    }


async def exercise_every_tool(client: Client) -> dict[str, Any]:
    """Call each tool once, as an agent would; returns what it saw."""
    seen: dict[str, Any] = {}
    listed = await client.list_tools()
    seen["tools"] = {tool.name: tool for tool in listed.tools}
    seen["remember"] = payload(
        await client.call_tool(
            "remember", {"text": "Ada is allergic to peanuts", "metadata": {"src": "mcp"}}
        )
    )
    seen["recall"] = payload(await client.call_tool("recall", {"query": "peanuts", "k": 3}))
    seen["list"] = payload(await client.call_tool("list_memories", {}))
    seen["append"] = payload(
        await client.call_tool(
            "append_messages",
            {
                "session_key": "chat",
                "messages": [
                    {"role": "user", "content": "What can I eat?"},
                    {"role": "assistant", "content": "Anything without peanuts."},
                ],
            },
        )
    )
    seen["context"] = payload(
        await client.call_tool("get_context", {"session_key": "chat", "max_tokens": 500})
    )
    return seen


def check_every_tool(seen: dict[str, Any]) -> int:
    assert set(seen["tools"]) == TOOLS
    for tool in seen["tools"].values():
        assert tool.description and tool.input_schema["type"] == "object"
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    fact = seen["remember"]["fact"]
    assert seen["remember"]["created"] is True and fact["metadata"] == {"src": "mcp"}
    assert seen["recall"]["hits"][0]["id"] == fact["id"] and seen["recall"]["hits"][0]["score"] > 0
    assert [f["text"] for f in seen["list"]["facts"]] == ["Ada is allergic to peanuts"]
    assert seen["append"]["seqs"] == [1, 2]
    assert [m["content"] for m in seen["context"]["messages"]] == [
        "What can I eat?",
        "Anything without peanuts.",
    ]
    return int(fact["id"])


def test_every_tool_in_process_and_two_keys_never_meet(keys: dict[str, str]) -> None:
    async def main() -> None:
        async with Client(create_server(credentials=Credentials(api_key=keys["a"]))) as a:
            fact_id = check_every_tool(await exercise_every_tool(a))
        async with Client(create_server(credentials=Credentials(api_key=keys["b"]))) as b:
            assert payload(await b.call_tool("recall", {"query": "peanuts"}))["hits"] == []
            assert payload(await b.call_tool("list_memories", {}))["facts"] == []
            window = payload(await b.call_tool("get_context", {"session_key": "chat"}))
            assert window["messages"] == []
            refused = await b.call_tool("forget", {"fact_id": fact_id})
            assert f"No fact {fact_id} in this namespace" in error_text(refused)
        async with Client(create_server(credentials=Credentials(api_key=keys["a"]))) as a:
            assert payload(await a.call_tool("forget", {"fact_id": fact_id})) == {
                "forgotten": fact_id
            }
            assert payload(await a.call_tool("list_memories", {}))["facts"] == []

    anyio.run(main)
    assert memory.fact_list(namespace="user-b") == []
    assert memory.session_get(namespace="user-b", key="chat") is None


def test_bad_arguments_and_credentials_are_mcp_errors(keys: dict[str, str]) -> None:
    async def main() -> None:
        async with Client(create_server(credentials=Credentials(api_key=keys["a"]))) as a:
            assert "k" in error_text(await a.call_tool("recall", {"query": "x", "k": 0}))
            assert "query" in error_text(await a.call_tool("recall", {}))
            assert "fact_id" in error_text(await a.call_tool("forget", {"fact_id": "seven"}))
            bad_role = await a.call_tool(
                "append_messages",
                {"session_key": "chat", "messages": [{"role": "robot", "content": "hi"}]},
            )
            assert "messages[0].role" in error_text(bad_role)
            tight = await a.call_tool("append_messages", {"session_key": "s", "messages": []})
            assert "messages" in error_text(tight)
        # A key granted two namespaces must name one; naming one it lacks is forbidden.
        both = Credentials(api_key=keys["both"])
        async with Client(create_server(credentials=both)) as ab:
            assert "X-Memory-Namespace" in error_text(await ab.call_tool("list_memories", {}))
        other = Credentials(api_key=keys["a"], namespace="user-b")
        async with Client(create_server(credentials=other)) as a_as_b:
            assert "Forbidden" in error_text(await a_as_b.call_tool("list_memories", {}))
        async with Client(create_server()) as anonymous:
            assert "Not authenticated" in error_text(await anonymous.call_tool("list_memories", {}))

    anyio.run(main)
    session = memory.session_get(namespace="user-a", key="chat")
    assert session is None or memory.message_recent(session=session) == []  # nothing stored


def test_a_revoked_key_stops_at_the_next_call(keys: dict[str, str]) -> None:
    key = ApiKey.objects.get(name="agent-a")

    async def main() -> None:
        async with Client(create_server(credentials=Credentials(api_key=keys["a"]))) as a:
            payload(await a.call_tool("list_memories", {}))
            await anyio.to_thread.run_sync(lambda: api_key_revoke(key=key))
            assert "revoked" in error_text(await a.call_tool("list_memories", {}))

    anyio.run(main)


def test_the_stdio_command_needs_credentials(transactional_db: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("TTMEMORY_API_KEY", raising=False)
    with pytest.raises(CommandError, match="TTMEMORY_API_KEY"):
        call_command("ttmemory_mcp")
    monkeypatch.setenv("TTMEMORY_API_KEY", "ttm_nope_nope")
    with pytest.raises(CommandError, match="Invalid or revoked API key"):
        call_command("ttmemory_mcp")


@pytest.fixture
def served(keys: dict[str, str]) -> Iterator[str]:
    """The Django ASGI app with MCP mounted at /mcp, served by uvicorn on a loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = mount(get_asgi_application(), path="/mcp")
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(30)


def http_client(url: str, **headers: str) -> Client:
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


def test_over_http_every_tool_works_and_the_key_is_the_namespace(
    served: str, keys: dict[str, str]
) -> None:
    async def main() -> None:
        async with http_client(served, authorization=f"Api-Key {keys['a']}") as a:
            fact_id = check_every_tool(await exercise_every_tool(a))
        async with http_client(served, **{"x-api-key": keys["b"]}) as b:
            assert payload(await b.call_tool("recall", {"query": "peanuts"}))["hits"] == []
            assert "No fact" in error_text(await b.call_tool("forget", {"fact_id": fact_id}))
            assert "k" in error_text(await b.call_tool("recall", {"query": "x", "k": 99}))
        headers = {"authorization": f"Api-Key {keys['both']}", "x-memory-namespace": "user-a"}
        async with http_client(served, **headers) as ab:
            facts = payload(await ab.call_tool("list_memories", {}))["facts"]
            assert [f["id"] for f in facts] == [fact_id]

        # Refused before the MCP server answers: no key, a bad key, a namespace not granted.
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        accept = {"accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient() as raw:
            missing = await raw.post(served, json=body, headers=accept)
            wrong = await raw.post(
                served, json=body, headers={**accept, "authorization": "Api-Key ttm_x_y"}
            )
            foreign = await raw.post(
                served,
                json=body,
                headers={
                    **accept,
                    "authorization": f"Api-Key {keys['a']}",
                    "x-memory-namespace": "user-b",
                },
            )
        assert (missing.status_code, missing.headers["www-authenticate"]) == (401, "Api-Key")
        assert wrong.status_code == 401 and "revoked" in wrong.json()["detail"]
        assert foreign.status_code == 403

    anyio.run(main)
    assert [f.text for f in memory.fact_list(namespace="user-a")] == ["Ada is allergic to peanuts"]
    assert memory.fact_list(namespace="user-b") == []


def test_the_documented_example_runs(keys: dict[str, str], capsys: Any) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "integrations" / "mcp.md").read_text()
    example = doc.split("<!-- mcp-example -->\n```python\n", 1)[1].split("```", 1)[0]
    assert len(example.strip().splitlines()) <= 20

    exec(compile(example, "docs/integrations/mcp.md", "exec"), {})

    printed = capsys.readouterr().out
    assert all(name in printed for name in TOOLS)
    assert "Ada is allergic to peanuts" in printed and "'mode': 'hybrid'" in printed
