"""Shared fixtures: a session to write into, raw SQL access for at-rest checks, and a database
on this machine's PostgreSQL 15 without pgvector."""

from __future__ import annotations

import fnmatch
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.cache import cache
from django.db import connection, connections

from ttmemory import memory
from ttmemory.models import MemorySession

# `TTMEMORY_TEST_POOLER=pgbouncer pytest ...` runs the chosen tests through a private PgBouncer
# in transaction mode (./dev test does, for the contract, lock and API concurrency suites).
POOLER = os.environ.get("TTMEMORY_TEST_POOLER", "")


def pytest_report_header() -> str:
    """The run's random blind-index key (tests/settings.py): HashEmbedder's vectors are keyed
    hashes, so a ranking that fails with one key can be replayed with the same key."""
    key = os.environ.get("TTMEMORY_TEST_BLIND_KEY", "(not set yet)")
    return f"ttmemory: TTMEMORY_TEST_BLIND_KEY={key} (export it to replay this run's rankings)"


# The slow subprocess and soak tests (a fresh project from the README, real Celery workers and
# their kill, the browser, the TypeScript client's tsc, revocation through real servers): marked
# ``once``. `./dev test` runs them in its PostgreSQL pass and deselects them (-m "not once") in
# every other pass (tests/README.md).
ONCE = (
    "tests/quickstart/",
    "tests/examples/",
    "tests/docs/",
    "tests/learning/test_celery_scale.py",
    "tests/learning/test_celery_worker.py",
    "tests/e2e/",
    "tests/backends/test_webhook_celery.py",
    "tests/telemetry/test_celery.py",
    "tests/api/test_clients.py::test_the_typescript_client_runs_a_frontends_turns",
    "tests/security/test_revocation_processes.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(ONCE):
            item.add_marker(pytest.mark.once)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = sorted(items, key=_schedule_order(items))


def _schedule_order(items: list[pytest.Item]) -> Any:
    """Whole files in the order pytest-xdist should hand them out (./dev test passes
    --no-loadscope-reorder): the files with ``once`` tests first, in ONCE's order (slowest
    first: the fresh-venv quickstart alone is minutes of one worker), then the others by their
    number of tests, most first, as xdist's own reorder does. Handed out last, the quickstart
    kept one worker busy while the other had nothing left."""
    per_file: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        per_file[path] = per_file.get(path, 0) + 1

    def key(item: pytest.Item) -> tuple[int, int, str]:
        path = item.nodeid.split("::")[0]
        once = (n for n, prefix in enumerate(ONCE) if path.startswith(prefix.split("::")[0]))
        first = next(once, None)
        if first is not None:
            return (0, first, path)
        return (1, -per_file[path], path)

    return key


# The skip check: with TTMEMORY_TEST_PASS=<pass> (set by `./dev test`), every skip of the run
# must match a line of tests/skips-allowed.txt for that pass, or the run fails. A missing
# browser, server or tool then fails CI instead of hiding behind a skip.
ALLOWED_SKIPS = Path(__file__).resolve().parent / "skips-allowed.txt"


def allowed_skips(pass_name: str) -> list[tuple[str, str]]:
    """(node id pattern, reason pattern) pairs allowed to skip in ``pass_name``."""
    allowed = []
    for raw in ALLOWED_SKIPS.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        passes, nodeid, reason = (part.strip() for part in line.split(" | "))
        if any(fnmatch.fnmatchcase(pass_name, p) for p in passes.split(",")):
            allowed.append((nodeid, reason))
    return allowed


class SkipCheck:
    """Collects the run's skips (in the controller of an xdist run) and compares them."""

    def __init__(self, pass_name: str) -> None:
        self.pass_name = pass_name
        self.skips: list[tuple[str, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            longrepr = report.longrepr
            reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            self.skips.append((report.nodeid, reason.removeprefix("Skipped: ")))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        allowed = allowed_skips(self.pass_name)
        unexpected = [
            (nodeid, reason)
            for nodeid, reason in self.skips
            if not any(
                fnmatch.fnmatchcase(nodeid, n) and fnmatch.fnmatchcase(reason, r)
                for n, r in allowed
            )
        ]
        report = Path(session.config.rootpath) / ".data" / f"skips-{self.pass_name}.txt"
        report.parent.mkdir(exist_ok=True)
        report.write_text("".join(f"{n} | {r}\n" for n, r in sorted(set(self.skips))))
        self.unexpected = unexpected
        if unexpected and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        unexpected = getattr(self, "unexpected", [])
        terminalreporter.write_line(
            f"skip check ({self.pass_name}): {len(self.skips)} skipped, "
            f"{len(unexpected)} not allowed by tests/skips-allowed.txt"
        )
        for nodeid, reason in unexpected:
            terminalreporter.write_line(f"UNEXPECTED SKIP {nodeid}: {reason}", red=True, bold=True)


def pytest_configure(config: pytest.Config) -> None:
    pass_name = os.environ.get("TTMEMORY_TEST_PASS", "")
    if pass_name and not hasattr(config, "workerinput"):
        config.pluginmanager.register(SkipCheck(pass_name), "ttmemory-skip-check")


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Each test starts with an empty cache: the API's write throttle counts requests per user
    id there, and ids repeat across tests (a busy suite would otherwise be throttled). Nor
    does it see BM25 statistics kept by an earlier test's namespace of the same name (large
    namespaces keep theirs 30 s per process: ``recall``, ``episodes``)."""
    from ttmemory.longterm import episodes, recall

    cache.clear()
    recall._stats.clear()
    episodes._stats.clear()
    episodes._frequent.clear()
    episodes._pending_postings.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """No background index job (INDEX_IN_BACKGROUND) outlives the test that queued it: it
    would write into the next test's tables, or hold a connection while they are flushed
    (waited for here, before the test's fixtures are torn down)."""
    try:
        return (yield)
    finally:
        from ttmemory import jobs

        if not jobs.drain(60):
            raise AssertionError("a background index job was still running 60 s after its test")


@pytest.fixture(scope="session", autouse=True)
def _through_pgbouncer(request: pytest.FixtureRequest) -> Iterator[None]:
    """With TTMEMORY_TEST_POOLER=pgbouncer: once the test database exists (created directly on
    the server), every connection of the run, of its threads and of the worker processes it
    starts goes through a PgBouncer in transaction mode, configured as docs/scaling.md says
    (``TTMEMORY["POOLED"]``, no prepared statements, no server-side cursors)."""
    if not POOLER:
        yield
        return
    if POOLER != "pgbouncer":
        pytest.fail(f"TTMEMORY_TEST_POOLER={POOLER!r}: only 'pgbouncer' is known", pytrace=False)
    from tests.pgbouncer import running_pgbouncer

    request.getfixturevalue("django_db_setup")
    database = connections.settings["default"]
    if database["ENGINE"] != "django.db.backends.postgresql":
        pytest.fail("TTMEMORY_TEST_POOLER=pgbouncer needs PostgreSQL", pytrace=False)
    saved = dict(database)
    with running_pgbouncer(saved) as bouncer:
        connections.close_all()
        # In place: every thread's connection is built from this one dict.
        database.update(bouncer.settings(saved), DISABLE_SERVER_SIDE_CURSORS=True)
        # Worker processes read tests.settings again: they follow these variables.
        os.environ["TTMEMORY_TEST_PGBOUNCER_PORT"] = str(bouncer.port)
        try:
            yield
            # Proof the run went through the pooler (its statistics, not our settings).
            assert bouncer.transactions(database["NAME"]) > 0, "nothing went through PgBouncer"
        finally:
            connections.close_all()
            database.clear()
            database.update(saved)
            os.environ.pop("TTMEMORY_TEST_PGBOUNCER_PORT", None)


SYSTEM_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
RESTART = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"


@pytest.fixture
def system_postgres_database() -> Iterator[str]:
    """The URL of a fresh database on the system PostgreSQL 15 (127.0.0.1:5432, user postgres,
    trust auth, no pgvector), dropped afterwards. A required service: unreachable, it fails."""
    name = f"ttm_nopgvector_{uuid.uuid4().hex[:10]}"
    try:
        admin = psycopg.connect(SYSTEM_PG, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"the system PostgreSQL at 127.0.0.1:5432 is required ({exc}); start it: {RESTART}"
        )
    with admin:
        has_pgvector = admin.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        assert has_pgvector is None, "this test needs a server without pgvector"
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"postgres://postgres@127.0.0.1:5432/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def session(db: Any) -> MemorySession:
    return memory.session_open(namespace="user-1", key="chat-1")


def raw_rows(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """Run plain SQL on the test database, bypassing the ORM and its decryption."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return list(cursor.fetchall())


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool_call(call_ids: list[str], name: str = "lookup") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": '{"q": 1}'}}
            for cid in call_ids
        ],
    }


def tool_result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}
