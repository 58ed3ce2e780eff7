"""What authenticating a REST request costs: per request, CPU and wall microseconds and SQL
statements, for an API key and a DRF token, in process.

    .venv/bin/python bench/auth_cost.py [--requests 2000] [--rounds 5]

Two measurements per credential: ``authenticate`` alone (the authenticators of ttmemory's
views, as DRF runs them, until one answers) and a whole ``GET /api/memory/namespace/`` through
Django's test client (the cheapest authenticated request); for the token also DRF's own
``TokenAuthentication`` (an ORM query built per request), for comparison. The demo's settings
(DEBUG off, no throttle); PostgreSQL is ``DATABASE_URL`` or the embedded server (database
``bench_auth``), ``DATABASE_URL=sqlite:///...`` for SQLite. Each figure is the median of
``--rounds`` rounds of ``--requests`` calls (CPU is the figure to trust on a shared machine).
It uses only what every version has (the views' authenticators, the URL), so the same command
measures the code before and after a change (docs/benchmarks.md, "Authentication").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")
os.environ.setdefault("TTMEMORY_EMBEDDED_DB", "bench_auth")


def measure(call: Callable[[], Any], requests: int, rounds: int) -> tuple[float, float]:
    """Median over rounds of the mean (CPU us, wall us) per call."""
    cpu, wall = [], []
    for _ in range(rounds):
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        for _ in range(requests):
            call()
        cpu.append((time.process_time() - cpu_start) / requests * 1e6)
        wall.append((time.perf_counter() - wall_start) / requests * 1e6)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per figure (median)")
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client, RequestFactory
    from django.test.utils import override_settings
    from rest_framework.authentication import TokenAuthentication
    from rest_framework.authtoken.models import Token
    from rest_framework.request import Request

    from ttmemory.api.base import MemoryViewSet
    from ttmemory.services.access import api_key_create

    override_settings(DEBUG=False, TTMEMORY={**settings.TTMEMORY, "API_WRITE_RATE": None}).enable()
    call_command("migrate", verbosity=0)
    stamp = f"{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}"
    _, raw_key = api_key_create(name=f"bench-auth-{stamp}", namespaces=[f"bench-auth-{stamp}"])
    token = Token.objects.create(user=User.objects.create_user(f"bench-auth-{stamp}"))
    headers = {"API key": f"Api-Key {raw_key}", "DRF token": f"Token {token.key}"}
    factory = RequestFactory()
    vendor = connection.vendor
    print(f"database: {vendor}; {args.rounds} rounds of {args.requests} calls, median per call")
    print(f"| credential | what | CPU us | wall us | SQL statements | ({vendor})")
    print("|---|---|---:|---:|---:|")
    for name, authorization in headers.items():
        request = Request(factory.get("/api/memory/namespace/", HTTP_AUTHORIZATION=authorization))
        authenticators = MemoryViewSet().get_authenticators()

        def authenticate(request: Any = request, authenticators: Any = authenticators) -> Any:
            for authenticator in authenticators:
                found = authenticator.authenticate(request)
                if found is not None:
                    return found
            raise AssertionError("not authenticated")

        client = Client(HTTP_AUTHORIZATION=authorization, HTTP_HOST="127.0.0.1")

        def get(client: Any = client) -> None:
            response = client.get("/api/memory/namespace/")
            assert response.status_code == 200, response.content

        def drf_own(request: Any = request) -> Any:
            # DRF's own TokenAuthentication: an ORM select_related built per request.
            return TokenAuthentication().authenticate(request)

        calls: list[tuple[str, Callable[[], Any]]] = [("authenticate", authenticate)]
        if name == "DRF token":
            calls.append(("DRF's TokenAuthentication", drf_own))
        calls.append(("GET namespace/", get))
        for what, call in calls:
            for _ in range(20):  # warm: compiled statements, caches, last_used_at refreshed
                call()
            statements: list[str] = []

            def count(execute: Any, sql: str, *rest: Any, seen: list[str] = statements) -> Any:
                seen.append(sql)
                return execute(sql, *rest)

            # Counted by an execute wrapper: Django empties connection.queries at each request.
            with connection.execute_wrapper(count):
                call()
            cpu, wall = measure(call, args.requests, args.rounds)
            print(f"| {name} | {what} | {cpu:.0f} | {wall:.0f} | {len(statements)} |")


if __name__ == "__main__":
    main()
