"""Sessions in the admin: the list and a session's page (its transcript as a chat, state, snapshots
and branches); the changes staff make to its history are ``admin/history.py``'s."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from django.contrib import admin
from django.contrib.admin.utils import flatten_fieldsets
from django.db.models import QuerySet
from django.http import HttpRequest

from ttmemory.admin.base import NamespaceFilter
from ttmemory.admin.history import SessionHistoryMixin
from ttmemory.admin.masking import can_reveal, is_revealed, masking_enabled, revealed_until, shown
from ttmemory.admin.namespaces import NamespaceToolsMixin
from ttmemory.admin.selectors import transcript_messages
from ttmemory.admin.transcript import build_transcript, rows_from_messages
from ttmemory.models import (
    AuditEntry,
    Fact,
    MemorySession,
    Snapshot,
    SnapshotKind,
)
from ttmemory.selectors import (
    session_branches,
    snapshot_list,
)
from ttmemory.selectors.retention import legal_hold_find, session_expires_at

# Newest messages shown on a session page before "show all".
TRANSCRIPT_LIMIT = 500


class SummaryFilter(admin.SimpleListFilter):
    title = "summary"
    parameter_name = "summary"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Has a summary"), ("no", "No summary")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "yes":
            return queryset.filter(summary_upto_seq__gt=0)
        if self.value() == "no":
            return queryset.filter(summary_upto_seq=0)
        return queryset


class ActivityFilter(admin.DateFieldListFilter):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.title = "last activity"


@admin.register(MemorySession)
class MemorySessionAdmin(SessionHistoryMixin, NamespaceToolsMixin):
    list_display = (
        "namespace",
        "key",
        "message_count",
        "token_count",
        "last_activity",
        "has_summary",
    )
    list_display_links = ("namespace", "key")
    search_fields = ("namespace", "key")
    search_help_text = "Search by namespace (e.g. user-42) or session key; words must all match."
    list_filter = (NamespaceFilter, ("updated_at", ActivityFilter), SummaryFilter)
    ordering = ("-updated_at", "-pk")
    list_per_page = 50
    actions = ["rollback_action"]
    reveal_object_type = "session"
    fieldsets = (
        (None, {"fields": ("namespace", "key", "metadata")}),
        (
            "Counters",
            {
                "classes": ("collapse",),
                "fields": (
                    "message_count",
                    "token_count",
                    "last_seq",
                    "summary_upto_seq",
                    "learned_upto_seq",
                    "created_at",
                    "updated_at",
                ),
            },
        ),
        ("Retention", {"fields": ("expires_at", "legal_hold")}),
    )
    readonly_fields = flatten_fieldsets(fieldsets)

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemorySession]:
        return super().get_queryset(request).defer("summary", "state")

    @admin.display(description="Last activity", ordering="updated_at")
    def last_activity(self, obj: MemorySession) -> Any:
        return obj.updated_at

    @admin.display(description="Expires")
    def expires_at(self, obj: MemorySession) -> Any:
        """Its last write plus the namespace's session lifetime; "-": kept forever."""
        return session_expires_at(session=obj) or "-"

    @admin.display(description="Legal hold")
    def legal_hold(self, obj: MemorySession) -> str:
        hold = legal_hold_find(namespace=obj.namespace, session_id=obj.pk)
        if hold is None:
            return "-"
        scope = "this session" if hold.session_id else "the whole namespace"
        return f"{scope}: {hold.reason} (placed by {hold.placed_by}, {hold.placed_at:%Y-%m-%d})"

    @admin.display(description="Summary", boolean=True, ordering="summary_upto_seq")
    def has_summary(self, obj: MemorySession) -> bool:
        return obj.summary_upto_seq > 0

    # -- detail page ------------------------------------------------------------------------

    def detail_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        session = obj
        revealed = is_revealed(request, "session", session.pk)
        show_all = request.GET.get("all") == "1"
        rows, hidden = transcript_messages(
            session=session, limit=None if show_all else TRANSCRIPT_LIMIT
        )
        entries = build_transcript(
            rows_from_messages(rows),
            revealed=revealed,
            summary=session.summary,
            summary_upto_seq=session.summary_upto_seq,
            hidden_before=hidden,
            last_seq=session.last_seq,
        )
        can_rollback = self.has_rollback_permission(request)
        if can_rollback:
            self._add_time_travel_links(session, entries)
        snapshots = [
            {
                "snapshot": snap,
                "label": shown(snap.label, revealed) if snap.label else "",
                "rollback_url": self.console_url("rollback", session.pk, snap.pk),
                "undo_url": self.console_url("undo", session.pk, snap.pk)
                if snap.kind == SnapshotKind.SAFETY
                else "",
                "view_url": self.console_url("change", snap.pk, model=Snapshot),
            }
            for snap in snapshot_list(session=session)
        ]
        return {
            "entries": entries,
            "revealed": revealed,
            "masking": masking_enabled(),
            "can_reveal": can_reveal(request),
            "revealed_until": revealed_until(request, "session", session.pk),
            "reveal_url": self.console_url("reveal", session.pk),
            "can_rollback": can_rollback,
            "snapshots": snapshots,
            "snapshot_url": self.console_url("snapshot", session.pk),
            "namespace_url": self.namespace_tools_url(session.namespace),
            "audit_url": self.audit_url(session.namespace),
            "facts_url": self.facts_url(session.namespace),
            "show_all": show_all,
            "state": _state_display(session.state or {}, revealed=revealed),
            "parent_url": self.console_url("change", session.parent_id)
            if session.parent_id
            else "",
            "branches": [
                {"session": branch, "url": self.change_url(branch)}
                for branch in session_branches(session=session)
            ],
        }

    def _add_time_travel_links(self, session: MemorySession, entries: list[Any]) -> None:
        """ "Rewind to here" and "Fork from here" on each live bubble; a bubble with tool
        calls cuts after its last result, so a tool group stays whole."""
        bubbles = [e for e in entries if e.kind == "message" and not e.archived]
        last = max((e.group_end for e in bubbles), default=0)
        for entry in bubbles:
            point = entry.group_end
            entry.fork_url = self.console_url("fork", session.pk, point)
            if point != last:  # rewinding to the newest message would change nothing
                entry.rewind_url = self.console_url("rewind", session.pk, point)

    def facts_url(self, namespace: str) -> str:
        return self.console_url("changelist", model=Fact) + f"?namespace={_q(namespace)}"

    def audit_url(self, namespace: str) -> str:
        return self.console_url("changelist", model=AuditEntry) + f"?namespace={_q(namespace)}"


def _q(value: str) -> str:
    return quote(value, safe="")


def _state_display(state: dict[str, Any], *, revealed: bool) -> str:
    if not state:
        return ""
    if revealed:
        return json.dumps(state, ensure_ascii=False, sort_keys=True, indent=2)
    # Names are content too (``hiv_status``): only their number is shown until revealed.
    return f"{len(state)} variable(s) (names and values masked)"
