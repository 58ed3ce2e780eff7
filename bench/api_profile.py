"""Where an API request's time goes: SQL round trips and a pyinstrument profile, in process.

    .venv/bin/python bench/api_profile.py [--requests 300] [--profile]

Serves the append (POST one message) and newest-50 page (GET ?limit=50) requests of
``bench/api_load.py`` through Django's WSGI handler in this process (no socket, no gunicorn),
with the same settings (DEBUG off, no throttle, no background learning), beside the plain
Django views doing the same SQL. Prints per request: mean microseconds, SQL statements, and
with ``--profile`` pyinstrument's call tree of the API requests (where the microseconds go).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")
os.environ.setdefault("TTMEMORY_EMBEDDED_DB", "bench_api")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per kind")
    parser.add_argument("--profile", action="store_true", help="print pyinstrument trees")
    args = parser.parse_args()

    from bench import api_load

    application = api_load.make_application()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    call_command("migrate", verbosity=0)
    fixture = api_load.prepare()
    client = Client(HTTP_AUTHORIZATION=fixture["auth"], HTTP_HOST="127.0.0.1")
    del application
    body = json.dumps(fixture["message"])
    api = "/api/memory"
    kinds: dict[str, Any] = {
        "POST messages/ (append one)": lambda n: client.post(
            f"{api}/sessions/{fixture['appends'][n % len(fixture['appends'])]}/messages/",
            body,
            content_type="application/json",
        ),
        "raw SQL append (plain Django view)": lambda n: client.post(
            f"/bench/raw/{n % api_load.APPEND_SESSIONS}/append/",
            body,
            content_type="application/json",
        ),
        "GET messages/?limit=50": lambda n: client.get(
            f"{api}/sessions/{fixture['read']}/messages/?limit={api_load.PAGE}"
        ),
        "raw SQL newest 50 (plain Django view)": lambda n: client.get(
            f"/bench/raw/{api_load.APPEND_SESSIONS}/recent/?limit={api_load.PAGE}"
        ),
        "GET namespace/": lambda n: client.get(f"{api}/namespace/"),
    }
    try:
        for name, call in kinds.items():
            for n in range(20):  # warm caches
                assert call(n).status_code in (200, 201), call(n).content
            with CaptureQueriesContext(connection) as queries:
                call(0)
            sql = [q["sql"][:110] for q in queries.captured_queries]
            started = time.perf_counter()
            for n in range(args.requests):
                call(n)
            mean = (time.perf_counter() - started) / args.requests * 1e6
            print(f"{name}: {mean:,.0f} us/request, {len(sql)} SQL statements")
            for statement in sql:
                print(f"    {statement}")
        if args.profile:
            from pyinstrument import Profiler

            for name in ("POST messages/ (append one)", "GET messages/?limit=50"):
                profiler = Profiler(interval=0.0002)
                profiler.start()
                for n in range(args.requests):
                    kinds[name](n)
                profiler.stop()
                print(f"\n=== {name}: {args.requests} requests ===")
                print(profiler.output_text(unicode=False, color=False, show_all=False))
    finally:
        api_load.cleanup(fixture)


if __name__ == "__main__":
    main()
