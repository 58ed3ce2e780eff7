"""Selectors: every read ttmemory makes. Keyword-only, typed, never a write (not even a counter)."""

from ttmemory.selectors.episodes import message_search
from ttmemory.selectors.facts import fact_list, fact_recall, facts_orphaned_by, profile_get
from ttmemory.selectors.history import session_branches, session_rewind_preview
from ttmemory.selectors.namespaces import ledger_totals, namespace_export
from ttmemory.selectors.prompt import prompt_build
from ttmemory.selectors.retention import session_expires_at
from ttmemory.selectors.sessions import (
    SUMMARY_PREFIX,
    context_window,
    context_window_detailed,
    message_page,
    message_recent,
    session_get,
    session_list,
)
from ttmemory.selectors.snapshots import snapshot_diff, snapshot_list

__all__ = [
    "SUMMARY_PREFIX",
    "context_window",
    "context_window_detailed",
    "fact_list",
    "fact_recall",
    "facts_orphaned_by",
    "ledger_totals",
    "message_page",
    "message_recent",
    "message_search",
    "namespace_export",
    "profile_get",
    "prompt_build",
    "session_branches",
    "session_expires_at",
    "session_get",
    "session_list",
    "session_rewind_preview",
    "snapshot_diff",
    "snapshot_list",
]
