"""Locks that last as long as the outermost transaction: released at its commit or rollback.

Services open ``transaction.atomic()`` inside the lock, but the REST API and the admin wrap a
rollback, an undo or an erase in an outer transaction of their own (with its audit entry), so
"the end of the lock's block" is not "the end of the transaction". A lock released there would
let another writer in before the writes it guarded are committed. Every backend therefore
hands its release to ``release_at_transaction_end``, which calls it once, when the outermost
transaction has committed or rolled back (or a savepoint holding the lock rolled back: what
was written under the lock is gone, so nothing is left to guard).

Django has ``on_commit`` but no rollback hook. It drops its pending commit callbacks on
rollback, on a savepoint rollback that covers them and when the connection closes; the release
is registered as a commit callback AND tied to the life of that callback object (a
``weakref.finalize``), so whichever way Django lets go of it, the lock is released exactly once.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from django.db import transaction
from django.db.transaction import TransactionManagementError

__all__ = ["atomic_holding", "held_in_transaction", "release_at_transaction_end"]

# Per thread (each thread has its own connection): the keys of locks held until the current
# outermost transaction ends.
_local = threading.local()


def _held() -> set[Hashable]:
    held: set[Hashable] | None = getattr(_local, "held", None)
    if held is None:
        held = _local.held = set()
    return held


def held_in_transaction(key: Hashable) -> bool:
    """True when this thread's open transaction already holds the lock named ``key``.

    A second ``locked()`` of the same session in the same transaction (an API view that rolls
    back and then records, a test inside ``TestCase``) then runs at once instead of waiting
    for itself.
    """
    return transaction.get_connection().in_atomic_block and key in _held()


def release_at_transaction_end(key: Hashable, release: Callable[[], None]) -> None:
    """Call ``release`` once, when the current outermost transaction commits or rolls back.

    Call inside ``transaction.atomic()``, right after taking the lock, so the release runs
    before the commit callbacks registered by the body (events, jobs that may take the same
    lock again). Until then ``held_in_transaction(key)`` is True on this thread.
    """
    if not transaction.get_connection().in_atomic_block:
        raise TransactionManagementError(
            "a session lock can only be held inside transaction.atomic()"
        )
    held = _held()
    done = threading.Lock()

    def finish() -> None:
        if done.acquire(blocking=False):  # once, whichever of commit or drop comes first
            held.discard(key)
            release()

    def at_commit() -> None:
        finish()

    held.add(key)
    try:
        transaction.on_commit(at_commit)
    except BaseException:
        finish()
        raise
    # Dropped without being called (rollback, savepoint rollback, closed connection): release.
    weakref.finalize(at_commit, finish)


@contextmanager
def atomic_holding(key: Hashable, release: Callable[[], None]) -> Iterator[None]:
    """``transaction.atomic()`` for the body of a lock just taken; ``release`` at the end of the
    outermost transaction (at once if the transaction could not even be opened)."""
    registered = False
    try:
        with transaction.atomic():
            release_at_transaction_end(key, release)
            registered = True
            yield
    finally:
        if not registered:
            release()
