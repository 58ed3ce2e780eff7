"""Database session locks: PostgreSQL advisory locks, a lease table elsewhere, threads in tests."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, IntegrityError, OperationalError, connection, transaction
from django.db.transaction import TransactionManagementError
from django.utils import timezone

from ttmemory.backends.locks.base import SessionLock
from ttmemory.backends.locks.renewal import Lease, Renewer
from ttmemory.backends.locks.scope import (
    atomic_holding,
    held_in_transaction,
    release_at_transaction_end,
)
from ttmemory.conf import app_settings
from ttmemory.exceptions import LockTimeout
from ttmemory.models import SessionLease

logger = logging.getLogger(__name__)

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

    Transaction-scoped by construction: taken inside a caller's transaction it is held until
    that transaction ends, and taking it again in the same transaction stacks. A holder whose
    connection dies (crash, ``pg_terminate_backend``) frees the lock at once. The uncontended
    path is one ``pg_try_advisory_xact_lock`` round trip; a contended one waits in the server
    under ``lock_timeout``, set for that wait only (a server- or role-set ``lock_timeout`` is
    in force again as soon as the lock is taken).
    """

    @contextmanager
    def locked(self, session_id: int, *, timeout: float) -> Iterator[None]:
        with transaction.atomic():
            # The transaction is this block's own when it opened it: a timed-out wait then
            # ends it by raising through it, and needs no savepoint of its own.
            own = len(connection.atomic_blocks) == 1 and connection.commit_on_exit
            self._hold(session_id, timeout=timeout, savepoint=not own)
            yield

    def hold(self, session_id: int, *, timeout: float) -> None:
        self._hold(session_id, timeout=timeout, savepoint=True)

    def _hold(self, session_id: int, *, timeout: float, savepoint: bool) -> None:
        _require_transaction()
        classid, objid = advisory_key(session_id)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [classid, objid])
            row = cursor.fetchone()
            if not (row and row[0]):
                self._wait(cursor, session_id, classid, objid, timeout, savepoint=savepoint)
        self.stats.acquired += 1

    @contextmanager
    def locked_reading(
        self, session_id: int, *, timeout: float, read: str, params: Sequence[Any]
    ) -> Iterator[tuple[Any, ...] | None]:
        """``locked()`` reading the row in the statement that waits (``wait_reading``)."""
        with transaction.atomic():
            yield self.wait_reading(session_id, timeout=timeout, read=read, params=params)

    def wait_reading(
        self, session_id: int, *, timeout: float, read: str, params: Sequence[object]
    ) -> tuple[Any, ...] | None:
        """Wait for the lock in the current transaction, then return the row ``read`` selects.

        For a writer that just found the lock busy: no ``pg_try_advisory_xact_lock`` first,
        and the row is read by the waiting statement itself once the lock is held, so the
        holder spends no round trip on it. ``read`` is ``SELECT <columns> FROM <table> WHERE
        <condition>`` (``%s`` placeholders, ``params``); it is run ``FOR NO KEY UPDATE``,
        which in READ COMMITTED returns the newest committed version of the row (the
        statement's snapshot predates the wait). None when no row matches (the lock is held
        all the same). Times out and counts like ``locked``.
        """
        _require_transaction()
        classid, objid = advisory_key(session_id)
        own = len(connection.atomic_blocks) == 1 and connection.commit_on_exit
        with connection.cursor() as cursor:
            row = self._wait(
                cursor,
                session_id,
                classid,
                objid,
                timeout,
                savepoint=not own,
                read=(read, params),
            )
        self.stats.acquired += 1
        return row

    def _wait(
        self,
        cursor: object,
        session_id: int,
        classid: int,
        objid: int,
        timeout: float,
        *,
        savepoint: bool,
        read: tuple[str, Sequence[object]] | None = None,
    ) -> tuple[Any, ...] | None:
        # Two round trips: set lock_timeout for the wait (reading the one in force), then wait
        # and put it back in the same statement, so the holder pays no round trip for it. A
        # savepoint (unless the transaction is the caller's own lock block) keeps the caller's
        # transaction usable after a timeout; its rollback undoes the SET LOCAL.
        execute = cursor.execute  # type: ignore[attr-defined]
        fetchone = cursor.fetchone  # type: ignore[attr-defined]
        wait = f"{max(1, int(timeout * 1000))}ms"  # 0 would mean "wait forever"
        try:
            with transaction.atomic() if savepoint else nullcontext():
                # MATERIALIZED: each CTE runs before the SELECT that reads it, so the setting
                # is read before it is changed and put back only once the lock is held.
                execute(
                    "WITH p AS MATERIALIZED (SELECT current_setting('lock_timeout') AS v) "
                    "SELECT v, set_config('lock_timeout', %s, true) FROM p",
                    [wait],
                )
                row = fetchone()
                previous = str(row[0]) if row else "0"
                if read is None:
                    execute(
                        "WITH l AS MATERIALIZED (SELECT pg_advisory_xact_lock(%s, %s)) "
                        "SELECT set_config('lock_timeout', %s, true) FROM l",
                        [classid, objid, previous],
                    )
                    return None
                # The one-time filter on r runs before the row is read: wait, restore, read.
                sql, params = read
                execute(
                    "WITH l AS MATERIALIZED (SELECT pg_advisory_xact_lock(%s, %s)), "
                    "r AS MATERIALIZED (SELECT set_config('lock_timeout', %s, true) FROM l) "
                    f"{sql} AND EXISTS (SELECT 1 FROM r) FOR NO KEY UPDATE",
                    [classid, objid, previous, *params],
                )
                found = fetchone()
                return tuple(found) if found is not None else None
        except OperationalError as exc:
            if not _lock_wait_expired(exc):
                raise
            self.stats.timeouts += 1
            raise LockTimeout(lock_timeout_message(session_id, timeout, "advisory lock")) from None


