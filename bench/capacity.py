"""Capacity figures for docs/scaling.md: appends/s and recalls/s per PostgreSQL core and per
gunicorn worker, with one and with two workers (gunicorn + wrk on loopback, bounded).

    .venv/bin/python bench/capacity.py [--duration 4] [--rounds 3] [--workers 1,2] [--facts 500]
                                       [--no-write]

For each worker count, gunicorn serves the demo project (``bench/api_load.py``'s application:
DEBUG off, no throttle, no background learning) and wrk drives ``POST messages/`` (append one,
round-robin over 64 sessions) and ``POST facts/recall/`` (k=10, hybrid, a namespace of
``--facts`` facts) with two connections per worker, so every worker is kept busy. Around each
wrk run the CPU seconds used by the PostgreSQL server (postmaster, backends, reaped backends)
and by the gunicorn workers are read from /proc (psutil): ``per PG core`` is requests per
CPU-second of PostgreSQL, ``per worker`` requests per second divided by the workers. Rounds
interleave the operations; each cell is the median with the spread (min-max) of its rounds.
Appends are checked gap-free afterwards. Writes the capacity section of docs/scaling.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")
os.environ.setdefault("TTMEMORY_EMBEDDED_DB", "bench_capacity")

from bench import api_load  # noqa: E402

START = "<!-- ttmemory_bench:capacity:start -->"
END = "<!-- ttmemory_bench:capacity:end -->"
THINGS = (
    "tea", "coffee", "jazz", "hiking", "Lisbon", "trains", "sushi", "chess", "cats", "sailing",
    "Python", "opera", "cycling", "Kyoto", "gardening", "poetry", "tennis", "ramen", "dogs", "yoga",
)  # fmt: skip
VERBS = ("likes", "dislikes", "often talks about", "wants to learn about", "grew up with")
QUERY = "what does the user like to drink in the morning before work"


@dataclass
class Run:
    operation: str
    workers: int
    rps: float
    p50_ms: float
    pg_cores: float | None  # CPU-seconds of PostgreSQL per wall second
    web_cores: float  # CPU-seconds of the gunicorn workers per wall second
    errors: int


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=4, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per cell")
    parser.add_argument("--workers", default="1,2", help="gunicorn worker counts")
    parser.add_argument("--facts", type=int, default=500, help="facts in the recall namespace")
    parser.add_argument("--no-write", action="store_true", help="print the section only")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    api_load.say("migrating the benchmark database ...")
    call_command("migrate", verbosity=0)
    fixture = api_load.prepare()
    remember_facts(fixture["namespace"], args.facts)
    if connection.vendor == "postgresql":  # autovacuum of the fresh rows would run mid-bench
        api_load.say("VACUUM ANALYZE ...")
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    postmaster = postmaster_pid(connection)
    tmp = Path(tempfile.mkdtemp(prefix="ttm-capacity-"))
    script = tmp / "script.lua"
    script.write_text(api_load.WRK_SCRIPT)
    api = "/api/memory"
    phases = [
        api_load.Phase(
            "append",
            "POST",
            [f"{api}/sessions/{pk}/messages/" for pk in fixture["appends"]],
            fixture["message"],
        ),
        api_load.Phase("recall", "POST", [f"{api}/facts/recall/"], {"query": QUERY, "k": 10}),
    ]
    runs: list[Run] = []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()
    try:
        for workers in [int(n) for n in args.workers.split(",")]:
            runs += measure(workers, phases, args, fixture["auth"], script, tmp, postmaster)
        api_load.check_appends(fixture)
    finally:
        api_load.cleanup(fixture)
    markdown = render(runs, args, started, load_before, os.getloadavg(), postmaster is not None)
    print(markdown)
    if not args.no_write:
        from bench.command import write_section

        write_section(ROOT / "docs" / "scaling.md", markdown, start=START, end=END)
        api_load.say("wrote the capacity section of docs/scaling.md\n")


def remember_facts(namespace: str, count: int) -> None:
    from ttmemory import services

    api_load.say(f"remembering {count} facts in {namespace} ...")
    for n in range(count):
        thing = THINGS[n % len(THINGS)]
        verb = VERBS[(n // len(THINGS)) % len(VERBS)]
        services.fact_remember(namespace=namespace, text=f"The user {verb} {thing} (note {n})")


def measure(
    workers: int,
    phases: list[api_load.Phase],
    args: Any,
    auth: str,
    script: Path,
    tmp: Path,
    postmaster: int | None,
) -> list[Run]:
    port = api_load.free_port()
    log = tmp / f"gunicorn-{workers}.log"
    api_load.say(f"starting gunicorn ({workers} workers) on 127.0.0.1:{port}")
    with log.open("w") as handle:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "bench.api_load:make_application()",
             "--workers", str(workers), "--bind", f"127.0.0.1:{port}", "--backlog", "2048",
             "--timeout", "60", "--chdir", str(ROOT)],
            cwd=ROOT, env=os.environ.copy(), stdout=handle, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    connections = 2 * workers
    runs: list[Run] = []
    try:
        api_load.wait_until_up(f"{base}/api/memory/namespace/", auth, server, log)
        for phase in phases:  # warm every worker: until a run completes requests (a worker
            for _ in range(5):  # still importing under load answers nothing at first)
                if api_load.run_wrk(base, phase, connections, 3, auth, script, tmp).rps > 0:
                    break
        for round_number in range(1, args.rounds + 1):
            for phase in phases:
                label = f"{phase.name}, {workers} worker(s), round {round_number}"
                pg_before, web_before = cpu_seconds(postmaster), cpu_seconds(server.pid)
                wall = time.monotonic()
                result = api_load.run_wrk(
                    base, phase, connections, args.duration, auth, script, tmp, label
                )
                wall = time.monotonic() - wall
                pg_after, web_after = cpu_seconds(postmaster), cpu_seconds(server.pid)
                pg = None if pg_before is None or pg_after is None else (pg_after - pg_before)
                web = (web_after or 0.0) - (web_before or 0.0)
                run = Run(
                    operation=phase.name,
                    workers=workers,
                    rps=result.rps,
                    p50_ms=result.p50_ms,
                    pg_cores=None if pg is None else pg / wall,
                    web_cores=web / wall,
                    errors=result.errors,
                )
                api_load.say(
                    f"{label}: {run.rps:,.1f} req/s, PostgreSQL "
                    f"{run.pg_cores or 0:.3f} cores, gunicorn {run.web_cores:.3f} cores, "
                    f"errors {run.errors}"
                )
                runs.append(run)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return runs


def postmaster_pid(connection: Any) -> int | None:
    """The local PostgreSQL server's postmaster (None: not on this machine or not readable)."""
    if connection.vendor != "postgresql":
        return None
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW data_directory")
            (directory,) = cursor.fetchone()
        return int((Path(directory) / "postmaster.pid").read_text().split()[0])
    except Exception:  # not a superuser, or another machine
        return None


