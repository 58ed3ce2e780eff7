"""MCP over streamable HTTP, mounted beside the project's Django ASGI app.

``mount(django_asgi_app)`` answers ``/mcp`` (by default) with the MCP server and everything
else with Django; it also runs the MCP session manager on ASGI lifespan events (which Django
does not handle). Every request to ``/mcp`` is authenticated first (401 without valid
credentials, 403 for a namespace not granted, 400 for a malformed namespace header); the
namespace found is what the tools act on. Hosts allowed: Django's ``ALLOWED_HOSTS``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from ttmemory.exceptions import MemoryValidationError, NamespaceAccessError
from ttmemory.integrations.mcp.auth import SCOPE_KEY, AuthenticationError, resolve_namespace
from ttmemory.integrations.mcp.server import create_server

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
# Loose on purpose: Django's ASGIHandler and Starlette type scope, receive and send differently.
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

DEFAULT_PATH = "/mcp"


def _transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection for the hosts Django serves (``ALLOWED_HOSTS``)."""
    hosts = list(settings.ALLOWED_HOSTS) or (
        ["localhost", "127.0.0.1", "[::1]"] if settings.DEBUG else []
    )
    if any(host == "*" or host.startswith(".") for host in hosts):
        # Django matches these patterns itself; the MCP SDK's list cannot express them.
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        allowed_hosts=[form for host in hosts for form in (host, f"{host}:*")],
        allowed_origins=[
            f"{scheme}://{form}"
            for host in hosts
            for scheme in ("http", "https")
            for form in (host, f"{host}:*")
        ],
    )


def streamable_http_app(*, path: str = DEFAULT_PATH) -> Starlette:
    """The MCP server as a Starlette app answering ``path`` (stateless, JSON responses)."""
    server = create_server()
    return server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        json_response=True,
        transport_security=_transport_security(),
    )


def _authenticate(headers: dict[str, str]) -> str:
    close_old_connections()
    try:
        return resolve_namespace(headers)
    finally:
        close_old_connections()


async def _refuse(send: Send, status: int, detail: str) -> None:
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b"Api-Key"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps({"detail": detail}).encode()})


def mount(django_app: ASGIApp, *, path: str = DEFAULT_PATH) -> ASGIApp:
    """One ASGI app: MCP at ``path`` (and below it), Django for everything else."""
    mcp_app = streamable_http_app(path=path)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await mcp_app(scope, receive, send)  # starts and stops the MCP session manager
            return
        route = scope.get("path", "")
        if scope["type"] != "http" or not (route == path or route.startswith(path + "/")):
            await django_app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            namespace = await sync_to_async(_authenticate, thread_sensitive=True)(headers)
        except AuthenticationError as exc:
            await _refuse(send, 401, str(exc))
            return
        except NamespaceAccessError as exc:
            await _refuse(send, 403, str(exc))
            return
        except MemoryValidationError as exc:
            await _refuse(send, 400, f"{exc.field}: {exc.message}")
            return
        scope.setdefault("state", {})[SCOPE_KEY] = namespace
        await mcp_app(scope, receive, send)

    return app