class DatabaseLeaseLock(SessionLock):
    """A ``SessionLease`` row per locked session, for SQLite and other databases.

    ``locked()`` takes the lock INSIDE its transaction: it inserts the session's lease row (or
    takes over an expired one) and deletes it again at once. Until that transaction ends, the
    row's unique index (or, on SQLite, the database's write lock) makes every other writer of
    the session wait, so the lock is held until the outermost transaction commits or rolls
    back, however long the work takes (no lease to expire), and nothing is left behind. The
    wait is bounded by ``timeout`` (``lock_timeout`` on PostgreSQL, ``busy_timeout`` on SQLite).

    On SQLite with ``transaction_mode: IMMEDIATE`` every transaction already holds the
    database's single write lock, so the body's transaction only checks that no live lease
    (held by a long operation through ``lease()``) exists, and runs.

    ``lease()`` is for an operator's multi-transaction job: its row is committed (other
    processes see it), renewed every third of ``LOCK_LEASE`` while held, and deleted at the
    end. A lease whose holder died expires and is taken over.
    """

    def __init__(self, *, poll_interval: float = 0.02) -> None:
        super().__init__()
        self.poll_interval = poll_interval
        self.stats.extra.update(renewals=0)
        self._renewer = Renewer(
            lambda lease, still_held: self._renew(lease, still_held=still_held),
            name="ttmemory-lease-renewer",
            count=self._count,
            log=logger,
            lost="The lease of session {session} expired or was taken while held; another "
            "writer may run concurrently. Raise TTMEMORY['LOCK_LEASE'].",
        )

    @contextmanager
    def locked(self, session_id: int, *, timeout: float) -> Iterator[None]:
        key = self._scope_key(session_id)
        if held_in_transaction(key):
            with transaction.atomic():
                yield
            return
        if _exclusive_transactions() and not connection.in_atomic_block:
            with self._in_write_transaction(session_id, timeout=timeout):
                release_at_transaction_end(key, _nothing)
                yield
            return
        with transaction.atomic():
            self.hold(session_id, timeout=timeout)
            yield

    def hold(self, session_id: int, *, timeout: float) -> None:
        _require_transaction()
        key = self._scope_key(session_id)
        if held_in_transaction(key):
            return
        if _exclusive_transactions():
            # This transaction holds the write lock: a long operation's lease cannot end
            # while we wait, so a live one is a timeout at once; an expired one holds nothing.
            if SessionLease.objects.filter(
                session_id=session_id, expires_at__gt=timezone.now()
            ).exists():
                self.stats.timeouts += 1
                raise LockTimeout(
                    lock_timeout_message(session_id, timeout, "a long operation's lease")
                )
            self.stats.acquired += 1
        else:
            self._take(session_id, timeout=timeout, keep=False)
        release_at_transaction_end(key, _nothing)

    @contextmanager
    def lease(self, session_id: int, *, timeout: float) -> Iterator[None]:
        """Hold a lease row for a body that spans several transactions; renewed while held.

        Call outside any transaction (TransactionManagementError otherwise: inside one, the
        row would stay invisible to other processes until it commits).
        """
        if connection.in_atomic_block:
            raise TransactionManagementError(
                "DatabaseLeaseLock.lease() spans several transactions; call it outside "
                "transaction.atomic() (use locked() for one transaction)"
            )
        lease_seconds = app_settings.LOCK_LEASE
        lease_ms = max(1, int(lease_seconds * 1000))
        token = self._take(session_id, timeout=timeout, keep=True, lease_seconds=lease_seconds)
        held = Lease(
            f"lease:{session_id}", token, lease_ms, session_id, time.monotonic() + lease_ms / 3000
        )
        self._renewer.add(held)
        try:
            yield
        finally:
            self._renewer.remove(token)
            with transaction.atomic():
                SessionLease.objects.filter(session_id=session_id, token=token).delete()

    def close(self) -> None:
        self._renewer.stop()

    def _scope_key(self, session_id: int) -> tuple[int, int]:
        return (id(self), session_id)

    def _count(self, name: str) -> None:
        self.stats.extra[name] = self.stats.extra.get(name, 0) + 1

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
                        self._count("takeovers")
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

    def _take(
        self, session_id: int, *, timeout: float, keep: bool, lease_seconds: float = 0.0
    ) -> str:
        """Insert (or take over) the session's lease row; return its token.

        ``keep=False``: in the caller's transaction, deleted again at once (the transaction
        holds the lock until it ends). ``keep=True``: committed in a transaction of its own.
        """
        token = secrets.token_hex(16)
        deadline = time.monotonic() + timeout
        delay = self.poll_interval
        while True:
            now = timezone.now()
            expires = now + timedelta(seconds=lease_seconds)
            remaining = max(0.0, deadline - time.monotonic())
            try:
                with (
                    _busy_timeout(remaining),
                    transaction.atomic(),
                    _postgres_lock_timeout(remaining),
                ):
                    taken = SessionLease.objects.filter(
                        session_id=session_id, expires_at__lte=now
                    ).update(token=token, expires_at=expires, acquired_at=now)
                    if taken:
                        self._count("takeovers")
                    else:
                        SessionLease.objects.create(
                            session_id=session_id, token=token, expires_at=expires, acquired_at=now
                        )
                    if not keep:
                        SessionLease.objects.filter(session_id=session_id, token=token).delete()
                self.stats.acquired += 1
                return token
            except IntegrityError:
                pass  # a live lease of a long operation
            except OperationalError as exc:
                if not _lock_wait_expired(exc):
                    raise
            if time.monotonic() >= deadline:
                self.stats.timeouts += 1
                raise LockTimeout(lock_timeout_message(session_id, timeout, "database lease"))
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, 0.25)

    def _renew(self, lease: Lease, *, still_held: Callable[[str], bool]) -> None:
        """Push the lease row's expiry forward (on the renewer thread's own connection)."""
        try:
            with _busy_timeout(lease.lease_ms / 3000), transaction.atomic():
                extended = SessionLease.objects.filter(
                    session_id=lease.session_id, token=lease.token
                ).update(expires_at=timezone.now() + timedelta(milliseconds=lease.lease_ms))
        except DatabaseError as exc:
            logger.debug("renewing the lease of session %s failed: %s", lease.session_id, exc)
            return
        finally:
            connection.close()  # the renewer thread keeps no connection between renewals
        self._renewer.settle(lease, extended=bool(extended), still_held=still_held)


