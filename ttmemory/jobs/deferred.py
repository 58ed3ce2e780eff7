"""Index jobs off the caller's thread when no worker takes them: one background thread per process.

Where jobs run inline (no Celery worker), the jobs that only bring ``message_search``'s index up
to date (``DEFERRED``: the postings and the message vectors) would run in the request that
triggered them, after its commit: an append of 100 messages would wait for their term hashing
and postings. ``submit`` hands them to one daemon thread of this process instead. Nothing is
lost by running them late: ``message_search`` scores the messages past a session's index mark
from the stored messages themselves, so a message is found as soon as it is committed, and a
job lost with its process (a crash, an exit) is done by the next one for that session.

Index work yields to the process's own writes: a job waits to start while a change is in
flight in this process (``foreground``: every change through ``services.gate`` counts), for
``YIELD_MAX`` seconds at most, so a burst of appends does not share the process's CPU (and its
sessions' locks) with the indexing it triggered, and steady writes delay the index by at most
that long. A running job pauses the same way where it holds nothing (``pause``: between the
messages it hashes), within the same ``YIELD_MAX``.

The same job with the same arguments waiting twice runs once (an index job indexes everything
behind its session's mark). The thread closes its database connections after each job; a
forked child starts a thread of its own. ``drain`` waits until the thread has nothing left
(``jobs.drain``: scripts, tests, and at exit, for up to ``EXIT_WAIT`` seconds).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

logger = logging.getLogger("ttmemory.jobs")

#: The jobs that may run on the background thread: derived index rows only, idempotent.
DEFERRED = frozenset({"message_index", "message_embed"})
#: Seconds an exiting process waits for the thread's queue (what is left is indexed later).
EXIT_WAIT = 10.0
#: Seconds a job waits at most for the changes in flight in this process (``foreground``).
YIELD_MAX = 1.0

Key = tuple[str, tuple[Any, ...]]


class Deferred:
    """A queue of ``(job, args)`` drained by one daemon thread, started on first use."""

    def __init__(self, run: Callable[..., Any]) -> None:
        self._run = run
        self._reset()
        atexit.register(self.drain, EXIT_WAIT)
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        # Also a forked child's first step: the parent's lock may have been held by a thread
        # the child does not have, and its thread is not the child's. What was waiting stays
        # (each job is idempotent: running it twice does nothing the second time).
        self._lock = threading.Condition()
        self._waiting: dict[Key, None] = getattr(self, "_waiting", {})  # ordered, each once
        self._busy = False
        self._foreground = 0  # changes in flight (a forked child has none of its parent's)
        self._yield_left = YIELD_MAX  # of the running job
        self._thread: threading.Thread | None = None

    @contextmanager
    def foreground(self) -> Iterator[None]:
        """A change in flight: no job starts until it ends (``YIELD_MAX`` at most)."""
        with self._lock:
            self._foreground += 1
        try:
            yield
        finally:
            with self._lock:
                self._foreground -= 1
                if not self._foreground:
                    self._lock.notify_all()

    def submit(self, name: str, args: tuple[Any, ...]) -> None:
        with self._lock:
            self._waiting[name, args] = None
            self._start()
            self._lock.notify_all()

    def _start(self) -> None:
        # Under self._lock. Also drain's: a forked child keeps what its parent had waiting
        # but not the parent's thread, and starts its own when it first submits or drains.
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="ttmemory-index", daemon=True)
            self._thread.start()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until nothing is waiting or running; False when ``timeout`` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._waiting or self._busy:
                if self._thread is None or not self._thread.is_alive():
                    if not self._waiting:  # the thread died inside a job: it will not end
                        return False
                    self._start()
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def pause(self) -> None:
        """A point in a job where it holds nothing (no lock, no transaction): on the background
        thread, wait while changes are in flight in this process (``YIELD_MAX`` in all per
        job), else hand the interpreter to any thread waiting for it. Elsewhere, nothing.

        A CPU-bound job (hashing a batch's terms) would otherwise take the GIL each time an
        appending thread waits for the database and keep it for the interpreter's switch
        interval (5 ms) after the reply has come: every round trip of the append slower.
        """
        if threading.current_thread() is not self._thread:
            return
        if self._foreground and self._yield_left > 0:
            with self._lock:
                self._wait_for_foreground()
        else:
            time.sleep(0)

    def _wait_for_foreground(self) -> None:
        # Under self._lock, on the thread: spends what is left of the job's YIELD_MAX.
        start = time.monotonic()
        until = start + self._yield_left
        while self._foreground and (left := until - time.monotonic()) > 0:
            self._lock.wait(left)
        self._yield_left -= time.monotonic() - start

    def _loop(self) -> None:
        from django.db import connections

        while True:
            with self._lock:
                self._busy = False
                while not self._waiting:
                    self._lock.notify_all()
                    self._lock.wait()
                self._yield_left = YIELD_MAX
                self._wait_for_foreground()
                key = next(iter(self._waiting))
                del self._waiting[key]
                self._busy = True
            name, args = key
            try:
                self._run(name, *args)
            except Exception:  # a job's failure is logged; the thread goes on with the next
                logger.exception("ttmemory background job %s%r failed", name, args)
            finally:
                connections.close_all()  # this thread's connections only
