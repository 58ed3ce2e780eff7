"""Lease renewal: one daemon thread per lock backend extends the leases its holders still hold.

Used by ``RedisLock`` (every held key) and by ``DatabaseLeaseLock.lease()`` (the lease row of a
long, multi-transaction operation), so an operation longer than ``LOCK_LEASE`` keeps its lock.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Lease:
    """One held lease: renewed every third of ``lease_ms`` until removed."""

    key: str
    token: str
    lease_ms: int
    session_id: int
    next_renewal: float


class Renewer:
    """One daemon thread per lock backend that extends the leases of every held lock."""

    def __init__(
        self,
        renew: Callable[[Lease, Callable[[str], bool]], None],
        *,
        name: str = "ttmemory-lock-renewer",
        count: Callable[[str], None] = lambda name: None,
        log: logging.Logger | None = None,
        lost: str = "",
    ) -> None:
        self._renew = renew
        self._name = name
        # After each attempt (settle): the backend's counter, its logger, and the warning of a
        # lease lost while held (``lost``, formatted with the lease's ``session`` and ``key``).
        self._count = count
        self._log = log or logging.getLogger(__name__)
        self._lost = lost
        self._cond = threading.Condition()
        self._held: dict[str, Lease] = {}
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._stopped = False

    def add(self, lease: Lease) -> None:
        with self._cond:
            if self._pid != os.getpid():  # forked: the parent's leases and thread are not ours
                self._held.clear()
                self._thread = None
                self._pid = os.getpid()
            self._stopped = False
            self._held[lease.token] = lease
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify()

    def remove(self, token: str) -> None:
        with self._cond:
            self._held.pop(token, None)

    def settle(self, lease: Lease, *, extended: bool, still_held: Callable[[str], bool]) -> None:
        """After an attempt to extend ``lease``: a renewal counted, or, when it was lost while
        its holder still holds it, no more renewals and the backend's warning."""
        if extended:
            self._count("renewals")
        elif still_held(lease.token):
            self.remove(lease.token)
            self._log.warning(self._lost.format(session=lease.session_id, key=lease.key))

    def holds(self, token: str) -> bool:
        with self._cond:
            return token in self._held

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._held.clear()
            self._cond.notify()
            thread = self._thread
            self._thread = None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2)

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopped:
                        return
                    now = time.monotonic()
                    due = [lease for lease in self._held.values() if lease.next_renewal <= now]
                    if due:
                        break
                    upcoming = [lease.next_renewal for lease in self._held.values()]
                    self._cond.wait(timeout=min(upcoming) - now if upcoming else None)
                for lease in due:
                    lease.next_renewal = now + lease.lease_ms / 3000.0
            for lease in due:
                self._renew(lease, self.holds)
