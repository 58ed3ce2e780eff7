"""Acknowledged writes under faults: concurrent appenders while their PostgreSQL backends are
terminated and the appender processes are killed with SIGKILL; then every acknowledged write
must be stored exactly once, in order, with gap-free seqs.

    .venv/bin/python bench/faults.py [--seconds 60] [--appenders 4] [--sessions 2] [--kills 4]

Appenders are processes calling the public API (``ttmemory.memory.message_add``), each writing
``"<appender>:<n>"`` for n = 0, 1, 2, ... into the shared sessions in turn, and printing an
acknowledgement (appender, n, session, seq) once the call has returned. A failed call is not
retried (so it can never be stored twice): it is not acknowledged, and may or may not be
stored (a backend terminated after its commit: "in doubt"). Meanwhile this process
``pg_terminate_backend``s one of the appenders' backends (``application_name`` ``ttm-faults``)
every 20-100 ms, and ``kill -9``s an appender ``--kills`` times, evenly spread, starting a new
one each time. Afterwards: lost (acknowledged, not stored at its session and seq), duplicated
(a write stored twice), out of order (an appender's writes not in seq order), seq gaps.
Exits 1 when any of those is not 0.

PostgreSQL only: ``DATABASE_URL`` (loopback) or the embedded server (database
``bench_faults``). Bounded: the appenders' start (at most 120 s), ``--seconds`` of load, then
at most 30 s to stop. Progress every 5 s. Figures: docs/benchmarks.md, "Faults".
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")
os.environ.setdefault("TTMEMORY_EMBEDDED_DB", "bench_faults")

APPLICATION_NAME = "ttm-faults"
START_TIMEOUT = 120.0  # seconds the appenders may take to start (a bound)
NAMESPACE = "bench-faults"


def setup(application_name: str) -> None:
    """Django with the demo's settings, this process's connections named, no background work."""
    from django.conf import settings

    options = settings.DATABASES["default"].setdefault("OPTIONS", {})
    options["application_name"] = application_name
    import django

    django.setup()
    from django.test.utils import override_settings

    override_settings(
        TTMEMORY={
            **settings.TTMEMORY,
            "LEARN_EVERY": 0,
            "LEARN_IDLE_SECONDS": 0,
            "SUMMARISE_AT_TOKENS": 0,
        }
    ).enable()


# -- an appender process ---------------------------------------------------------------------


def appender(name: str, session_ids: list[int], stop: Path, until: float) -> None:
    """Append until the file ``stop`` exists (at the latest ``until``, epoch seconds): one line
    per call on stdout, and ``ready`` after the first."""
    setup(APPLICATION_NAME)
    from django.db import DatabaseError, InterfaceError, connection

    from ttmemory import memory
    from ttmemory.models import MemorySession

    sessions: list[Any] = []
    while not sessions and time.time() < until:
        try:
            sessions = [MemorySession.objects.get(pk=pk) for pk in session_ids]
        except (DatabaseError, InterfaceError) as exc:  # a terminated backend: connect again
            print(f"err {name} -1 {type(exc).__name__}", flush=True)
            connection.close()
    n = 0
    while time.time() < until and not stop.exists():
        if n == 1:  # its first call made (the write path's first call imports and compiles)
            print(f"ready {name} 0", flush=True)
        session = sessions[n % len(sessions)]
        try:
            row = memory.message_add(
                session=session, message={"role": "user", "content": f"{name}:{n}"}
            )
        except Exception as exc:
            print(f"err {name} {n} {type(exc).__name__}", flush=True)
            connection.close()
        else:
            print(f"ack {name} {n} {session.pk} {row.seq}", flush=True)
        n += 1


# -- the run ---------------------------------------------------------------------------------


class Run:
    def __init__(self, args: argparse.Namespace, session_ids: list[int]) -> None:
        self.args = args
        self.session_ids = session_ids
        # Appenders stop when this file exists, or at the latest (a bound) at self.until.
        self.stop_file = Path(tempfile.mkdtemp(prefix="ttm-faults-")) / "stop"
        self.until = time.time() + args.seconds + 2 * START_TIMEOUT
        self.ready: set[str] = set()
        self.acks: dict[tuple[str, int], tuple[int, int]] = {}
        self.errors: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.processes: dict[str, subprocess.Popen[str]] = {}
        self.readers: list[threading.Thread] = []
        self.started = 0
        self.kills = 0
        self.terminated = 0
        self.terminated_busy = 0
        self.stop = threading.Event()
        self.env = {**os.environ, "DATABASE_URL": this_database_url()}

    def start_appender(self) -> None:
        name = f"a{self.started}"
        self.started += 1
        ids = ",".join(map(str, self.session_ids))
        command = [sys.executable, __file__, "--appender", name, ids, str(self.stop_file)]
        command.append(str(self.until))
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=self.env
        )
        self.processes[name] = process
        reader = threading.Thread(target=self.read, args=(process,), daemon=True)
        reader.start()
        self.readers.append(reader)

    def read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if not line.startswith(("ack ", "err ", "ready ")):
                print(f"  appender: {line.rstrip()}", flush=True)
                continue
            kind, name, n, *rest = line.split()
            with self.lock:
                if kind == "ready":
                    self.ready.add(name)
                elif kind == "ack":
                    self.acks[(name, int(n))] = (int(rest[0]), int(rest[1]))
                else:
                    self.errors[rest[0]] += 1

    def terminate_backends(self) -> None:
        """One appender backend terminated every 20-100 ms (its own connection, never theirs)."""
        from django.db import connection

        while not self.stop.wait(random.uniform(0.02, 0.1)):
            try:
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT state, pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE application_name = %s AND datname = current_database() "
                        "ORDER BY random() LIMIT 1",
                        [APPLICATION_NAME],
                    )
                    row = cursor.fetchone()
            except Exception as exc:
                print(f"terminator: {exc}", flush=True)
                connection.close()
                continue
            if row is not None and row[1]:
                self.terminated += 1
                self.terminated_busy += row[0] != "idle"
        connection.close()

    def main(self) -> None:
        args = self.args
        for _ in range(args.appenders):
            self.start_appender()
        # The load starts once every appender has started (Django's start-up takes seconds).
        deadline = time.monotonic() + START_TIMEOUT
        while len(self.ready) < args.appenders:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {len(self.ready)} appenders started")
            time.sleep(0.1)
        print(f"  {args.appenders} appenders started", flush=True)
        terminator = threading.Thread(target=self.terminate_backends, daemon=True)
        terminator.start()
        start = time.monotonic()
        kill_at = [start + args.seconds * (k + 1) / (args.kills + 1) for k in range(args.kills)]
        report_at = start + 5
        while time.monotonic() < start + args.seconds:
            time.sleep(0.05)
            now = time.monotonic()
            if kill_at and now >= kill_at[0]:
                kill_at.pop(0)
                name = random.choice([n for n, p in self.processes.items() if p.poll() is None])
                os.kill(self.processes[name].pid, signal.SIGKILL)
                self.processes[name].wait()
                self.kills += 1
                print(f"  kill -9 appender {name} (pid {self.processes[name].pid})", flush=True)
                self.start_appender()
            if now >= report_at:
                report_at += 5
                with self.lock:
                    acks, errors = len(self.acks), sum(self.errors.values())
                print(
                    f"  {now - start:5.1f} s: {acks} acknowledged, {errors} failed calls, "
                    f"{self.terminated} backends terminated, {self.kills} kills",
                    flush=True,
                )
        self.stop_file.touch()
        deadline = time.monotonic() + 30
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.stop.set()
        terminator.join(10)
        for reader in self.readers:
            reader.join(10)
        shutil.rmtree(self.stop_file.parent, ignore_errors=True)


def this_database_url() -> str:
    """This process's database as a URL for the appenders (the embedded server is started
    once, here: a second process would wait for its lock)."""
    from django.db import connection

    config = connection.settings_dict
    host = quote(str(config["HOST"] or "127.0.0.1"), safe="")
    password = f":{quote(config['PASSWORD'])}" if config["PASSWORD"] else ""
    return f"postgres://{config['USER']}{password}@{host}:{config['PORT']}/{config['NAME']}"


def check(run: Run) -> dict[str, int]:
    """Compare what was acknowledged with what is stored."""
    from ttmemory.models import Message

    stored: dict[tuple[str, int], list[tuple[int, int]]] = {}
    gaps = out_of_order = 0
    for session_id in run.session_ids:
        rows = list(Message.objects.filter(session_id=session_id).order_by("seq"))
        seqs = [row.seq for row in rows]
        gaps += sum(1 for a, b in zip([0, *seqs], seqs, strict=False) if b != a + 1)
        last: dict[str, int] = {}
        for row in rows:
            name, n = str(row.data["content"]).split(":")
            stored.setdefault((name, int(n)), []).append((session_id, row.seq))
            out_of_order += last.get(name, -1) >= int(n)
            last[name] = int(n)
    lost = sum(1 for write, where in run.acks.items() if stored.get(write) != [where])
    duplicated = sum(len(places) - 1 for places in stored.values())
    in_doubt = sum(1 for write in stored if write not in run.acks)
    return {
        "acknowledged": len(run.acks),
        "stored": sum(len(places) for places in stored.values()),
        "failed calls": sum(run.errors.values()),
        "stored, not acknowledged (in doubt)": in_doubt,
        "lost": lost,
        "duplicated": duplicated,
        "out of order": out_of_order,
        "seq gaps": gaps,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="seconds of load (at most 600)")
    parser.add_argument("--appenders", type=int, default=4, help="appender processes at once")
    parser.add_argument("--sessions", type=int, default=2, help="sessions they share")
    parser.add_argument("--kills", type=int, default=4, help="appenders killed with SIGKILL")
    parser.add_argument("--appender", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.appender:
        name, ids, stop, until = args.appender
        appender(name, [int(i) for i in ids.split(",")], Path(stop), float(until))
        return 0
    if not 0 < args.seconds <= 600 or not 1 <= args.appenders <= 16 or args.kills > 50:
        parser.error("bounded: 0 < --seconds <= 600, 1 <= --appenders <= 16, --kills <= 50")

    setup("ttm-faults-controller")
    from django.core.management import call_command
    from django.db import connection

    from ttmemory import memory

    if connection.vendor != "postgresql":
        parser.error("PostgreSQL only (pg_terminate_backend)")
    call_command("migrate", verbosity=0)
    stamp = f"{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}"
    session_ids = [
        memory.session_open(namespace=NAMESPACE, key=f"{stamp}-{s}").pk
        for s in range(args.sessions)
    ]
    print(
        f"faults: {args.appenders} appenders on {args.sessions} sessions for {args.seconds:g} s, "
        f"{args.kills} kill -9, a backend terminated every 20-100 ms "
        f"(PostgreSQL {getattr(connection, 'pg_version', 0) // 10000}, "
        f"database {connection.settings_dict['NAME']})",
        flush=True,
    )
    run = Run(args, session_ids)
    started = time.monotonic()
    run.main()
    figures = {
        "backends terminated": run.terminated,
        "  of them in a statement or transaction": run.terminated_busy,
        "appenders killed (kill -9)": run.kills,
        **check(run),
    }
    print(f"done in {time.monotonic() - started:.0f} s; failed calls by error: {dict(run.errors)}")
    for name, value in figures.items():
        print(f"  {name}: {value}")
    memory.namespace_erase(namespace=NAMESPACE)
    bad = sum(figures[k] for k in ("lost", "duplicated", "out of order", "seq gaps"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
