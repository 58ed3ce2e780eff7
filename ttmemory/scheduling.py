"""Queueing background work without importing Celery in the core.

Services call ``schedule("learn", session_id, upto_seq)``; the work is queued when the current
transaction commits. ``ttmemory.tasks`` (loaded by the app config when Celery is installed)
registers a dispatcher that sends Celery tasks; without one, the work runs inline after commit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)

Dispatcher = Callable[[str, tuple[Any, ...]], None]
_dispatcher: Dispatcher | None = None


def set_dispatcher(dispatcher: Dispatcher | None) -> None:
    global _dispatcher
    _dispatcher = dispatcher


def schedule(job: str, *args: Any) -> None:
    """Run ``job`` ("learn", "summarise", "embed") with ``args`` after the transaction commits."""
    transaction.on_commit(lambda: _dispatch(job, args))


def _dispatch(job: str, args: tuple[Any, ...]) -> None:
    try:
        if _dispatcher is not None:
            _dispatcher(job, args)
        else:
            run_inline(job, args)
    except Exception:  # queueing must never fail the write that triggered it
        logger.exception("ttmemory could not queue %s%r", job, args)


def run_inline(job: str, args: tuple[Any, ...]) -> None:
    from ttmemory import jobs

    getattr(jobs, f"job_{job}")(*args)