def _nothing() -> None:
    """The release of a lock the transaction's end releases by itself."""


def _require_transaction() -> None:
    if not connection.in_atomic_block:
        raise TransactionManagementError(
            "SessionLock.hold() must be called inside transaction.atomic()"
        )


@contextmanager
def _postgres_lock_timeout(seconds: float) -> Iterator[None]:
    """On PostgreSQL, wait at most ``seconds`` for row and advisory locks in the body.

    Call inside a savepoint: the previous ``lock_timeout`` (maybe set by the server or the
    role) is put back when the body succeeds, and the savepoint's rollback puts it back when
    it fails.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('lock_timeout')")
        row = cursor.fetchone()
        previous = str(row[0]) if row else "0"
        # 0 would mean "wait forever" to PostgreSQL.
        cursor.execute(
            "SELECT set_config('lock_timeout', %s, true)", [f"{max(1, int(seconds * 1000))}ms"]
        )
    yield
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])


def _lock_wait_expired(exc: OperationalError) -> bool:
    """PostgreSQL's lock_timeout (55P03) or SQLite's busy timeout ran out."""
    if connection.vendor == "sqlite":
        return "locked" in str(exc)
    return getattr(exc.__cause__, "sqlstate", None) == "55P03"  # lock_not_available


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
        key = (id(self), session_id)
        if held_in_transaction(key):
            with transaction.atomic():
                yield
            return
        lock = self._take(session_id, timeout=timeout)
        with atomic_holding(key, lock.release):
            yield

    def hold(self, session_id: int, *, timeout: float) -> None:
        _require_transaction()
        key = (id(self), session_id)
        if not held_in_transaction(key):
            release_at_transaction_end(key, self._take(session_id, timeout=timeout).release)

    def _take(self, session_id: int, *, timeout: float) -> threading.Lock:
        with self._guard:
            lock = self._locks.setdefault(session_id, threading.Lock())
        if not lock.acquire(timeout=timeout):
            self.stats.timeouts += 1
            raise LockTimeout(lock_timeout_message(session_id, timeout, "in-process lock"))
        self.stats.acquired += 1
        return lock


def default_lock_config() -> dict[str, object]:
    """The default per database: advisory locks on PostgreSQL, the lease table elsewhere."""
    if connection.vendor == "postgresql":
        return {"BACKEND": "ttmemory.backends.locks.PostgresAdvisoryLock"}
    return {"BACKEND": "ttmemory.backends.locks.DatabaseLeaseLock"}
