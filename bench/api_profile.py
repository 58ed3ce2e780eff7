"""Where an API request's time goes: SQL round trips and a CPU profile, in process.

    .venv/bin/python bench/api_profile.py [--requests 300] [--rounds 5] [--profile]

Serves the append (POST one message; also with a new ``Idempotency-Key`` each time) and the
newest-50 page (GET ?limit=50) requests of ``bench/api_load.py`` through Django's WSGI handler
in this process (no socket, no gunicorn), with the same settings (DEBUG off, no throttle, no
background learning), beside the plain Django and plain DRF views doing the same SQL, in
interleaved rounds (a busy moment falls on every kind alike). Prints per request: mean wall
and CPU microseconds (CPU is the figure to trust on a shared machine, where wall time is
mostly waiting for a core), SQL statements, each plain view's request CPU as a share of the
API's, and with ``--profile`` a cProfile of the API requests timed by CPU (where this
process's microseconds go; pyinstrument samples wall time, which a busy machine swamps).

CPU is given twice: the request's own thread, and the whole process, which adds the index
jobs an append queues (the ``ttmemory-index`` thread without a broker) and varies with when
they ran. The profile times the request's thread only: with the process's clock it charged
the index thread's CPU to whatever the request was doing at the time, mostly waiting for the
database.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")
os.environ.setdefault("TTMEMORY_EMBEDDED_DB", "bench_api")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per kind")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--profile", action="store_true", help="print CPU profiles (cProfile)")
    parser.add_argument("--top", type=int, default=40, help="functions per profile")
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
    run, keys = uuid.uuid4().hex, itertools.count()  # every keyed append is a new request
    kinds: dict[str, Any] = {
        "POST messages/ (append one)": lambda n: client.post(
            f"{api}/sessions/{fixture['appends'][n % len(fixture['appends'])]}/messages/",
            body,
            content_type="application/json",
        ),
        "POST messages/ with an Idempotency-Key (a new key each)": lambda n: client.post(
            f"{api}/sessions/{fixture['appends'][n % len(fixture['appends'])]}/messages/",
            body,
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY=f"{run}-{next(keys)}",
        ),
        "raw SQL append (plain Django view)": lambda n: client.post(
            f"/bench/raw/{n % api_load.APPEND_SESSIONS}/append/",
            body,
            content_type="application/json",
        ),
        "raw SQL append (plain DRF view, token auth)": lambda n: client.post(
            f"/bench/drf/{n % api_load.APPEND_SESSIONS}/append/",
            body,
            content_type="application/json",
        ),
        "GET messages/?limit=50": lambda n: client.get(
            f"{api}/sessions/{fixture['read']}/messages/?limit={api_load.PAGE}"
        ),
        "raw SQL newest 50 (plain Django view)": lambda n: client.get(
            f"/bench/raw/{api_load.APPEND_SESSIONS}/recent/?limit={api_load.PAGE}"
        ),
        "raw SQL newest 50 (plain DRF view, token auth)": lambda n: client.get(
            f"/bench/drf/{api_load.APPEND_SESSIONS}/recent/?limit={api_load.PAGE}"
        ),
        "GET namespace/": lambda n: client.get(f"{api}/namespace/"),
    }
    try:
        statements: dict[str, list[str]] = {}
        for name, call in kinds.items():
            for n in range(20):  # warm caches
                assert call(n).status_code in (200, 201), call(n).content
            with CaptureQueriesContext(connection) as queries:
                call(0)
            statements[name] = [q["sql"][:110] for q in queries.captured_queries]
        # Interleaved rounds, every kind once per round (as bench/api_load.py's rows): whatever
        # else the machine does meanwhile falls on the API and the plain views alike.
        per_round = max(1, args.requests // args.rounds)
        times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in kinds}
        for _ in range(args.rounds):
            for name, call in kinds.items():
                started, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
                for n in range(per_round):
                    call(n)
                times[name].append(
                    (
                        (time.perf_counter() - started) / per_round * 1e6,
                        (time.thread_time() - own) / per_round * 1e6,
                        (time.process_time() - cpu) / per_round * 1e6,
                    )
                )
        for name in kinds:
            wall, own_cpu, cpu = (statistics.median(t[i] for t in times[name]) for i in range(3))
            print(
                f"{name}: {wall:,.0f} us/request wall, {own_cpu:,.0f} us of the request's CPU "
                f"({cpu:,.0f} us of this process's, with its index thread; the database's CPU "
                f"not included), {len(statements[name])} SQL statements (medians of "
                f"{args.rounds} rounds of {per_round})"
            )
            for statement in statements[name]:
                print(f"    {statement}")
        for api_kind, plain in (
            ("POST messages/ (append one)", "raw SQL append (plain Django view)"),
            ("POST messages/ (append one)", "raw SQL append (plain DRF view, token auth)"),
            ("GET messages/?limit=50", "raw SQL newest 50 (plain Django view)"),
            ("GET messages/?limit=50", "raw SQL newest 50 (plain DRF view, token auth)"),
        ):
            shares = [p[1] / a[1] * 100 for a, p in zip(times[api_kind], times[plain], strict=True)]
            print(
                f"{api_kind}: the request CPU of the {plain.partition('(')[2][:-1]} is "
                f"{statistics.median(shares):.0f}% of the API's (per round: "
                f"{', '.join(f'{x:.0f}' for x in shares)})"
            )
        if args.profile:
            import cProfile
            import io
            import pstats

            for name in ("POST messages/ (append one)", "GET messages/?limit=50", "GET namespace/"):
                # CPU time, not wall: on a shared machine wall time is mostly waiting for a core.
                # The request's thread's: the process's would charge the index thread's CPU
                # to whatever this thread was doing meanwhile.
                profiler = cProfile.Profile(timer=time.thread_time)
                profiler.enable()
                answers = {kinds[name](n).status_code for n in range(args.requests)}
                profiler.disable()
                # A profile of error answers would say nothing of the route.
                assert answers <= {200, 201}, f"{name} answered {sorted(answers)}"
                out = io.StringIO()
                stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
                stats.print_stats(args.top)
                print(f"\n=== {name}: {args.requests} requests, CPU seconds ===")
                print(out.getvalue())
    finally:
        api_load.cleanup(fixture)


if __name__ == "__main__":
    main()
