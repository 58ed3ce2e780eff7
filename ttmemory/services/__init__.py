"""Services: every write ttmemory makes. Keyword-only, typed, one transaction each."""

from ttmemory.services import background  # noqa: F401  (registers the background jobs)
from ttmemory.services.facts import (
    fact_forget,
    fact_remember,
    fact_supersede,
    facts_prune_expired,
    profile_update,
)
from ttmemory.services.history import session_edit, session_fork, session_rewind
from ttmemory.services.learning import facts_learn
from ttmemory.services.namespaces import namespace_erase, session_state_update
from ttmemory.services.retention import legal_hold_lift, legal_hold_place, prune_expired
from ttmemory.services.sessions import (
    message_add,
    message_add_many,
    session_clear,
    session_delete,
    session_open,
    session_trim,
)
from ttmemory.services.snapshots import (
    snapshot_create,
    snapshot_rollback,
    snapshot_rollback_detailed,
)
from ttmemory.services.turns import turn_add

__all__ = [
    "fact_forget",
    "fact_remember",
    "fact_supersede",
    "facts_learn",
    "facts_prune_expired",
    "legal_hold_lift",
    "legal_hold_place",
    "message_add",
    "message_add_many",
    "namespace_erase",
    "profile_update",
    "prune_expired",
    "session_clear",
    "session_delete",
    "session_edit",
    "session_fork",
    "session_open",
    "session_rewind",
    "session_state_update",
    "session_trim",
    "snapshot_create",
    "snapshot_rollback",
    "snapshot_rollback_detailed",
    "turn_add",
]
