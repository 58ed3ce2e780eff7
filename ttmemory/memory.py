"""The public face in one import: ``from ttmemory import memory``.

Re-exports only: writes from ``ttmemory.services``, reads from ``ttmemory.selectors``, their
result types and the errors they raise; then the async twin of each function (``amessage_add``,
made by ``ttmemory.aio.twin``). Every function is keyword-only.
"""

from ttmemory.aio import twin
from ttmemory.exceptions import (
    ContextBudgetError,
    DecryptionError,
    EmbeddingError,
    EncryptionKeyError,
    HistoryPointError,
    LegalHoldError,
    LLMError,
    LockTimeout,
    MemoryValidationError,
    SnapshotIntegrityError,
    TTMemoryError,
)
from ttmemory.results import (
    ContextWindow,
    ErasureReceipt,
    FactChange,
    FactChanges,
    MessageHit,
    PromptContext,
    PruneReport,
    RecallResult,
    RollbackResult,
    SnapshotDiff,
    TrimResult,
    TurnResult,
)
from ttmemory.selectors import (
    context_window,
    context_window_detailed,
    fact_list,
    fact_recall,
    ledger_totals,
    message_page,
    message_recent,
    message_search,
    namespace_export,
    profile_get,
    prompt_build,
    session_branches,
    session_expires_at,
    session_get,
    session_list,
    session_rewind_preview,
    snapshot_diff,
    snapshot_list,
)
from ttmemory.services import (
    fact_forget,
    fact_remember,
    fact_supersede,
    facts_learn,
    facts_prune_expired,
    legal_hold_lift,
    legal_hold_place,
    message_add,
    message_add_many,
    namespace_erase,
    profile_update,
    prune_expired,
    session_clear,
    session_delete,
    session_edit,
    session_fork,
    session_open,
    session_rewind,
    session_state_update,
    session_trim,
    snapshot_create,
    snapshot_rollback,
    snapshot_rollback_detailed,
    turn_add,
)

__all__ = [
    "ContextBudgetError",
    "ContextWindow",
    "DecryptionError",
    "EmbeddingError",
    "EncryptionKeyError",
    "ErasureReceipt",
    "FactChange",
    "FactChanges",
    "HistoryPointError",
    "LLMError",
    "LegalHoldError",
    "LockTimeout",
    "MemoryValidationError",
    "MessageHit",
    "PromptContext",
    "PruneReport",
    "RecallResult",
    "RollbackResult",
    "SnapshotDiff",
    "SnapshotIntegrityError",
    "TTMemoryError",
    "TrimResult",
    "TurnResult",
    "context_window",
    "context_window_detailed",
    "fact_forget",
    "fact_list",
    "fact_recall",
    "fact_remember",
    "fact_supersede",
    "facts_learn",
    "facts_prune_expired",
    "ledger_totals",
    "legal_hold_lift",
    "legal_hold_place",
    "message_add",
    "message_add_many",
    "message_page",
    "message_recent",
    "message_search",
    "namespace_erase",
    "namespace_export",
    "profile_get",
    "profile_update",
    "prompt_build",
    "prune_expired",
    "session_branches",
    "session_clear",
    "session_delete",
    "session_edit",
    "session_expires_at",
    "session_fork",
    "session_get",
    "session_list",
    "session_open",
    "session_rewind",
    "session_rewind_preview",
    "session_state_update",
    "session_trim",
    "snapshot_create",
    "snapshot_diff",
    "snapshot_list",
    "snapshot_rollback",
    "snapshot_rollback_detailed",
    "turn_add",
]

# Async twins (DESIGN §4 "a<name>"): one line per public function, same parameters, awaited.
# A new public function gets its twin here and its name in __all__ below; docs/api-python.md
# lists it (tests/test_api_python_doc.py fails until all three are done).
acontext_window = twin(context_window)
acontext_window_detailed = twin(context_window_detailed)
afact_forget = twin(fact_forget)
afact_list = twin(fact_list)
afact_recall = twin(fact_recall)
afact_remember = twin(fact_remember)
afact_supersede = twin(fact_supersede)
afacts_learn = twin(facts_learn)
afacts_prune_expired = twin(facts_prune_expired)
aledger_totals = twin(ledger_totals)
alegal_hold_lift = twin(legal_hold_lift)
alegal_hold_place = twin(legal_hold_place)
amessage_add = twin(message_add)
amessage_add_many = twin(message_add_many)
amessage_page = twin(message_page)
amessage_recent = twin(message_recent)
amessage_search = twin(message_search)
anamespace_erase = twin(namespace_erase)
anamespace_export = twin(namespace_export)
aprofile_get = twin(profile_get)
aprofile_update = twin(profile_update)
aprompt_build = twin(prompt_build)
aprune_expired = twin(prune_expired)
asession_branches = twin(session_branches)
asession_clear = twin(session_clear)
asession_delete = twin(session_delete)
asession_edit = twin(session_edit)
asession_expires_at = twin(session_expires_at)
asession_fork = twin(session_fork)
asession_get = twin(session_get)
asession_list = twin(session_list)
asession_open = twin(session_open)
asession_rewind = twin(session_rewind)
asession_rewind_preview = twin(session_rewind_preview)
asession_state_update = twin(session_state_update)
asession_trim = twin(session_trim)
asnapshot_create = twin(snapshot_create)
asnapshot_diff = twin(snapshot_diff)
asnapshot_list = twin(snapshot_list)
asnapshot_rollback = twin(snapshot_rollback)
asnapshot_rollback_detailed = twin(snapshot_rollback_detailed)
aturn_add = twin(turn_add)

__all__ += [
    "acontext_window",
    "acontext_window_detailed",
    "afact_forget",
    "afact_list",
    "afact_recall",
    "afact_remember",
    "afact_supersede",
    "afacts_learn",
    "afacts_prune_expired",
    "aledger_totals",
    "alegal_hold_lift",
    "alegal_hold_place",
    "amessage_add",
    "amessage_add_many",
    "amessage_page",
    "amessage_recent",
    "amessage_search",
    "anamespace_erase",
    "anamespace_export",
    "aprofile_get",
    "aprofile_update",
    "aprompt_build",
    "aprune_expired",
    "asession_branches",
    "asession_clear",
    "asession_delete",
    "asession_edit",
    "asession_expires_at",
    "asession_fork",
    "asession_get",
    "asession_list",
    "asession_open",
    "asession_rewind",
    "asession_rewind_preview",
    "asession_state_update",
    "asession_trim",
    "asnapshot_create",
    "asnapshot_diff",
    "asnapshot_list",
    "asnapshot_rollback",
    "asnapshot_rollback_detailed",
    "aturn_add",
]
