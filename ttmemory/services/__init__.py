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
from ttmemory.services.holds import legal_hold_lift, legal_hold_place
from ttmemory.services.learning import facts_learn
from ttmemory.services.namespaces import namespace_erase, session_state_update
from ttmemory.services.prune import prune_expired
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
from ttmemory.telemetry import operation, records

# One span, one latency sample and the log context per public write (ttmemory.telemetry),
# named after the GenAI semantic conventions for memory. Calls between services inside the
# package are not wrapped again.
fact_forget = operation("delete_memory", "facts")(fact_forget)
fact_remember = operation("upsert_memory", "facts")(fact_remember)
fact_supersede = operation("update_memory", "facts")(fact_supersede)
facts_learn = operation("upsert_memory", "facts", describe=records(len))(facts_learn)
facts_prune_expired = operation("delete_memory", "facts")(facts_prune_expired)
legal_hold_lift = operation("update_memory", "namespace")(legal_hold_lift)
legal_hold_place = operation("update_memory", "namespace")(legal_hold_place)
message_add = operation("create_memory", "messages")(message_add)
message_add_many = operation("create_memory", "messages", describe=records(len))(message_add_many)
namespace_erase = operation("delete_memory_store", "namespace")(namespace_erase)
profile_update = operation("upsert_memory", "profiles")(profile_update)
prune_expired = operation("delete_memory", "sessions")(prune_expired)
session_clear = operation("delete_memory", "messages")(session_clear)
session_delete = operation("delete_memory", "sessions")(session_delete)
session_edit = operation("update_memory", "messages")(session_edit)
session_fork = operation("create_memory", "sessions")(session_fork)
session_open = operation("create_memory_store", "sessions")(session_open)
session_rewind = operation("update_memory", "messages")(session_rewind)
session_state_update = operation("update_memory", "sessions")(session_state_update)
session_trim = operation("delete_memory", "messages")(session_trim)
snapshot_create = operation("create_memory", "snapshots")(snapshot_create)
snapshot_rollback = operation("update_memory", "messages")(snapshot_rollback)
snapshot_rollback_detailed = operation("update_memory", "messages")(snapshot_rollback_detailed)
turn_add = operation("create_memory", "messages")(turn_add)

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
