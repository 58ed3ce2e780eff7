"""The demo project served by real processes (gunicorn, uvicorn) on a loopback port, against
the test database: its environment, and a server started, waited for (bounded) and stopped."""

from __future__ import annotations

import contextlib
import http.client
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from django.conf import settings as django_settings
from django.db import connection

from tests.backends.redis_servers import free_port

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 60.0


def database_url() -> str:
    """The test database as a ``DATABASE_URL`` (the demo's settings read it)."""
    config = connection.settings_dict
    if config["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{config['NAME']}"
    host = quote(str(config["HOST"] or "127.0.0.1"), safe="")
    password = f":{quote(config['PASSWORD'])}" if config["PASSWORD"] else ""
    return f"postgres://{config['USER']}{password}@{host}:{config['PORT']}/{config['NAME']}"


def demo_env(**extra: str) -> dict[str, str]:
    """The environment of a production-like demo process on the test database and keys."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "demo_project.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "demo-server-test",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": database_url(),
        "TTMEMORY_ENCRYPTION_KEYS": ",".join(django_settings.TTMEMORY["ENCRYPTION_KEYS"]),
        "TTMEMORY_BLIND_INDEX_KEY": django_settings.TTMEMORY["BLIND_INDEX_KEY"],
        "TTMEMORY_API_WRITE_RATE": "off",
        **extra,
    }


def answers(port: int, path: str = "/") -> bool:
    """Whether an HTTP server answers on ``port`` (any status)."""
    probe = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        probe.request("GET", path)
        probe.getresponse().read()
        return True
    except OSError:
        return False
    finally:
        probe.close()


@contextlib.contextmanager
def serve(command: list[str], *, port: int, env: dict[str, str], log: Path) -> Iterator[None]:
    """Run ``command`` (a server listening on ``port``) until the block ends; fail with its log
    when it exits or does not answer within ``START_TIMEOUT``."""
    with log.open("w") as out:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not answers(port):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(log.read_text()[-3000:])
                time.sleep(0.2)
            yield
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(30)


__all__ = ["ROOT", "database_url", "demo_env", "free_port", "serve"]
