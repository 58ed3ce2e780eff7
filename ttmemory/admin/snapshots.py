"""Snapshots in the admin: the list, what a snapshot holds, and the way to roll back to it."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from ttmemory.admin.base import PERM_ROLLBACK, ConsoleAdmin, NamespaceFilter
from ttmemory.admin.masking import can_reveal, is_revealed, masking_enabled, shown
from ttmemory.admin.transcript import build_transcript, rows_from_payload
from ttmemory.models import MemorySession, Snapshot, SnapshotKind

#: What the list and the page of a snapshot both show, after its session.
_SHOWN = ("kind", "label", "message_count", "token_count", "upto_seq", "created_by", "created_at")


@admin.register(Snapshot)
class SnapshotAdmin(ConsoleAdmin):
    list_display = ("id", "session_link", *_SHOWN)
    list_display_links = ("id",)
    list_filter = ("kind", NamespaceFilter, "created_at")
    search_fields = ("namespace", "session__key", "label")
    search_help_text = "Search by namespace, session key or label."
    list_select_related = ("session", "created_by")
    ordering = ("-created_at", "-pk")
    fields = ("session_link", "namespace", *_SHOWN)
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Snapshot]:
        return super().get_queryset(request).defer("payload")

    # A label may quote content (a rewind's reason, a label typed by a caller): masked with it.
    def get_list_display(self, request: HttpRequest) -> Any:
        display = list(super().get_list_display(request))
        if not masking_enabled():
            return display

        @admin.display(description="Label")
        def label_shown(obj: Snapshot) -> str:
            revealed = is_revealed(request, "session", obj.session_id)
            return shown(obj.label, revealed) if obj.label else ""

        return [label_shown if name == "label" else name for name in display]

    def get_search_fields(self, request: HttpRequest) -> Any:
        fields = super().get_search_fields(request)
        # Searching masked labels would tell what they hold.
        return [f for f in fields if f != "label"] if masking_enabled() else fields

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_fields(request, obj))
        if obj is not None and not is_revealed(request, "session", obj.session_id):
            return ["masked_label" if name == "label" else name for name in fields]
        return fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.get_fields(request, obj)

    @admin.display(description="Label")
    def masked_label(self, obj: Snapshot) -> str:
        return shown(obj.label, False) if obj.label else ""

    @admin.display(description="Session", ordering="session__namespace")
    def session_link(self, obj: Snapshot) -> str:
        url = self.console_url("change", obj.session_id, model=MemorySession)
        return format_html('<a href="{}">{}</a>', url, obj.session)

    def detail_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        snapshot = obj
        revealed = is_revealed(request, "session", snapshot.session_id)
        payload = snapshot.payload
        session_reveal = self.console_url("reveal", snapshot.session_id, model=MemorySession)
        return {
            "entries": build_transcript(
                rows_from_payload(payload),
                revealed=revealed,
                summary=payload.get("summary"),
                summary_upto_seq=int(payload.get("summary_upto_seq") or 0),
            ),
            "revealed": revealed,
            "masking": masking_enabled(),
            "can_reveal": can_reveal(request),
            "reveal_url": f"{session_reveal}?next={quote(request.get_full_path(), safe='')}",
            "can_rollback": request.user.has_perm(PERM_ROLLBACK),
            "rollback_url": self.console_url(
                "rollback", snapshot.session_id, snapshot.pk, model=MemorySession
            ),
            "undo_url": self.console_url(
                "undo", snapshot.session_id, snapshot.pk, model=MemorySession
            )
            if snapshot.kind == SnapshotKind.SAFETY
            else "",
            "session_url": self.console_url("change", snapshot.session_id, model=MemorySession),
        }
