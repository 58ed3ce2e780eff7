"""The session lock contract: one holder per session across threads, processes and machines."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import connection


@dataclass
class LockStats:
    """Counters a backend keeps for operators (and tests): how it has been behaving."""

    acquired: int = 0
    timeouts: int = 0
    fallbacks: int = 0
    extra: dict[str, int] = field(default_factory=dict)


class SessionLock(ABC):
    """Mutual exclusion per session.

    ``locked(session_id)`` is a context manager whose body runs holding the session's lock AND
    inside an open ``transaction.atomic()`` on the default database. The lock is held until the
    OUTERMOST transaction has committed or rolled back: when the caller already opened one
    (the REST API and the admin wrap a rollback and its audit entry together), the lock
    outlives the block and is released at that transaction's end. A second ``locked()`` of the
    same session inside the same transaction runs at once (the transaction already holds it).
    Waiting longer than ``timeout`` seconds raises ``ttmemory.exceptions.LockTimeout``. Every
    write to a session's messages, summary or snapshots runs in this context, so a rollback
    and a concurrent append are never interleaved. ``docs/locks.md`` tabulates the backends.
    """

    def __init__(self) -> None:
        self.stats = LockStats()

    @abstractmethod
    def locked(self, session_id: int, *, timeout: float) -> AbstractContextManager[None]:
        """Hold the lock of ``session_id`` and an open transaction for the body."""

    @abstractmethod
    def hold(self, session_id: int, *, timeout: float) -> None:
        """Take the lock of ``session_id`` until the current outermost transaction ends.

        For a body that locks many sessions in one transaction (``namespace_erase``). Must be
        called inside ``transaction.atomic()`` (TransactionManagementError otherwise); raises
        LockTimeout after ``timeout`` seconds. Holding it already is not an error.
        """

    @contextmanager
    def locked_reading(
        self, session_id: int, *, timeout: float, read: str, params: Sequence[Any]
    ) -> Iterator[tuple[Any, ...] | None]:
        """``locked()``, yielding the row ``read`` selects once the lock is held (None: no row).

        ``read`` is ``SELECT <columns> FROM <table> WHERE <condition>`` with ``%s``
        placeholders. Here a statement of its own after the lock is taken; a backend that can
        read it in the statement that waits for the lock saves that round trip
        (``PostgresAdvisoryLock``).
        """
        with self.locked(session_id, timeout=timeout):
            with connection.cursor() as cursor:
                cursor.execute(read, params)
                row = cursor.fetchone()
            yield None if row is None else tuple(row)

    def close(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release connections and threads; called when settings change."""
