"""One append path: every message that enters a session is stored by ``append_messages``.

Two proofs. Driven: each entry point (the sync and async Python API, ``turn_add``,
``session_edit``, the REST API, the OpenAI Agents session, MCP's ``append_messages``) is called
with ``append_messages`` spied on, and each must reach it with the messages it stored.
Structural: in the installed package, only ``services/rows.py`` writes message rows
(``append_rows`` for an append, ``insert_messages`` for copies of stored messages: restores
and forks), only
``appends._write`` calls ``append_rows``, and only ``message_add`` and ``message_add_many``
call ``append_messages``, so an entry point added later cannot write messages another way. (The
LangGraph saver stores checkpoints, not session messages: it has no append to route.)
"""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connections
from mcp import Client
from rest_framework.test import APIClient

from tests.api.conftest import BASE, open_session
from tests.conftest import user
from ttmemory import memory
from ttmemory.integrations.mcp import Credentials, create_server
from ttmemory.integrations.openai_agents import TTMemorySession
from ttmemory.models import Message
from ttmemory.services import appends as append_path
from ttmemory.services import sessions
from ttmemory.services.access import api_key_create

PACKAGE = Path(sessions.__file__).resolve().parents[1]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _close_executor_connections() -> Iterator[None]:
    """The async twins run in Django's thread-sensitive executor, which keeps its own
    connection: closed after each test so the test database can be flushed."""
    yield
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())


@pytest.fixture
def appends(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The contents of each batch ``appends.append_messages`` stored, in order."""
    seen: list[list[str]] = []
    real = append_path.append_messages

    def spy(gate: Any, messages: Any, *, many: bool) -> Any:
        rows = real(gate, messages, many=many)
        seen.append([str(row.data.get("content")) for row in rows])
        return rows

    monkeypatch.setattr(sessions, "append_messages", spy)
    return seen


def test_every_entry_point_appends_through_the_one_function(appends: list[list[str]]) -> None:
    namespace = "user-entry"
    client_a = APIClient()
    client_a.force_authenticate(User.objects.create_user("entry"))
    session = memory.session_open(namespace=namespace, key="chat")
    entry_points: list[tuple[str, Any, list[list[str]]]] = []

    def python() -> None:
        memory.message_add(session=session, message=user("one"))
        memory.message_add_many(session=session, messages=[user("two"), user("three")])

    entry_points.append(("python", python, [["one"], ["two", "three"]]))

    async def twins() -> None:
        await memory.amessage_add(session=session, message=user("four"))
        await memory.amessage_add_many(session=session, messages=[user("five")])

    entry_points.append(("async twins", lambda: asyncio.run(twins()), [["four"], ["five"]]))

    def turn() -> None:
        memory.turn_add(session=session, messages=[user("six")], learn=False)

    entry_points.append(("turn_add", turn, [["six"]]))

    def edit() -> None:
        memory.session_edit(session=session, seq=1, message=user("one, edited"))

    entry_points.append(("session_edit", edit, [["one, edited"]]))

    def rest() -> None:
        sid = open_session(client_a, "rest")["id"]
        url = f"{BASE}sessions/{sid}/messages/"
        one = client_a.post(url, {"message": user("seven")}, format="json")
        many = client_a.post(url, {"messages": [user("eight"), user("nine")]}, format="json")
        assert (one.status_code, many.status_code) == (201, 201), many.content

    entry_points.append(("REST", rest, [["seven"], ["eight", "nine"]]))

    agents = TTMemorySession("agents", namespace=namespace)

    def agents_session() -> None:
        async def add() -> None:
            await agents.add_items([user("ten"), user("eleven")])  # type: ignore[list-item]

        asyncio.run(add())

    entry_points.append(("OpenAI Agents session", agents_session, [["ten", "eleven"]]))

    def mcp() -> None:
        key = api_key_create(name="entry", namespaces=[namespace])[1]

        async def call() -> None:
            async with Client(create_server(credentials=Credentials(api_key=key))) as client:
                result = await client.call_tool(
                    "append_messages", {"session_key": "mcp", "messages": [user("twelve")]}
                )
                assert not result.is_error, result.content

        anyio.run(call)

    entry_points.append(("MCP append_messages", mcp, [["twelve"]]))

    for name, drive, expected in entry_points:
        before_calls, before_rows = len(appends), Message.objects.count()
        drive()
        made = appends[before_calls:]
        assert made == expected, f"{name} stored {made}, expected {expected}"
        if name != "session_edit":  # which also copies the history before the edit
            assert Message.objects.count() - before_rows == sum(map(len, made)), name


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == name)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
        )
    ]


def _callers(tree: ast.AST, name: str) -> set[str]:
    """Names of the top-level functions of ``tree`` that call ``name``."""
    out = set()
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.FunctionDef) and _calls(node, name):
            out.add(node.name)
    return out


def test_only_the_one_function_writes_messages() -> None:
    message_table = Message._meta.db_table
    writers: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        source = path.read_text()
        tree = ast.parse(source)
        for name in ("append_rows", "append_messages", "insert_messages"):
            callers = _callers(tree, name)
            if callers:
                writers.setdefault(name, set()).update(f"{relative}:{c}" for c in callers)
        # No other module inserts message rows: not by SQL naming the table, not by the ORM.
        if relative != "services/rows.py":
            assert f"INSERT INTO {message_table}" not in source, relative
            for call in _calls(tree, "bulk_create") + _calls(tree, "create"):
                target = ast.unparse(call.func)
                assert not target.startswith("Message."), f"{relative}: {target}"
    assert writers["append_messages"] == {
        "services/sessions.py:message_add",
        "services/sessions.py:message_add_many",
    }
    assert writers["append_rows"] == {"services/appends.py:_write"}
    # Copies of messages already stored (a restore, a fork), never a new message.
    assert writers["insert_messages"] == {
        "services/rows.py:append_rows",
        "services/snapshots.py:restore_locked",
        "services/history.py:_fork_locked",
    }
