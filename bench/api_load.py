"""REST API under load: the demo project served by gunicorn, driven by wrk on loopback.

    .venv/bin/python bench/api_load.py [--duration 15] [--rounds 3] [--connections 1,8,32]
                                       [--workers 2] [--no-write]

Measures requests per second and p50/p99 latency of appending one message (POST) and of
reading the newest 50 of 1,000 messages (GET), beside baselines served by the same gunicorn in
the same run: ``GET namespace/`` (authentication and namespace resolution, no memory work) and
the same append and read done in raw SQL by plain Django views this file adds (no DRF, no
authentication, no validation, no encryption, no token counting). Writes a section of
docs/benchmarks.md.

The server runs the demo's settings with DEBUG off, the write throttle off, and ttmemory's
defaults for background work (the demo learns every 4 messages, which without a broker would
run inside the request). Its database is the embedded PostgreSQL (``TTMEMORY_EMBEDDED_DB``,
default ``bench_api``) unless ``DATABASE_URL`` is set. Needs ``wrk`` (``apt-get install wrk``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")
os.environ.setdefault("TTMEMORY_EMBEDDED_DB", "bench_api")

START = "<!-- ttmemory_bench:api-load:start -->"
END = "<!-- ttmemory_bench:api-load:end -->"
RAW_SESSION = "ttmemory_bench_api_raw_session"
RAW_MESSAGE = "ttmemory_bench_api_raw_message"
APPEND_SESSIONS = 64  # appends go round-robin over these, as many conversations would
HISTORY = 1000  # messages in the session that is read
PAGE = 50

# wrk's script: requests cycle through the given paths; done() prints one line of JSON.
WRK_SCRIPT = r"""
local method, body, paths, headers, counter = "GET", nil, {}, {}, 0

function init(args)
  method = args[1]
  if args[2] ~= "-" then
    local file = io.open(args[2], "rb"); body = file:read("*a"); file:close()
  end
  headers["Authorization"] = args[3]
  headers["Content-Type"] = "application/json"
  for i = 4, #args do paths[#paths + 1] = args[i] end
end

