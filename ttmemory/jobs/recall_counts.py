"""Recall statistics, buffered per process and written by the background job ``recall_touch``.

``fact_recall`` is a read: it only counts its hits here. At most every ``RECALL_TOUCH_SECONDS``
(0: at once) and at interpreter exit the counts are handed to the job, which a service writes.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Iterable

from ttmemory.conf import app_settings
from ttmemory.jobs import run, schedule

logger = logging.getLogger(__name__)
JOB = "recall_touch"

_lock = threading.Lock()
_buffer: dict[int, int] = {}
_flushed_at = 0.0


def count_recalled(fact_ids: Iterable[int]) -> None:
    """Count one recall of each fact; hand the counts over when ``RECALL_TOUCH_SECONDS`` passed."""
    with _lock:
        for fact_id in fact_ids:
            _buffer[fact_id] = _buffer.get(fact_id, 0) + 1
        due = time.monotonic() - _flushed_at >= app_settings.RECALL_TOUCH_SECONDS
    if due:
        flush(inline=False)


def _take() -> list[tuple[int, int]]:
    global _flushed_at
    with _lock:
        pending = sorted(_buffer.items())
        _buffer.clear()
        _flushed_at = time.monotonic()
    return pending


def flush(*, inline: bool = True) -> int:
    """Write the buffered counts now (``inline``) or through the job queue; returns facts."""
    pending = _take()
    if pending:
        if inline:
            run(JOB, pending)
        else:
            schedule(JOB, pending)
    return len(pending)


def _flush_at_exit() -> None:
    try:
        flush(inline=True)
    except Exception:  # the database may be gone at interpreter exit
        logger.debug("could not write buffered recall counts at exit", exc_info=True)


atexit.register(_flush_at_exit)
