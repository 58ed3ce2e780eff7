"""Embedding calls made by reads, buffered per process and written by the job ``ledger_record``.

``fact_recall`` and ``message_search`` are reads: they hand the ledger rows of their billable
query embeddings here. Like recall statistics (``recall_counts``), they are handed to the job
at most every ``RECALL_TOUCH_SECONDS`` (0: at once) and at interpreter exit, so a recall costs
no write of its own; the daily token budget sees them once written.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from typing import Any

from ttmemory.conf import app_settings
from ttmemory.jobs import run, schedule
from ttmemory.longterm.embedding import EmbeddingCall

logger = logging.getLogger(__name__)
JOB = "ledger_record"

_lock = threading.Lock()
_buffer: list[dict[str, Any]] = []
_flushed_at = 0.0


def record_later(call: EmbeddingCall | None) -> None:
    """Buffer one call's ledger row; hand the buffer over when ``RECALL_TOUCH_SECONDS`` passed."""
    if call is None:
        return
    with _lock:
        _buffer.append(call.as_row())
        due = time.monotonic() - _flushed_at >= app_settings.RECALL_TOUCH_SECONDS
    if due:
        flush(inline=False)


def _take() -> list[dict[str, Any]]:
    global _flushed_at
    with _lock:
        pending = list(_buffer)
        _buffer.clear()
        _flushed_at = time.monotonic()
    return pending


def flush(*, inline: bool = True) -> int:
    """Write the buffered rows now (``inline``) or through the job queue; returns rows."""
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
        logger.debug("could not write buffered ledger rows at exit", exc_info=True)


atexit.register(_flush_at_exit)
