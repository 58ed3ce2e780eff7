"""Database session locks: PostgreSQL advisory locks, a lease table elsewhere, threads in tests."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta

from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from ttmemory.backends.locks.base import SessionLock
from ttmemory.conf import app_settings
from ttmemory.exceptions import LockTimeout
from ttmemory.models import SessionLease

# First half of PostgreSQL's two-integer advisory lock key: "ttme" as an int, so our locks
# never collide with an application's own single-key advisory locks.
ADVISORY_CLASS_ID = 0x74746D65


def advisory_key(session_id: int) -> tuple[int, int]:
    """The (classid, objid) pair of a session; objid folds the id into a signed 32-bit int."""
    folded = session_id & 0xFFFFFFFF
    return ADVISORY_CLASS_ID, folded - (1 << 32) if folded >= (1 << 31) else folded


def lock_timeout_message(session_id: int, timeout: float, how: str) -> str:
    return (
        f"session {session_id} is locked by another writer ({how}); gave up after {timeout:g}s "
        "(TTMEMORY['LOCK_TIMEOUT'])"
    )


class PostgresAdvisoryLock(SessionLock):
    """``pg_advisory_xact_lock``: released by the server at commit, rollback or disconnect.

    A holder whose connection dies (crash, ``pg_terminate_backend``) frees the lock at once.
    The uncontended path is one ``pg_try_advisory_xact_lock`` round trip; a contended one waits
    in the server under ``SET LOCAL lock_timeout``.
    """

    @contextmanager
    def locked(self, session_id: int, *, timeout: float) -> Iterator[None]:
        classid, objid = advisory_key(session_id)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [classid, objid])
                row = cursor.fetchone()
                if not (row and row[0]):
                    self._wait(cursor, session_id, classid, objid, timeout)
            self.stats.acquired += 1
            yield

    def _wait(
        self, cursor: object, session_id: int, classid: int, objid: int, timeout: float
    ) -> None:
        # A savepoint, so a timeout leaves the caller's transaction usable.
        try:
            with transaction.atomic():
                execute = cursor.execute  # type: ignore[attr-defined]
                # 0 would mean "wait forever" to PostgreSQL.
                wait_ms = max(1, int(timeout * 1000))
                execute("SELECT set_config('lock_timeout', %s, true)", [f"{wait_ms}ms"])
                execute("SELECT pg_advisory_xact_lock(%s, %s)", [classid, objid])
                execute("SELECT set_config('lock_timeout', '0', true)")
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != "55P03":  # lock_not_available
                raise
            self.stats.timeouts += 1
            raise LockTimeout(lock_timeout_message(session_id, timeout, "advisory lock")) from None


class DatabaseLeaseLock(SessionLock):
    """A lease row per locked session (``SessionLease``), for SQLite and other databases.

    In general the lease is taken in its own short transaction (so other processes see it), the
    body runs in a second one, and the lease is deleted by its token afterwards. A lease whose
    ``expires_at`` has passed (its holder died) is taken over.

    On SQLite with ``transaction_mode: IMMEDIATE`` a transaction already holds the database's
    single write lock, so a one-transaction body needs no lease row of its own: the body's
    transaction checks that no live lease (held by a long, multi-transaction operation through
    ``lease()``) exists, and runs. One transaction instead of three.
    """

    def __init__(self, *, poll_interval: float = 0.02) -> None:
        super().__init__()
        self.poll_interval = poll_interval

    @contextmanager
    def locked(self, session_id: int, *, timeout: float) -> Iterator[None]:
        if _exclusive_transactions():
            with self._in_write_transaction(session_id, timeout=timeout):
                yield
            return
        with self.lease(session_id, timeout=timeout), transaction.atomic():
            yield

    @contextmanager
    def lease(self, session_id: int, *, timeout: float) -> Iterator[None]:
        """Hold a lease row for a body that may span several transactions."""
        lease_seconds = app_settings.LOCK_LEASE
        token = self._acquire(session_id, timeout=timeout, lease_seconds=lease_seconds)
        try:
            yield
        finally:
            self._release(session_id, token)

    @contextmanager
    def _in_write_transaction(self, session_id: int, *, timeout: float) -> Iterator[None]:
        deadline = time.monotonic() + timeout
        delay = self.poll_interval
        while True:
            stack = ExitStack()
            try:
                stack.enter_context(_busy_timeout(max(0.0, deadline - time.monotonic())))
                stack.enter_context(transaction.atomic())  # BEGIN IMMEDIATE: the write lock
                with connection.cursor() as cursor:  # raw SQL: this runs on every write
                    cursor.execute(
                        f"SELECT 1 FROM {_lease_table()} WHERE session_id = %s", [session_id]
                    )
                    leased = cursor.fetchone() is not None
                if not leased:
                    break
                lease = SessionLease.objects.filter(session_id=session_id).first()
                if lease is None or lease.expires_at <= timezone.now():
                    if lease is not None:
                        lease.delete()
                        self.stats.extra["takeovers"] = self.stats.extra.get("takeovers", 0) + 1
                    break
            except OperationalError as exc:
                stack.__exit__(type(exc), exc, exc.__traceback__)
                if "locked" not in str(exc):
                    raise
            else:
                stack.close()  # a long operation holds the lease: let it work, try again
            if time.monotonic() >= deadline:
                self.stats.timeouts += 1
                raise LockTimeout(lock_timeout_message(session_id, timeout, "database lease"))
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, 0.25)
        self.stats.acquired += 1
        with stack:
            yield

    def _acquire(self, session_id: int, *, timeout: float, lease_seconds: float) -> str:
        token = secrets.token_hex(16)
        deadline = time.monotonic() + timeout
        delay = self.poll_interval
        while True:
            now = timezone.now()
            expires = now + timedelta(seconds=lease_seconds)
            try:
                with _busy_timeout(max(0.0, deadline - time.monotonic())), transaction.atomic():
                    taken = SessionLease.objects.filter(
                        session_id=session_id, expires_at__lte=now
                    ).update(token=token, expires_at=expires, acquired_at=now)
                    if taken:
                        self.stats.extra["takeovers"] = self.stats.extra.get("takeovers", 0) + 1
                    else:
                        SessionLease.objects.create(
                            session_id=session_id, token=token, expires_at=expires, acquired_at=now
                        )
                self.stats.acquired += 1
                return token
            except IntegrityError:
                pass  # held by someone else and not expired
            except OperationalError as exc:
                # SQLite: another writer's transaction outlasted our remaining time.
                if connection.vendor != "sqlite" or "locked" not in str(exc):
                    raise
            if time.monotonic() >= deadline:
                self.stats.timeouts += 1
                raise LockTimeout(lock_timeout_message(session_id, timeout, "database lease"))
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, 0.25)

    def _release(self, session_id: int, token: str) -> None:
        with transaction.atomic():
            SessionLease.objects.filter(session_id=session_id, token=token).delete()


def _exclusive_transactions() -> bool:
    """True on SQLite configured to BEGIN IMMEDIATE: every transaction is a database write lock."""
    return (
        connection.vendor == "sqlite"
        and connection.settings_dict.get("OPTIONS", {}).get("transaction_mode") == "IMMEDIATE"
    )


@contextmanager
def _busy_timeout(seconds: float) -> Iterator[None]:
    """On SQLite, wait at most ``seconds`` for the database write lock (then "locked")."""
    if connection.vendor != "sqlite":
        yield
        return
    raw = connection.connection
    with connection.cursor() as cursor:
        previous = _configured_busy_ms.get(id(raw))
        if previous is None:
            cursor.execute("PRAGMA busy_timeout")
            row = cursor.fetchone()
            previous = _configured_busy_ms[id(raw)] = int(row[0]) if row else 5000
        cursor.execute(f"PRAGMA busy_timeout = {max(1, int(seconds * 1000))}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {previous}")


# The busy timeout each SQLite connection was configured with, by id of the raw connection.
_configured_busy_ms: dict[int, int] = {}


def _lease_table() -> str:
    return connection.ops.quote_name(SessionLease._meta.db_table)


class LocalLock(SessionLock):
    """Threads of one process only: for tests and single-process tools. Not for production."""

    def __init__(self) -> None:
        super().__init__()
        self._guard = threading.Lock()
        self._locks: dict[int, threading.Lock] = {}

    @contextmanager
    def locked(self, session_id: int, *, timeout: float) -> Iterator[None]:
        with self._guard:
            lock = self._locks.setdefault(session_id, threading.Lock())
        if not lock.acquire(timeout=timeout):
            self.stats.timeouts += 1
            raise LockTimeout(lock_timeout_message(session_id, timeout, "in-process lock"))
        try:
            self.stats.acquired += 1
            with transaction.atomic():
                yield
        finally:
            lock.release()


def default_lock_config() -> dict[str, object]:
    """The default per database: advisory locks on PostgreSQL, the lease table elsewhere."""
    if connection.vendor == "postgresql":
        return {"BACKEND": "ttmemory.backends.locks.PostgresAdvisoryLock"}
    return {"BACKEND": "ttmemory.backends.locks.DatabaseLeaseLock"}
