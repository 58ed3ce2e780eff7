"""Services: every write ttmemory makes. Keyword-only, typed, one transaction each."""

from ttmemory.services.sessions import (
    message_add,
    message_add_many,
    session_clear,
    session_open,
    session_trim,
)
from ttmemory.services.snapshots import snapshot_create, snapshot_rollback

__all__ = [
    "message_add",
    "message_add_many",
    "session_clear",
    "session_open",
    "session_trim",
    "snapshot_create",
    "snapshot_rollback",
]