function request()
  counter = counter + 1
  return wrk.format(method, paths[(counter % #paths) + 1], headers, body)
end

function done(summary, latency, requests)
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "non_2xx": %d, ' ..
    '"socket_errors": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


@dataclass
class Phase:
    name: str
    method: str
    paths: list[str]
    body: dict[str, Any] | None = None
    baseline: str = ""  # name of the phase it is compared with


@dataclass
class Result:
    phase: str
    connections: int
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int


# --- the server side: gunicorn imports this module ------------------------------------------


def make_application() -> Any:
    """The WSGI application gunicorn serves: the demo project plus the raw-SQL views."""
    from django.core.wsgi import get_wsgi_application

    application = get_wsgi_application()
    from django.conf import settings
    from django.test.utils import override_settings

    override_settings(
        DEBUG=False,
        ROOT_URLCONF="bench.api_load",
        TTMEMORY={
            **settings.TTMEMORY,
            "API_WRITE_RATE": None,
            "LEARN_EVERY": 0,
            "LEARN_IDLE_SECONDS": 0,
            "SUMMARISE_AT_TOKENS": 0,
        },
    ).enable()
    return application


def __getattr__(name: str) -> Any:
    """``urlpatterns``, for the server, where this module is the ROOT_URLCONF."""
    if name != "urlpatterns":
        raise AttributeError(name)
    from django.urls import path
    from django.views.decorators.csrf import csrf_exempt

    from demo_project.urls import urlpatterns

    append, recent = drf_views()
    return [
        path("bench/raw/<int:session_id>/append/", csrf_exempt(raw_append)),
        path("bench/raw/<int:session_id>/recent/", raw_recent),
        path("bench/drf/<int:session_id>/append/", append),
        path("bench/drf/<int:session_id>/recent/", recent),
        *urlpatterns,
    ]


def drf_views() -> tuple[Any, Any]:
    """The same raw SQL behind plain DRF views: DRF's own ``TokenAuthentication`` and
    ``IsAuthenticated``, ``request.data`` parsing and ``Response`` rendering, nothing of
    ttmemory (no validation, encryption or token counting)."""
    from rest_framework.authentication import TokenAuthentication
    from rest_framework.permissions import IsAuthenticated
    from rest_framework.response import Response
    from rest_framework.views import APIView

    class Plain(APIView):
        authentication_classes = [TokenAuthentication]
        permission_classes = [IsAuthenticated]

    class Append(Plain):
        def post(self, request: Any, session_id: int) -> Any:
            return Response({"seq": _raw_insert(request.data["message"], session_id)}, status=201)

    class Recent(Plain):
        def get(self, request: Any, session_id: int) -> Any:
            limit = int(request.query_params.get("limit", PAGE))
            return Response({"results": _raw_newest(session_id, limit)})

    return Append.as_view(), Recent.as_view()


def raw_append(request: Any, session_id: int) -> Any:
    """The append in plain SQL: bump the counter, insert the row, in one transaction."""
    from django.http import JsonResponse

    seq = _raw_insert(json.loads(request.body)["message"], session_id)
    return JsonResponse({"seq": seq}, status=201)


def _raw_insert(message: dict[str, Any], session_id: int) -> int:
    """Bump the session's counters and insert the row, in one transaction; the new seq."""
    from django.db import connection, transaction

    payload = json.dumps(message, ensure_ascii=False)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {RAW_SESSION} SET last_seq = last_seq + 1, message_count = message_count "
            "+ 1, token_count = token_count + %s WHERE id = %s RETURNING last_seq",
            [len(payload) // 4, session_id],
        )
        (seq,) = cursor.fetchone()
        cursor.execute(
            f"INSERT INTO {RAW_MESSAGE} (session_id, seq, role, data, token_count) "
            "VALUES (%s, %s, %s, %s, %s)",
            [session_id, seq, message["role"], payload, len(payload) // 4],
        )
    return int(seq)


def raw_recent(request: Any, session_id: int) -> Any:
    """The newest ``limit`` messages in plain SQL, oldest first."""
    from django.http import JsonResponse

    limit = int(request.GET.get("limit", PAGE))
    return JsonResponse({"results": _raw_newest(session_id, limit)})


def _raw_newest(session_id: int, limit: int) -> list[dict[str, Any]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT seq, data FROM {RAW_MESSAGE} WHERE session_id = %s ORDER BY seq DESC LIMIT %s",
            [session_id, limit],
        )
        rows = cursor.fetchall()
    return [{"seq": seq, "message": json.loads(data)} for seq, data in reversed(rows)]


# --- the driver --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=15, help="seconds per row, all rounds")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per row")
    parser.add_argument("--connections", default="1,8,32", help="comma-separated levels")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn sync workers")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args()
    levels = [int(n) for n in args.connections.split(",")]
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install -y wrk")

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    say("migrating the benchmark database ...")
    call_command("migrate", verbosity=0)
    fixture = prepare()
    port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="ttm-api-load-"))
    script = tmp / "script.lua"
    script.write_text(WRK_SCRIPT)
    log = tmp / "gunicorn.log"
    say(f"starting gunicorn ({args.workers} workers) on 127.0.0.1:{port}; log in {log}")
    with log.open("w") as handle:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "bench.api_load:make_application()",
             "--workers", str(args.workers), "--bind", f"127.0.0.1:{port}",
             "--backlog", "2048", "--timeout", "60", "--chdir", str(ROOT)],
            cwd=ROOT, env=os.environ.copy(), stdout=handle, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    phases = make_phases(fixture)
    try:
        wait_until_up(f"{base}/api/memory/namespace/", fixture["auth"], server, log)
        load_before = os.getloadavg()[0]
        results = measure(base, phases, levels, args, fixture["auth"], script, tmp)
        load_after = os.getloadavg()[0]
        check_appends(fixture)
    finally:
        server.terminate()
        server.wait(timeout=30)
        cleanup(fixture)
    versions = {
        "database": database_version(connection),
        "source": "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded server",
        "gunicorn": gunicorn_version(),
        "wrk": wrk_version(),
        "load": f"{load_before:.1f} before, {load_after:.1f} after",
    }
    markdown = render(results, phases, args, versions)
    print(markdown)
    if not args.no_write:
        from bench.command import write_section

        write_section(ROOT / "docs" / "benchmarks.md", markdown, start=START, end=END)
        say("wrote the api-load section of docs/benchmarks.md\n")


def measure(
    base: str,
    phases: list[Phase],
    levels: list[int],
    args: Any,
    auth: str,
    script: Path,
    tmp: Path,
) -> list[Result]:
    """Per concurrency level, ``args.rounds`` rounds that each run every phase once, so a
    disturbance of the machine hits all rows alike; a row is the median of its rounds."""
    say("warming up (tokenizer, connections, caches of both workers) ...")
    for phase in phases:
        run_wrk(base, phase, 4, 2, auth, script, tmp)
    seconds = max(1, round(args.duration / args.rounds))
    results: list[Result] = []
    runs = 0
    total = len(phases) * len(levels) * args.rounds
    for connections in levels:
        rounds: dict[str, list[Result]] = {phase.name: [] for phase in phases}
        for round_number in range(1, args.rounds + 1):
            for phase in phases:
                runs += 1
                plural = "s" if connections != 1 else ""
                label = (
                    f"[{runs}/{total}] {phase.name}, {connections} connection{plural}, "
                    f"round {round_number}"
                )
                result = run_wrk(base, phase, connections, seconds, auth, script, tmp, label)
                say(
                    f"{label}: {result.rps:,.0f} req/s, p50 {result.p50_ms:.1f} ms, "
                    f"p99 {result.p99_ms:.1f} ms, errors {result.errors}"
                )
                rounds[phase.name].append(result)
        for phase in phases:
            done = rounds[phase.name]
            results.append(
                Result(
                    phase=phase.name,
                    connections=connections,
                    rps=statistics.median(r.rps for r in done),
                    p50_ms=statistics.median(r.p50_ms for r in done),
                    p99_ms=statistics.median(r.p99_ms for r in done),
                    errors=sum(r.errors for r in done),
                )
            )
    return results


def say(text: str) -> None:
    print(f"\r{text}\033[K" if TTY else text, file=sys.stderr, flush=True)


TTY = sys.stderr.isatty()


def prepare() -> dict[str, Any]:
    """A user with a token, the sessions to append to, one of 1,000 messages to read, and the
    raw tables with the same history."""
    from django.contrib.auth.models import User
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from bench.session_memory import sample_message
    from ttmemory import services

    stamp = time.strftime("%Y%m%d%H%M%S")
    user = User.objects.create_user(f"bench-api-{stamp}-{os.getpid()}")
    token = Token.objects.create(user=user)
    namespace = f"user-{user.pk}"
    say(f"namespace {namespace}: {APPEND_SESSIONS} sessions to append to, {HISTORY:,} to read")
    history = [sample_message(i) for i in range(HISTORY)]
    appends = []
    for n in range(APPEND_SESSIONS):
        session = services.session_open(namespace=namespace, key=f"append-{n}")
        # Conversations under way: 1 to 32 messages each, so the episodic index job (which
        # runs inline without a broker) comes at its steady rate, once per MESSAGE_INDEX_EVERY
        # appends of a session, not on every session's first message during the measurement.
        services.message_add_many(session=session, messages=history[: n % 32 + 1])
        appends.append(session.pk)
    read = services.session_open(namespace=namespace, key="history")
    for start in range(0, HISTORY, 100):
        services.message_add_many(session=read, messages=history[start : start + 100])

    with connection.cursor() as cursor:
        for table in (RAW_MESSAGE, RAW_SESSION):
            cursor.execute(f"DROP TABLE IF EXISTS {table}")
        cursor.execute(
            f"CREATE TABLE {RAW_SESSION} (id BIGINT PRIMARY KEY, last_seq BIGINT NOT NULL "
            "DEFAULT 0, message_count BIGINT NOT NULL DEFAULT 0, token_count BIGINT NOT NULL "
            "DEFAULT 0)"
        )
        cursor.execute(
            f"CREATE TABLE {RAW_MESSAGE} (id BIGSERIAL PRIMARY KEY, session_id BIGINT NOT NULL, "
            "seq BIGINT NOT NULL, role VARCHAR(16) NOT NULL, data TEXT NOT NULL, "
            "token_count INTEGER NOT NULL, UNIQUE (session_id, seq))"
            if connection.vendor == "postgresql"
            else f"CREATE TABLE {RAW_MESSAGE} (id INTEGER PRIMARY KEY AUTOINCREMENT, "
            "session_id BIGINT NOT NULL, seq BIGINT NOT NULL, role VARCHAR(16) NOT NULL, "
            "data TEXT NOT NULL, token_count INTEGER NOT NULL, UNIQUE (session_id, seq))"
        )
        cursor.executemany(
            f"INSERT INTO {RAW_SESSION} (id) VALUES (%s)",
            [(n,) for n in range(APPEND_SESSIONS + 1)],
        )
        rows = [
            (APPEND_SESSIONS, i + 1, m["role"], json.dumps(m), len(json.dumps(m)) // 4)
            for i, m in enumerate(history)
        ]
        cursor.executemany(
            f"INSERT INTO {RAW_MESSAGE} (session_id, seq, role, data, token_count) "
            "VALUES (%s, %s, %s, %s, %s)",
            rows,
        )
        cursor.execute(
            f"UPDATE {RAW_SESSION} SET last_seq = %s, message_count = %s WHERE id = %s",
            [HISTORY, HISTORY, APPEND_SESSIONS],
        )
    return {
        "namespace": namespace,
        "user": user,
        "auth": f"Token {token.key}",
        "appends": appends,
        "read": read.pk,
        "message": {"message": sample_message(0)},
    }


def make_phases(fixture: dict[str, Any]) -> list[Phase]:
    api = "/api/memory"
    return [
        Phase("GET namespace/ (auth + namespace only)", "GET", [f"{api}/namespace/"]),
        Phase(
            "POST messages/ (append one)",
            "POST",
            [f"{api}/sessions/{pk}/messages/" for pk in fixture["appends"]],
            fixture["message"],
            baseline="raw SQL append (plain Django view)",
        ),
        Phase(
            "raw SQL append (plain Django view)",
            "POST",
            [f"/bench/raw/{n}/append/" for n in range(APPEND_SESSIONS)],
            fixture["message"],
        ),
        Phase(
            "raw SQL append (plain DRF view, token auth)",
            "POST",
            [f"/bench/drf/{n}/append/" for n in range(APPEND_SESSIONS)],
            fixture["message"],
        ),
        Phase(
            f"GET messages/?limit={PAGE} (of {HISTORY:,})",
            "GET",
            [f"{api}/sessions/{fixture['read']}/messages/?limit={PAGE}"],
            baseline="raw SQL newest 50 (plain Django view)",
        ),
        Phase(
            "raw SQL newest 50 (plain Django view)",
            "GET",
            [f"/bench/raw/{APPEND_SESSIONS}/recent/?limit={PAGE}"],
        ),
        Phase(
            "raw SQL newest 50 (plain DRF view, token auth)",
            "GET",
            [f"/bench/drf/{APPEND_SESSIONS}/recent/?limit={PAGE}"],
        ),
    ]


def run_wrk(
    base: str,
    phase: Phase,
    connections: int,
    duration: int,
    auth: str,
    script: Path,
    tmp: Path,
    label: str = "",
) -> Result:
    body = "-"
    if phase.body is not None:
        body_file = tmp / "body.json"
        body_file.write_text(json.dumps(phase.body))
        body = str(body_file)
    command = [
        "wrk", f"--threads={min(connections, 2)}", f"--connections={connections}",
        f"--duration={duration}s", "--timeout=10s", f"--script={script}", base,
        "--", phase.method, body, auth, *phase.paths,
    ]  # fmt: skip
    ticker = Ticker(label, duration)
    ticker.start()
    try:
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    finally:
        ticker.stop()
    line = [row for row in output.splitlines() if row.startswith("{")][-1]
    data = json.loads(line)
    return Result(
        phase=phase.name,
        connections=connections,
        rps=data["requests"] / (data["duration_us"] / 1e6),
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        errors=data["non_2xx"] + data["socket_errors"],
    )


class Ticker(threading.Thread):
    """The running phase and its seconds left, rewritten in place on a terminal."""

    def __init__(self, label: str, seconds: int) -> None:
        super().__init__(daemon=True)
        self.label, self.seconds = label, seconds
        self.stopped = threading.Event()

    def run(self) -> None:
        if not (TTY and self.label):
            return
        for left in range(self.seconds, 0, -1):
            print(f"\r{self.label}: {left} s left\033[K", end="", file=sys.stderr, flush=True)
            if self.stopped.wait(1):
                return

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def check_appends(fixture: dict[str, Any]) -> None:
    """Every append the API answered is stored with gap-free seqs (a load test that loses
    writes would measure the wrong thing)."""
    from django.db.models import Count, Max

    from ttmemory.models import Message

    rows = Message.objects.filter(session_id__in=fixture["appends"]).values("session_id")
    stats = rows.annotate(n=Count("id"), top=Max("seq"))
    bad = [row for row in stats if row["n"] != row["top"]]
    if bad:
        raise SystemExit(f"appends lost or duplicated: {bad[:3]}")
    say(f"checked: {sum(row['n'] for row in stats):,} appended messages, seqs gap-free")


def cleanup(fixture: dict[str, Any]) -> None:
    from django.db import connection

    from ttmemory import services

    services.namespace_erase(namespace=fixture["namespace"])
    fixture["user"].delete()
    with connection.cursor() as cursor:
        for table in (RAW_MESSAGE, RAW_SESSION):
            cursor.execute(f"DROP TABLE IF EXISTS {table}")


def wait_until_up(url: str, auth: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited:\n{log.read_text()}")
        try:
            request = urllib.request.Request(url, headers={"Authorization": auth})
            with urllib.request.urlopen(request, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer within 60 s:\n{log.read_text()}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_version(connection: Any) -> str:
    if connection.vendor == "postgresql":
        major, minor = divmod(connection.pg_version, 10000)
        return f"PostgreSQL {major}.{minor}"
    return f"SQLite {connection.Database.sqlite_version}"


def gunicorn_version() -> str:
    from importlib.metadata import version

    return version("gunicorn")


def wrk_version() -> str:
    output = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout
    return output.split()[1] if output else "?"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return "?"


def render(results: list[Result], phases: list[Phase], args: Any, versions: dict[str, str]) -> str:
    by_key = {(r.phase, r.connections): r for r in results}
    baseline_of = {p.name: p.baseline for p in phases}
    namespace_phase = phases[0].name
    lines = [
        START,
        "## REST API under load: gunicorn + wrk",
        "",
        f"Command: `.venv/bin/python bench/api_load.py --duration {args.duration} --rounds "
        f"{args.rounds} --connections {args.connections} --workers {args.workers}` (measured "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 1-minute load average "
        f"{versions['load']}). Machine: {os.cpu_count()} "
        f"cores ({cpu_model()}), {memory_gib()}, Python {platform.python_version()}; server, "
        f"database and load generator share it. Server: gunicorn {versions['gunicorn']}, "
        f"{args.workers} sync workers, the demo project with DEBUG off, no write throttle and "
        "no background learning; "
        f"{versions['database']} ({versions['source']}, same machine). Load: wrk "
        f"{versions['wrk']} on "
        f"loopback, {args.duration} s per row in {args.rounds} interleaved rounds (each row "
        "the median of its rounds: the machine is shared), a DRF token on every request; "
        "appends go "
        f"round-robin over {APPEND_SESSIONS} sessions of the caller's namespace, each already "
        "holding 1 to 32 messages (the episodic index job, inline without a broker, then comes "
        "at its steady rate instead of on every session's first message).",
        "",
        "Baselines, served by the same gunicorn in the same run: `GET namespace/` is DRF with "
        "token authentication and namespace resolution and no memory work; the raw SQL rows "
        "do the same statements on tables of the same shape (bump the session's counters and "
        "insert the row in one transaction; select the newest 50 rows and decode their JSON), "
        "once behind plain Django views (no DRF, no authentication, no validation, no "
        "encryption, no token counting) and once behind plain DRF views (DRF's "
        "`TokenAuthentication` and `IsAuthenticated`, `request.data`, `Response`; nothing of "
        "ttmemory). The last column is the API's throughput as a share of each baseline's at "
        "the same concurrency (issue 36's target: >= 60% of the plain Django view).",
        "",
        "| connections | operation | req/s | p50 (ms) | p99 (ms) | errors | vs baseline |",
        "|---:|---|---:|---:|---:|---:|---|",
    ]
    for connections in sorted({r.connections for r in results}):
        for phase in phases:
            row = by_key.get((phase.name, connections))
            if row is None:
                continue
            versus = ""
            if baseline_of[phase.name]:
                raw = by_key[(baseline_of[phase.name], connections)]
                drf = by_key.get(
                    (
                        baseline_of[phase.name].replace("Django view", "DRF view, token auth"),
                        connections,
                    )
                )
                auth = by_key[(namespace_phase, connections)]
                versus = f"{row.rps / raw.rps:.0%} of the plain Django view"
                if drf is not None:
                    versus += f"; {row.rps / drf.rps:.0%} of the plain DRF view"
                versus += f"; {row.rps / auth.rps:.0%} of namespace/"
            lines.append(
                f"| {connections} | {phase.name} | {row.rps:,.0f} | {row.p50_ms:.1f} | "
                f"{row.p99_ms:.1f} | {row.errors} | {versus} |"
            )
    lines.append(END)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
