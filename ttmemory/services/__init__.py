"""Services: every write ttmemory makes. Keyword-only, typed, one transaction each."""

from ttmemory.services.sessions import (
    message_add,
    message_add_many,
    session_clear,
    session_open,
    session_trim,
)

__all__ = [
    "message_add",
    "message_add_many",
    "session_clear",
    "session_open",
    "session_trim",
]
