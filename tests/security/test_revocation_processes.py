"""Revocation at once, through real servers (issue 34): gunicorn with two workers (Django's
default local-memory cache, then Redis as Django's cache), MCP over stdio and MCP over HTTP
(uvicorn with two workers). Each credential is first accepted by every worker (each response
names its worker's pid), then revoked by this process, which no worker hears from; then calls
go through every worker again, and not one is accepted: zero window.

Credentials: an API key revoked, deleted, or expired by SQL (after its ``last_used_at`` was
refreshed), a DRF token deleted, a user deactivated by ``QuerySet.update()`` (no signal).
Calls go in rounds of concurrent calls until both workers answered: bounded in time before
revocation (the workers may still be starting), in count after it; no timing assertion.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connections
from django.utils import timezone
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from rest_framework.authtoken.models import Token

from tests.backends.redis_servers import RedisServer, redis_server
from tests.demo_server import ROOT, demo_env, free_port, serve
from tests.security.worker_pid import HEADER
from ttmemory.models import ApiKey, MemorySession
from ttmemory.services.access import api_key_create, api_key_revoke

pytestmark = pytest.mark.django_db(transaction=True)

CALLS_PER_ROUND = 4  # concurrent calls: a busy worker leaves the next one to the other
# Before revocation the second worker may still be starting when the first answers: rounds go
# on up to WARM_SECONDS (a bound, not a timing assertion). After it, both are up: ROUNDS.
WARM_SECONDS = 90.0
ROUNDS = 50
WORKERS = 2


class Credential:
    """One way to authenticate, and one way to take it away."""

    def __init__(self, name: str, headers: dict[str, str], revoke: Callable[[], Any]) -> None:
        self.name = name
        self.headers = headers
        self.revoke = revoke


def credentials() -> list[Credential]:
    """A fresh credential of each kind, with its revocation."""
    found = []
    for how in ("revoked", "deleted", "expired"):
        key, raw = api_key_create(name=f"key-{how}", namespaces=[f"ns-{how}"])
        # Its next check refreshes last_used_at: that refresh must extend nothing.
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=None)
        revoke = {
            "revoked": lambda key=key: api_key_revoke(key=key),
            "deleted": lambda key=key: ApiKey.objects.filter(pk=key.pk).delete(),
            "expired": lambda key=key: ApiKey.objects.filter(pk=key.pk).update(
                expires_at=timezone.now()
            ),
        }[how]
        found.append(Credential(f"API key {how}", {"Authorization": f"Api-Key {raw}"}, revoke))
    for how in ("token deleted", "user deactivated"):
        user = User.objects.create_user(how.replace(" ", "-"))
        token = Token.objects.create(user=user)
        revoke = {
            "token deleted": lambda token=token: Token.objects.filter(pk=token.pk).delete(),
            "user deactivated": lambda user=user: User.objects.filter(pk=user.pk).update(
                is_active=False
            ),
        }[how]
        found.append(Credential(how, {"Authorization": f"Token {token.key}"}, revoke))
    return found


# -- gunicorn --------------------------------------------------------------------------------


def post_session(port: int, headers: dict[str, str], key: str) -> tuple[int, str]:
    """Open a session through the REST API: (status, pid of the worker that answered)."""
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        body = json.dumps({"key": key})
        client.request(
            "POST",
            "/api/memory/sessions/",
            body=body,
            headers={**headers, "Content-Type": "application/json"},
        )
        response = client.getresponse()
        response.read()
        return response.status, str(response.getheader(HEADER))
    finally:
        client.close()


def bounded_rounds(warm: bool) -> Iterator[int]:
    """Round numbers: up to WARM_SECONDS before revocation, ROUNDS after it."""
    deadline = time.monotonic() + WARM_SECONDS
    for round_ in itertools.count():
        if (time.monotonic() > deadline) if warm else round_ >= ROUNDS:
            return
        yield round_


def through_every_worker(port: int, credential: Credential, *, warm: bool) -> list[tuple[int, str]]:
    """Rounds of concurrent calls until ``WORKERS`` pids answered; every (status, pid)."""
    label = "before" if warm else "after"
    seen: list[tuple[int, str]] = []
    with ThreadPoolExecutor(CALLS_PER_ROUND) as pool:
        for round_ in bounded_rounds(warm):
            keys = [f"{label}-{round_}-{n}" for n in range(CALLS_PER_ROUND)]
            seen += pool.map(lambda key: post_session(port, credential.headers, key), keys)
            if len({pid for _, pid in seen}) >= WORKERS:
                return seen
    raise AssertionError(f"{credential.name}: only pids {set(seen)} answered {len(seen)} calls")


@contextlib.contextmanager
def cache_env(cache: str, tmp_path: Path) -> Iterator[tuple[dict[str, str], RedisServer | None]]:
    """The demo's environment for Django's ``cache``: its default local-memory cache, or a
    private redis-server (with the write throttle on, so the workers write to it)."""
    if cache == "locmem":
        yield {}, None
        return
    with redis_server(tmp_path / "redis") as redis:
        yield {"REDIS_URL": redis.url, "TTMEMORY_API_WRITE_RATE": "100000/min"}, redis


@pytest.mark.parametrize("cache", ["locmem", "redis"])
def test_every_gunicorn_worker_refuses_a_revoked_credential_at_its_next_request(
    cache: str, tmp_path: Path
) -> None:
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-c", "demo_project/gunicorn.conf.py"]
    command.append("tests.security.worker_pid:wsgi")
    with cache_env(cache, tmp_path) as (extra, redis):
        env = demo_env(GUNICORN_BIND=f"127.0.0.1:{port}", GUNICORN_WORKERS="2", **extra)
        with serve(command, port=port, env=env, log=tmp_path / "gunicorn.log"):
            refused_after = 0
            for credential in credentials():
                before = through_every_worker(port, credential, warm=True)
                accepted = {pid for status, pid in before if status in (200, 201)}
                assert len(accepted) == WORKERS, (credential.name, before)

                credential.revoke()
                after = through_every_worker(port, credential, warm=False)
                assert [s for s, _ in after if s != 401] == [], (credential.name, after)
                refused_after += len(after)
            # Nothing was written with a revoked credential either.
            assert not MemorySession.objects.filter(key__startswith="after-").exists()
            assert refused_after >= 5 * WORKERS
            if redis is not None:
                # The workers' Django cache is Redis: their write throttle counted there.
                assert int(redis.client().dbsize()) > 0


# -- MCP -------------------------------------------------------------------------------------


def is_accepted(result: Any) -> bool:
    return not result.is_error


def test_mcp_over_stdio_refuses_a_revoked_key_and_a_deactivated_user_at_the_next_call() -> None:
    key, raw = api_key_create(name="stdio", namespaces=["ns-stdio"])
    user = User.objects.create_user("stdio-user")
    command = [str(ROOT / "manage.py"), "ttmemory_mcp"]
    by_key = StdioServerParameters(
        command=sys.executable, args=command, env=demo_env(TTMEMORY_API_KEY=raw), cwd=ROOT
    )
    by_user = StdioServerParameters(
        command=sys.executable, args=[*command, "--user", user.username], env=demo_env(), cwd=ROOT
    )

    def revoke() -> None:
        api_key_revoke(key=key)
        User.objects.filter(pk=user.pk).update(is_active=False)

    async def main() -> tuple[list[bool], list[bool]]:
        async with Client(by_key) as key_client, Client(by_user) as user_client:
            clients = (key_client, user_client)
            before = [is_accepted(await c.call_tool("list_memories", {})) for c in clients]
            await sync_to_async(revoke)()
            after = [is_accepted(await c.call_tool("list_memories", {})) for c in clients]
            return before, after

    assert anyio.run(main) == ([True, True], [False, False])
    anyio.run(sync_to_async(connections.close_all))


async def mcp_call(url: str, headers: dict[str, str]) -> tuple[bool, set[str]]:
    """One tool call through a new MCP client (a new connection): (accepted, worker pids).
    A call the server refused before MCP answered is refused with 401, nothing else."""
    pids: set[str] = set()
    statuses: list[int] = []

    async def note(response: httpx2.Response) -> None:
        pids.add(str(response.headers.get(HEADER)))
        statuses.append(response.status_code)

    http = httpx2.AsyncClient(headers=headers, event_hooks={"response": [note]})
    try:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            accepted = is_accepted(await client.call_tool("list_memories", {}))
    except Exception:  # refused before the MCP server answers: the client gives up
        assert statuses and statuses[-1] == 401, statuses
        accepted = False
    finally:
        await http.aclose()
    return accepted, pids


async def mcp_through_every_worker(
    url: str, credential: Credential, warm: bool
) -> list[tuple[bool, set[str]]]:
    seen: list[tuple[bool, set[str]]] = []

    async def one() -> None:
        seen.append(await mcp_call(url, credential.headers))

    for _ in bounded_rounds(warm):
        async with anyio.create_task_group() as group:
            for _ in range(CALLS_PER_ROUND):
                group.start_soon(one)
        # A call whose requests all went to one worker is that worker's.
        if len({next(iter(p)) for _, p in seen if len(p) == 1}) >= WORKERS:
            return seen
    raise AssertionError(f"{credential.name}: not every worker answered: {seen}")


def test_every_mcp_http_worker_refuses_a_revoked_credential_at_its_next_call(
    tmp_path: Path,
) -> None:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "tests.security.worker_pid:asgi"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(WORKERS)]
    url = f"http://127.0.0.1:{port}/mcp"
    with serve(command, port=port, env=demo_env(), log=tmp_path / "uvicorn.log"):
        for credential in credentials():
            before = anyio.run(mcp_through_every_worker, url, credential, True)
            workers = {next(iter(p)) for ok, p in before if ok and len(p) == 1}
            assert len(workers) == WORKERS, (credential.name, before)
            credential.revoke()
            after = anyio.run(mcp_through_every_worker, url, credential, False)
            assert [p for ok, p in after if ok] == [], credential.name
