"""Input edges (issue 34): lone surrogates anywhere in a JSON body are a 400 problem, never a
500 in text/plain; identifiers refuse invisible code points; NUL and C0 controls are refused in
text on every path (the Python API, REST, MCP)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from mcp import Client as MCPClient
from rest_framework.test import APIClient

from tests.api.conftest import BASE
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.integrations.mcp import Credentials, create_server
from ttmemory.models import Fact, MemorySession
from ttmemory.services.access import api_key_create

# Raw bodies: the JSON escape \ud800 is what a client sends; Python's parser makes it a lone
# surrogate, which no database can store and no renderer can encode.
SURROGATE_BODIES = {
    "top-level key": ("facts/", '{"\\ud800": 1, "text": "x"}'),
    "nested key": ("facts/", '{"text": "x", "metadata": {"\\udfff": "v"}}'),
    "deep key": ("facts/", '{"text": "x", "metadata": {"a": [{"b": {"\\ud83d": 1}}]}}'),
    "key in a message": (
        "sessions/{sid}/messages/",
        '{"messages": [{"role": "user", "content": "hi", "\\ud800": 1}]}',
    ),
    "key in profile data": ("profile/user/", '{"data": {"\\ud800x": 1}}'),
    "value deep in state": ("sessions/{sid}/", '{"state": {"a": {"b": ["\\ud800"]}}}'),
    "key in state": ("sessions/{sid}/", '{"state": {"\\udc00": 1}}'),
}


@pytest.fixture
def client(db: Any) -> APIClient:
    _, raw = api_key_create(name="edges", namespaces=["tenant-e"])
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    return client


@pytest.mark.parametrize("where", SURROGATE_BODIES)
def test_a_lone_surrogate_anywhere_in_json_is_a_400_problem(client: APIClient, where: str) -> None:
    sid = client.post(f"{BASE}sessions/", {"key": "chat"}, format="json").json()["id"]
    path, body = SURROGATE_BODIES[where]
    method = (
        client.patch
        if path.startswith(("profile", "sessions/{sid}/")) and "messages" not in path
        else client.post
    )
    response = method(f"{BASE}{path.format(sid=sid)}", data=body, content_type="application/json")
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/problem+json")
    assert "surrogate" in response.content.decode()


INVISIBLE_IN_IDENTIFIERS = {
    "hangul filler": "\u3164",
    "hangul choseong filler": "\u115f",
    "hangul jungseong filler": "\u1160",
    "halfwidth hangul filler": "\uffa0",
    "braille blank": "\u2800",
    "combining grapheme joiner": "\u034f",
    "variation selector 16": "\ufe0f",
    "mongolian free variation selector": "\u180b",
    "khmer vowel inherent aq": "\u17b4",
    "khmer vowel inherent aa": "\u17b5",
    "variation selector supplement": "\U000e0100",
}


@pytest.mark.parametrize(
    "char", INVISIBLE_IN_IDENTIFIERS.values(), ids=INVISIBLE_IN_IDENTIFIERS.keys()
)
def test_identifiers_refuse_invisible_code_points(db: Any, char: str) -> None:
    with pytest.raises(MemoryValidationError, match="namespace"):
        memory.session_open(namespace=f"user{char}-1", key="chat")
    with pytest.raises(MemoryValidationError, match="key"):
        memory.session_open(namespace="user-1", key=f"chat{char}")
    with pytest.raises(MemoryValidationError, match="data"):
        memory.profile_update(namespace="user-1", kind="user", data={f"city{char}": "Lisbon"})
    assert not MemorySession.objects.exists()


def test_the_api_refuses_an_invisible_session_key_with_a_400(client: APIClient) -> None:
    response = client.post(f"{BASE}sessions/", {"key": "chat\u3164"}, format="json")
    assert response.status_code == 400 and "key" in response.json()["errors"]


CONTROLS = {"NUL": "\x00", "bell": "\x07", "escape": "\x1b", "vertical tab": "\x0b"}


@pytest.mark.parametrize("char", CONTROLS.values(), ids=CONTROLS.keys())
def test_fact_text_with_a_control_character_is_refused_in_python(db: Any, char: str) -> None:
    with pytest.raises(MemoryValidationError, match="text"):
        memory.fact_remember(namespace="user-1", text=f"Ada{char} likes tea")
    assert not Fact.objects.exists()


def test_tab_newline_and_carriage_return_stay_allowed(db: Any) -> None:
    fact = memory.fact_remember(namespace="user-1", text="Ada likes\ttea\r\nand cake")
    assert fact.text == "Ada likes\ttea\r\nand cake"


@pytest.mark.django_db(transaction=True)
def test_mcp_remember_refuses_nul_like_the_rest_api() -> None:
    _, raw = api_key_create(name="mcp-edges", namespaces=["tenant-m"])

    async def remember() -> Any:
        async with MCPClient(create_server(credentials=Credentials(api_key=raw))) as client:
            return await client.call_tool("remember", {"text": "Ada\x00 likes tea"})

    result = asyncio.run(remember())
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())
    assert result.is_error and "text" in str(result.content[0].text)
    assert not Fact.objects.filter(namespace="tenant-m").exists()
