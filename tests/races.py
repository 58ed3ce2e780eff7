"""Helpers for race tests: a sleep-free switch point inside a critical section."""

from __future__ import annotations

import threading

WAIT = 30.0


class Door:
    """Counts threads that have asked for a lock; a holder can wait for the next one to ask.

    The switch point of an in-process race test: a thread inside the critical section waits
    (sleep-free, bounded) until another thread has asked for the lock, so the two provably
    overlap, and ``overlaps`` counts the critical sections that did.
    """

    def __init__(self) -> None:
        self.arrived = 0
        self.overlaps = 0
        self._changed = threading.Condition()

    def arrive(self) -> None:
        """Call just before asking for the lock."""
        with self._changed:
            self.arrived += 1
            self._changed.notify_all()

    def wait_for_more_than(self, count: int) -> None:
        """Inside the critical section: wait until more than ``count`` threads have arrived."""
        with self._changed:
            arrived = self._changed.wait_for(lambda: self.arrived > count, timeout=WAIT)
            assert arrived, f"no other thread asked for the lock within {WAIT:g}s"
            self.overlaps += 1
