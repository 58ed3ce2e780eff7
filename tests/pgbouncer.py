"""Private PgBouncer processes in transaction mode for tests: loopback only, always stopped.

Each pooler gets a free port and a temporary directory, and forwards every database name
(``* =``) to the PostgreSQL server the test settings name (the embedded server's Unix socket,
or ``DATABASE_URL``'s host). Its pool is small, so clients really share server connections:
whatever a client leaves on a server connection (a session ``SET``, a prepared statement, a
session-level advisory lock) is met by the next client. Waits are bounded, so a broken
``pgbouncer`` fails the test instead of hanging it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.backends.redis_servers import free_port

START_TIMEOUT = 10.0
PGBOUNCER = "/usr/sbin/pgbouncer"


def require_pgbouncer() -> str:
    """The ``pgbouncer`` binary; fails the calling test when this machine has none.

    A required service that is missing fails the run, never skips it: ``./dev test`` installs
    Debian's pgbouncer when it is missing.
    """
    found = shutil.which("pgbouncer") or (PGBOUNCER if os.path.exists(PGBOUNCER) else None)
    if not found:
        pytest.fail(
            "pgbouncer not found: the transaction-pooling tests need it "
            "(./dev test installs it: apt-get install pgbouncer)",
            pytrace=False,
        )
    return found


def _run_as(host: str) -> str | None:
    """PgBouncer refuses to run as root: as root, run it as the owner of the server's socket
    folder (the embedded server keeps its socket in its private data folder), else ``nobody``."""
    if os.geteuid() != 0:
        return None
    if host.startswith("/"):
        owner = pwd.getpwuid(os.stat(host).st_uid).pw_name
        if owner != "root":
            return owner
    return "nobody"


class PgBouncer:
    """One ``pgbouncer`` on 127.0.0.1:``port`` in transaction mode, in front of ``server``."""

    def __init__(self, server: dict[str, Any], *, pool_size: int = 4) -> None:
        self.server = server
        self.pool_size = pool_size
        self.directory = Path(tempfile.mkdtemp(prefix="ttm-pgbouncer-"))
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def settings(self, database: dict[str, Any]) -> dict[str, Any]:
        """``database`` (a DATABASES entry) pointed at this pooler, as docs/scaling.md says:
        no server-side binding, no prepared statements."""
        options = {
            key: value
            for key, value in database.get("OPTIONS", {}).items()
            if key not in ("server_side_binding", "prepare_threshold")
        }
        return {**database, "HOST": "127.0.0.1", "PORT": str(self.port), "OPTIONS": options}

    def dsn(self, dbname: str, **params: Any) -> str:
        extra = "".join(f" {key}={value}" for key, value in params.items())
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}{extra}"

    def start(self) -> PgBouncer:
        binary = require_pgbouncer()
        host = self.server.get("HOST") or "127.0.0.1"
        user = _run_as(host)
        port = self.server.get("PORT") or "5432"
        server_user = self.server.get("USER") or "postgres"
        password = self.server.get("PASSWORD") or ""
        target = f"host={host} port={port} user={server_user}"
        if password:
            target += f" password={password}"
        (self.directory / "users.txt").write_text('"postgres" ""\n')
        (self.directory / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = {target}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = trust\n"
            f"auth_file = {self.directory / 'users.txt'}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {self.pool_size}\n"
            "max_client_conn = 500\n"
            "max_db_connections = 0\n"
            "server_lifetime = 3600\n"
            # psycopg and Django send these at connect time; PgBouncer would refuse them.
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self.directory / 'pgbouncer.log'}\n"
            f"pidfile = {self.directory / 'pgbouncer.pid'}\n"
            "admin_users = postgres\n"
        )
        if user is not None:
            entry = pwd.getpwnam(user)
            for path in (self.directory, *self.directory.iterdir()):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self.process = subprocess.Popen(
            [binary, "-q", str(self.directory / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            user=user,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"pgbouncer exited at start: {self.log()}")
            try:
                with psycopg.connect(self.dsn("pgbouncer"), autocommit=True, connect_timeout=2):
                    return self
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"pgbouncer did not start: {self.log()}") from None
                time.sleep(0.05)

    def log(self) -> str:
        path = self.directory / "pgbouncer.log"
        return path.read_text()[-2000:] if path.exists() else "(no log)"

    def server_connections(self, dbname: str) -> int:
        """Server connections the pool holds for ``dbname`` (``SHOW SERVERS``)."""
        with psycopg.connect(self.dsn("pgbouncer"), autocommit=True) as admin:
            cursor = admin.cursor()
            cursor.execute("SHOW SERVERS")
            names = [column.name for column in cursor.description or []]
            return sum(1 for row in cursor.fetchall() if row[names.index("database")] == dbname)

    def transactions(self, dbname: str) -> int:
        """Transactions the pooler has run for ``dbname`` (``SHOW STATS``)."""
        with psycopg.connect(self.dsn("pgbouncer"), autocommit=True) as admin:
            cursor = admin.cursor()
            cursor.execute("SHOW STATS")
            names = [column.name for column in cursor.description or []]
            return sum(
                int(row[names.index("total_xact_count")])
                for row in cursor.fetchall()
                if row[names.index("database")] == dbname
            )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None
        shutil.rmtree(self.directory, ignore_errors=True)


@contextmanager
def running_pgbouncer(server: dict[str, Any], *, pool_size: int = 4) -> Iterator[PgBouncer]:
    bouncer = PgBouncer(server, pool_size=pool_size).start()
    try:
        yield bouncer
    finally:
        bouncer.stop()
