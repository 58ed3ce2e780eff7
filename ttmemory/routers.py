"""A database router for streaming read replicas, with read-your-writes for the caller.

``DATABASE_ROUTERS = ["ttmemory.routers.ReplicaRouter"]`` and ``TTMEMORY["READ_REPLICAS"] =
["replica"]`` send ttmemory's reads to a replica and every write to
``TTMEMORY["PRIMARY_DATABASE"]``. Models of other apps are left to other routers (or the default
database). A caller is the current context: a request's thread, a Celery task, an asyncio task.

- Reads inside a transaction on the primary read the primary: a service's reads under its
  session lock see its own transaction, never a replica's past.
- Read-your-writes: after a caller writes, its next read samples the primary's WAL insert
  position and reads a replica only once that replica has replayed up to it, waiting at most
  ``REPLICA_WAIT_SECONDS``; otherwise it reads the primary. Callers that have not written read
  a replica at once (they see a prefix of the history, as every reader does).
- A replica that cannot be reached, or whose connection drops in the middle of a read, is
  skipped for ``REPLICA_RETRY_SECONDS``; the read that met the failure is run again on the
  primary, so the caller sees no error.

Only PostgreSQL replicas are compared by WAL position; another database as a "replica" is
taken as current (a test mirror of the primary, say).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from contextvars import ContextVar
from typing import Any

from django.db import DatabaseError, InterfaceError, OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created
from django.db.models import Model

from ttmemory.conf import app_settings

logger = logging.getLogger(__name__)

APP_LABEL = "ttmemory"
POLL_SECONDS = 0.002

# When the caller last had a write routed (time.monotonic(); 0: never), and the replica and
# time at which a replica was last found to have replayed everything the caller wrote.
_wrote_at: ContextVar[float] = ContextVar("ttmemory_wrote_at", default=0.0)
_caught_up: ContextVar[tuple[str, float]] = ContextVar("ttmemory_caught_up", default=("", 0.0))

# Replicas found failing, by alias: skipped until this time.monotonic(). One per process.
_down_until: dict[str, float] = {}
_down_lock = threading.Lock()


def _lsn(text: str) -> int:
    """A ``pg_lsn`` such as ``0/16B3748`` as a number."""
    high, low = text.split("/")
    return (int(high, 16) << 32) + int(low, 16)


def replica_is_down(alias: str) -> bool:
    return _down_until.get(alias, 0.0) > time.monotonic()


def mark_replica_down(alias: str, reason: object) -> None:
    """Skip ``alias`` for ``REPLICA_RETRY_SECONDS`` (logged once per outage)."""
    with _down_lock:
        was_up = not replica_is_down(alias)
        _down_until[alias] = time.monotonic() + app_settings.REPLICA_RETRY_SECONDS
    if was_up:
        logger.warning(
            "ttmemory: read replica %r failed (%s); reading the primary for %.0f s",
            alias,
            reason,
            app_settings.REPLICA_RETRY_SECONDS,
        )


def _connected(conn: BaseDatabaseWrapper) -> bool:
    """Connect ``conn`` if needed; drop a connection a failed query left broken. False: down."""
    try:
        if conn.connection is not None and conn.errors_occurred:
            if conn.is_usable():
                conn.errors_occurred = False
            else:
                conn.close()
        if conn.connection is None:
            conn.ensure_connection()
    except DatabaseError as exc:
        mark_replica_down(conn.alias, exc)
        with contextlib.suppress(DatabaseError):
            conn.close()
        return False
    return True


def _replayed(conn: BaseDatabaseWrapper) -> int | None:
    """The WAL position ``conn`` has replayed; None when it is not in recovery (current)."""
    with conn.cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text")
        in_recovery, replayed = cursor.fetchone()
    if not in_recovery:
        return None
    return _lsn(replayed) if replayed else 0


def _primary_position(primary: str) -> int:
    with connections[primary].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
        return _lsn(cursor.fetchone()[0])


def _caught_up_with_caller(alias: str, primary: str) -> bool:
    """Whether replica ``alias`` has replayed everything the primary held when asked (so every
    write this caller made), waiting at most REPLICA_WAIT_SECONDS for it."""
    replica = connections[alias]
    if replica.vendor != "postgresql" or connections[primary].vendor != "postgresql":
        return True
    try:
        target = _primary_position(primary)
        deadline = time.monotonic() + app_settings.REPLICA_WAIT_SECONDS
        while True:
            replayed = _replayed(replica)
            if replayed is None or replayed >= target:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)
    except (OperationalError, InterfaceError) as exc:
        if replica.errors_occurred:
            mark_replica_down(alias, exc)
        raise


def _mark_writes(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
    """Execute wrapper on the primary: any statement but a plain read marks the caller as
    having written, so raw SQL writes (which no router sees) get read-your-writes too."""
    if many or not sql.lstrip()[:6].upper().startswith(("SELECT", "SHOW")):
        _wrote_at.set(time.monotonic())
    return execute(sql, params, many, context)


def _on_connection_created(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    if not app_settings.READ_REPLICAS or connection.alias != app_settings.PRIMARY_DATABASE:
        return
    if _mark_writes not in connection.execute_wrappers:
        connection.execute_wrappers.append(_mark_writes)


def _watched(alias: str) -> BaseDatabaseWrapper:
    """The primary's connection in this thread, marking its writers (also when it was
    connected before READ_REPLICAS was set, as in tests that set it)."""
    connection = connections[alias]
    if _mark_writes not in connection.execute_wrappers:
        connection.execute_wrappers.append(_mark_writes)
    return connection


def watch_primary_writes() -> None:
    """Mark callers writing through the primary's connections (connected by the app's ready)."""
    connection_created.connect(_on_connection_created, dispatch_uid="ttmemory.routers")


def _fall_back_to_primary(
    execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    """Execute wrapper on replica connections: a read whose replica failed runs on the primary.

    The ORM fetches the rows from the cursor it executed on; the primary's cursor is put in its
    place, so the caller gets the primary's rows instead of an error.
    """
    try:
        return execute(sql, params, many, context)
    except (OperationalError, InterfaceError) as exc:
        replica = context["connection"]
        if many or replica.in_atomic_block:
            raise
        mark_replica_down(replica.alias, exc)
        fallback = connections[app_settings.PRIMARY_DATABASE].cursor()
        fallback.execute(sql, params)
        context["cursor"].cursor = fallback.cursor
        return None


class ReplicaRouter:
    """ttmemory's reads to ``READ_REPLICAS``, writes to ``PRIMARY_DATABASE`` (module docstring)."""

    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        if model._meta.app_label != APP_LABEL:
            return None
        primary = app_settings.PRIMARY_DATABASE
        primary_connection = _watched(primary)
        if primary_connection.in_atomic_block:
            return primary
        wrote_at = _wrote_at.get()
        for alias in app_settings.READ_REPLICAS:
            if replica_is_down(alias):
                continue
            replica = connections[alias]
            if not _connected(replica):
                continue
            if _fall_back_to_primary not in replica.execute_wrappers:
                replica.execute_wrappers.append(_fall_back_to_primary)
            if wrote_at:
                seen_alias, seen_at = _caught_up.get()
                if seen_alias != alias or seen_at <= wrote_at:
                    checked_at = time.monotonic()
                    try:
                        current = _caught_up_with_caller(alias, primary)
                    except (OperationalError, InterfaceError):
                        continue
                    if replica_is_down(alias):  # failed during the probe (run on the primary)
                        continue
                    if not current:
                        return primary
                    _caught_up.set((alias, checked_at))
            return alias
        return primary

    def db_for_write(self, model: type[Model], **hints: Any) -> str | None:
        if model._meta.app_label != APP_LABEL:
            return None
        _wrote_at.set(time.monotonic())
        _watched(app_settings.PRIMARY_DATABASE)
        return app_settings.PRIMARY_DATABASE

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        ours = {app_settings.PRIMARY_DATABASE, *app_settings.READ_REPLICAS}
        if obj1._state.db in ours and obj2._state.db in ours:
            return True
        return None

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        if db in app_settings.READ_REPLICAS:
            return False  # a replica replays the primary's migrations
        return None
