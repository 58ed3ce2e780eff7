"""Selectors: every read ttmemory makes. Keyword-only, typed, never a write (not even a counter)."""

from typing import Any

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
from ttmemory.telemetry import count, operation, records


def _recalled(result: Any) -> dict[str, Any]:
    """A recall's hit count and mode; the mode is counted (hybrid, or keyword on fallback)."""
    count("ttmemory.recall.mode", **{"ttmemory.recall.mode": result.mode})
    return {"gen_ai.memory.record.count": len(result.hits), "ttmemory.recall.mode": result.mode}


# One span, one latency sample and the log context per public read (ttmemory.telemetry);
# every read is a ``search_memory`` of the GenAI semantic conventions for memory.
context_window = operation("search_memory", "messages", describe=records(len))(context_window)
context_window_detailed = operation("search_memory", "messages")(context_window_detailed)
fact_list = operation("search_memory", "facts", describe=records(len))(fact_list)
fact_recall = operation("search_memory", "facts", describe=_recalled)(fact_recall)
ledger_totals = operation("search_memory", "ledger")(ledger_totals)
message_page = operation("search_memory", "messages")(message_page)
message_recent = operation("search_memory", "messages", describe=records(len))(message_recent)
message_search = operation("search_memory", "messages", describe=records(len))(message_search)
namespace_export = operation("search_memory", "namespace")(namespace_export)
profile_get = operation("search_memory", "profiles")(profile_get)
prompt_build = operation("search_memory", "prompt")(prompt_build)
session_branches = operation("search_memory", "sessions")(session_branches)
session_expires_at = operation("search_memory", "sessions")(session_expires_at)
session_get = operation("search_memory", "sessions")(session_get)
session_list = operation("search_memory", "sessions", describe=records(len))(session_list)
session_rewind_preview = operation("search_memory", "messages")(session_rewind_preview)
snapshot_diff = operation("search_memory", "snapshots")(snapshot_diff)
snapshot_list = operation("search_memory", "snapshots", describe=records(len))(snapshot_list)

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