def cpu_seconds(pid: int | None) -> float | None:
    """CPU seconds of a process, its live children and the children it has reaped."""
    if pid is None:
        return None
    import psutil

    try:
        parent = psutil.Process(pid)
        times = parent.cpu_times()
        total = times.user + times.system + times.children_user + times.children_system
        for child in parent.children(recursive=True):
            try:
                child_times = child.cpu_times()
                total += child_times.user + child_times.system
            except psutil.NoSuchProcess:
                pass
        return float(total)
    except psutil.NoSuchProcess:
        return None


def spread(values: list[float], digits: str = ",.0f") -> str:
    median = statistics.median(values)
    return f"{median:{digits}} ({min(values):{digits}}-{max(values):{digits}})"


def render(
    runs: list[Run],
    args: Any,
    started: str,
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
    local_pg: bool,
) -> str:
    lines = [
        START,
        f"Command: `.venv/bin/python bench/capacity.py --duration {args.duration} --rounds "
        f"{args.rounds} --workers {args.workers} --facts {args.facts}` (measured {started}). "
        f"Machine: {os.cpu_count()} cores ({api_load.cpu_model()}), {api_load.memory_gib()}, "
        "shared with other jobs during the run: load average "
        f"{load_before[0]:.1f} before and {load_after[0]:.1f} after (1 min), so absolute "
        "figures are low and noisy; each cell is the median of its rounds with the spread "
        "(min-max). PostgreSQL, gunicorn and wrk share the machine. Recall: k=10, hybrid, "
        f"default embedder, a namespace of {args.facts} facts. Two wrk connections per worker. "
        "On a machine this busy the processes wait for a core most of the time, so req/s "
        "is far below what the cores could do; the per-core columns (requests per CPU-second "
        "the process actually used) are the figures to plan with.",
        "",
        "| operation | gunicorn workers | req/s | PostgreSQL cores busy | req/s per PG core | "
        "gunicorn cores busy | req/s per gunicorn core | req/s per worker | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for operation in dict.fromkeys(run.operation for run in runs):
        for workers in dict.fromkeys(run.workers for run in runs):
            cell = [r for r in runs if r.operation == operation and r.workers == workers]
            if not cell:
                continue
            rps = [r.rps for r in cell]
            pg = [r.pg_cores for r in cell if r.pg_cores]
            per_pg = [r.rps / r.pg_cores for r in cell if r.pg_cores]
            web = [r.web_cores for r in cell]
            per_web = [r.rps / r.web_cores for r in cell if r.web_cores]
            lines.append(
                f"| {operation} | {workers} | {spread(rps)} | "
                f"{spread(pg, '.2f') if pg else 'n/a'} | "
                f"{spread(per_pg) if per_pg else 'n/a'} | {spread(web, '.2f')} | "
                f"{spread(per_web)} | {spread([v / workers for v in rps])} | "
                f"{sum(r.errors for r in cell)} |"
            )
    if not local_pg:
        lines += ["", "PostgreSQL was not on this machine (or not readable): no core figures."]
    lines.append(END)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
