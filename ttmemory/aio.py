"""Async twins of the public functions: ``amessage_add = twin(message_add)`` in ``memory.py``.

A twin runs its sync function whole in Django's thread-sensitive executor
(``asgiref.sync.sync_to_async(thread_sensitive=True)``), the way Django runs a sync view under
ASGI: the transaction, the session lock and the ``on_commit`` hooks of one call stay on one
thread and one database connection, and nothing blocks the event loop. Django's async ORM
methods (``aget``, ``acount``...) are themselves one such hop per query, so a service of
several queries costs one hop here instead of one per query, and its ``transaction.atomic``
block (which has no async form) is never split across threads.

The twin keeps the sync function's parameters for type checkers (``ParamSpec``) and for
``inspect.signature`` (``__wrapped__``); its result is the sync result, awaited.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import sync_to_async

__all__ = ["twin"]

P = ParamSpec("P")
R = TypeVar("R")


def twin(func: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """Return the async twin of ``func``, named ``a<name>``, with the same parameters.

    Awaiting it runs ``func`` in Django's thread-sensitive executor and returns its result;
    its errors are raised unchanged (``MemoryValidationError``, ``LockTimeout``...).
    """
    run = sync_to_async(func, thread_sensitive=True)

    @functools.wraps(func)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return await run(*args, **kwargs)

    call.__name__ = f"a{func.__name__}"
    call.__qualname__ = f"a{func.__qualname__}"
    call.__doc__ = (
        f"Async twin of ``{func.__name__}``: the same keyword arguments, the same result "
        f"awaited (run in Django's thread-sensitive executor).\n\n{func.__doc__ or ''}"
    )
    return call
