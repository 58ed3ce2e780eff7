"""Revocation at once (issue 34): a key revoked or deleted in one process is refused by the very
next request in every other process, with no wait (no process is told: each reads the key);
refreshing ``last_used_at`` extends nothing; MCP tool calls check again on every call. Through
real servers (gunicorn, uvicorn, stdio): test_revocation_processes.py."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections
from mcp import Client as MCPClient
from rest_framework.test import APIClient

from tests.api.conftest import BASE
from ttmemory.integrations.mcp import Credentials, create_server
from ttmemory.models import ApiKey
from ttmemory.services.access import api_key_check, api_key_create, api_key_revoke

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


class Worker:
    """The other process, driven line by line."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.security.auth_worker", connection.settings_dict["NAME"]],
            cwd=ROOT,
            env=dict(os.environ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        assert answer, self.proc.stderr.read() if self.proc.stderr else "no answer"
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture
def worker() -> Iterator[Worker]:
    other = Worker()
    yield other
    other.close()


def _client(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    return client


def test_a_key_revoked_in_another_process_is_refused_on_the_next_request_here(
    worker: Worker,
) -> None:
    key, raw = api_key_create(name="bot", namespaces=["tenant-r"])
    client = _client(raw)
    assert client.get(f"{BASE}sessions/").status_code == 200  # checked: in this cache now
    assert worker.ask(f"check {raw}") == "accepted"  # and in the other's

    assert worker.ask(f"revoke {key.pk}") == "done"
    assert client.get(f"{BASE}sessions/").status_code == 401  # at once, no wait


def test_a_key_revoked_here_is_refused_at_once_by_the_other_process(worker: Worker) -> None:
    key, raw = api_key_create(name="bot", namespaces=["tenant-r"])
    assert worker.ask(f"check {raw}") == "accepted"
    assert worker.ask(f"check {raw}") == "accepted"  # answered from its cache
    api_key_revoke(key=key)
    assert worker.ask(f"check {raw}") == "refused"


def test_a_key_deleted_elsewhere_or_revoked_by_sql_is_refused_at_once(worker: Worker) -> None:
    deleted, raw_deleted = api_key_create(name="gone", namespaces=["tenant-r"])
    revoked, raw_revoked = api_key_create(name="sql", namespaces=["tenant-r"])
    for raw in (raw_deleted, raw_revoked):
        assert _client(raw).get(f"{BASE}sessions/").status_code == 200
    assert worker.ask(f"delete {deleted.pk}") == "done"
    # No signal reaches any cache: an UPDATE statement, as an operator would run it.
    ApiKey.objects.filter(pk=revoked.pk).update(revoked_at="2026-01-01T00:00:00Z")
    for raw in (raw_deleted, raw_revoked):
        assert _client(raw).get(f"{BASE}sessions/").status_code == 401


def test_refreshing_last_used_at_extends_no_grant(worker: Worker) -> None:
    key, raw = api_key_create(name="bot", namespaces=["tenant-r"])
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=None)  # the next check refreshes it
    assert api_key_check(raw_key=raw) is not None
    assert worker.ask(f"revoke {key.pk}") == "done"
    assert api_key_check(raw_key=raw) is None


def test_every_mcp_tool_call_checks_the_key_again(worker: Worker) -> None:
    key, raw = api_key_create(name="agent", namespaces=["tenant-r"])

    async def calls() -> list[bool]:
        async with MCPClient(create_server(credentials=Credentials(api_key=raw))) as client:
            first = await client.call_tool("list_memories", {})
            await sync_to_async(worker.ask)(f"revoke {key.pk}")
            second = await client.call_tool("list_memories", {})
            return [first.is_error, second.is_error]

    assert asyncio.run(calls()) == [False, True]
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())
