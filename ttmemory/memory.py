"""The public API in one import: ``from ttmemory import memory``."""

from ttmemory.selectors import (
    context_window,
    message_recent,
    session_get,
    session_list,
    snapshot_diff,
    snapshot_list,
)
from ttmemory.services import (
    message_add,
    message_add_many,
    session_clear,
    session_open,
    session_trim,
    snapshot_create,
    snapshot_rollback,
)

__all__ = [
    "context_window",
    "message_add",
    "message_add_many",
    "message_recent",
    "session_clear",
    "session_get",
    "session_list",
    "session_open",
    "session_trim",
    "snapshot_create",
    "snapshot_diff",
    "snapshot_list",
    "snapshot_rollback",
]
