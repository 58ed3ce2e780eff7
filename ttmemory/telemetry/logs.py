"""Log context: every ``ttmemory.*`` log record carries the operation's namespace and session."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_log_context: contextvars.ContextVar[tuple[str | None, int | None]] = contextvars.ContextVar(
    "ttmemory_log_context", default=(None, None)
)
_factory_installed = False


def current_scope() -> tuple[str | None, int | None]:
    """The namespace and session id of the operation running now (None, None outside one)."""
    return _log_context.get()


@contextmanager
def log_context(*, namespace: str | None, session_id: int | None) -> Iterator[None]:
    """Every ttmemory log record made in the body carries ``namespace`` and ``session_id``."""
    token = _log_context.set((namespace, session_id))
    try:
        yield
    finally:
        _log_context.reset(token)


def install_log_context() -> None:
    """Give every ``ttmemory.*`` log record ``namespace`` and ``session_id`` attributes.

    Wraps the current log record factory once (``AppConfig.ready``): records of other loggers
    are untouched; ttmemory's carry the operation's namespace and session id (None outside an
    operation), so a formatter may use ``%(namespace)s`` and a JSON formatter sees both keys.
    """
    global _factory_installed
    if _factory_installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        log_record = previous(*args, **kwargs)
        if log_record.name.startswith("ttmemory") or log_record.name.startswith("celery"):
            namespace, session_id = _log_context.get()
            log_record.namespace = namespace
            log_record.session_id = session_id
        return log_record

    logging.setLogRecordFactory(factory)
    _factory_installed = True
