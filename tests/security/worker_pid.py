"""The demo's WSGI and ASGI apps with an ``X-Worker-Pid`` response header, so a test sees which
worker process of a real server answered each request (tests/security/test_revocation_processes.py).

``gunicorn tests.security.worker_pid:wsgi`` / ``uvicorn tests.security.worker_pid:asgi``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

HEADER = "X-Worker-Pid"
_apps: dict[str, Any] = {}


def _demo(kind: str) -> Any:
    # Imported in the server's worker (Django set up there), not when tests import this module.
    if kind not in _apps:
        if kind == "wsgi":
            from demo_project.wsgi import application
        else:
            from demo_project.asgi import application
        _apps[kind] = application
    return _apps[kind]


def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        return start_response(status, [*headers, (HEADER, str(os.getpid()))], exc_info)

    return _demo("wsgi")(environ, start)  # type: ignore[no-any-return]


async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    async def send_with_pid(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            pid = (HEADER.lower().encode(), str(os.getpid()).encode())
            message = {**message, "headers": [*message.get("headers", []), pid]}
        await send(message)

    await _demo("asgi")(scope, receive, send_with_pid)
