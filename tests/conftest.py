"""Shared fixtures: a session to write into, and raw SQL access for at-rest checks."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection

from ttmemory import memory
from ttmemory.models import MemorySession


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Each test starts with an empty cache: the API's write throttle counts requests per user
    id there, and ids repeat across tests (a busy suite would otherwise be throttled)."""
    cache.clear()


@pytest.fixture
def session(db: Any) -> MemorySession:
    return memory.session_open(namespace="user-1", key="chat-1")


def raw_rows(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """Run plain SQL on the test database, bypassing the ORM and its decryption."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return list(cursor.fetchall())


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool_call(call_ids: list[str], name: str = "lookup") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": '{"q": 1}'}}
            for cid in call_ids
        ],
    }


def tool_result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}
