"""Session locks: ``session_lock(session)`` is the one way services serialise a session's writes."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.backends import load_backend
from ttmemory.backends.locks.base import LockStats, SessionLock
from ttmemory.backends.locks.database import (
    DatabaseLeaseLock,
    LocalLock,
    PostgresAdvisoryLock,
    default_lock_config,
)
from ttmemory.backends.locks.redis import RedisLock
from ttmemory.conf import app_settings
from ttmemory.telemetry import lock_wait

if TYPE_CHECKING:
    from ttmemory.models import MemorySession

__all__ = [
    "DatabaseLeaseLock",
    "LocalLock",
    "LockStats",
    "PostgresAdvisoryLock",
    "RedisLock",
    "SessionLock",
    "get_lock",
    "reset_lock",
    "session_lock",
    "session_lock_hold",
    "session_lock_reading",
]

_lock: SessionLock | None = None
_guard = threading.Lock()


def get_lock() -> SessionLock:
    """The configured ``TTMEMORY["LOCK"]`` backend (one instance per process)."""
    global _lock
    if _lock is None:
        with _guard:
            if _lock is None:
                config = app_settings.LOCK or default_lock_config()
                _lock = load_backend("LOCK", config, base=SessionLock)
    return _lock


def reset_lock() -> None:
    global _lock
    with _guard:
        if _lock is not None:
            _lock.close()
        _lock = None


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        reset_lock()


def session_lock(session: MemorySession) -> AbstractContextManager[None]:
    """Hold ``session``'s lock and an open transaction for the body (see ``SessionLock``).

    The lock is released when the outermost transaction commits or rolls back, not when the
    body ends: a caller's own ``transaction.atomic()`` around it keeps it held until then.
    """
    return _measured(get_lock(), session.pk)


@contextmanager
def _measured(lock: SessionLock, session_id: int) -> Iterator[None]:
    # The wait is a span and a sample (ttmemory.telemetry); the body runs outside that span.
    with ExitStack() as stack:
        with lock_wait(backend=type(lock).__name__):
            stack.enter_context(lock.locked(session_id, timeout=app_settings.LOCK_TIMEOUT))
        yield


@contextmanager
def session_lock_reading(
    session: MemorySession, *, read: str, params: Sequence[Any]
) -> Iterator[tuple[Any, ...] | None]:
    """``session_lock``, yielding the row ``read`` selects under it (``locked_reading``)."""
    lock = get_lock()
    with ExitStack() as stack:
        with lock_wait(backend=type(lock).__name__):
            row = stack.enter_context(
                lock.locked_reading(
                    session.pk, timeout=app_settings.LOCK_TIMEOUT, read=read, params=params
                )
            )
        yield row


def session_lock_hold(session_id: int) -> None:
    """Take ``session_id``'s lock until the current outermost transaction ends.

    Call inside ``transaction.atomic()``; for one transaction that locks many sessions.
    """
    lock = get_lock()
    with lock_wait(backend=type(lock).__name__):
        lock.hold(session_id, timeout=app_settings.LOCK_TIMEOUT)
