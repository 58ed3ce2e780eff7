"""A per-process buffer handed to a background job at most every ``RECALL_TOUCH_SECONDS``.

Reads must not write, so what they have to record (recall counts, ledger rows of their
embedding calls) is gathered here and handed to a job: once ``RECALL_TOUCH_SECONDS`` passed
since the last hand-over (0: at once), on ``flush()``, and at interpreter exit.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ttmemory.conf import app_settings
from ttmemory.jobs import run, schedule

logger = logging.getLogger(__name__)

B = TypeVar("B")  # the buffer: a list of rows, a dict of counts


class BufferedJob(Generic[B]):
    """Gathers items into a buffer of type ``B`` and hands them to job ``job`` as one argument.

    ``new`` makes an empty buffer; ``drain`` turns a full one into the job's JSON-safe list.
    """

    def __init__(
        self, job: str, *, new: Callable[[], B], drain: Callable[[B], list[Any]], what: str
    ) -> None:
        self.job = job
        self._new = new
        self._drain = drain
        self._what = what
        self._lock = threading.Lock()
        self._buffer = new()
        self._flushed_at = 0.0
        atexit.register(self._flush_at_exit)

    def add(self, put: Callable[[B], None]) -> None:
        """Apply ``put`` to the buffer; hand it over when ``RECALL_TOUCH_SECONDS`` passed."""
        with self._lock:
            put(self._buffer)
            due = time.monotonic() - self._flushed_at >= app_settings.RECALL_TOUCH_SECONDS
        if due:
            self.flush(inline=False)

    def take(self) -> list[Any]:
        """Empty the buffer and return what it held, handing it to no job."""
        with self._lock:
            pending = self._drain(self._buffer)
            self._buffer = self._new()
            self._flushed_at = time.monotonic()
        return pending

    def flush(self, *, inline: bool = True) -> int:
        """Write the buffer now (``inline``) or through the job queue; returns how many items."""
        pending = self.take()
        if pending:
            if inline:
                run(self.job, pending)
            else:
                schedule(self.job, pending)
        return len(pending)

    def _flush_at_exit(self) -> None:
        try:
            self.flush(inline=True)
        except Exception:  # the database may be gone at interpreter exit
            logger.debug("could not write buffered %s at exit", self._what, exc_info=True)
