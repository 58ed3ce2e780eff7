"""Snapshots in the admin: the list, what a snapshot holds, and the way to roll back to it."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from ttmemory.admin.base import PERM_ROLLBACK, ConsoleAdmin, NamespaceFilter
from ttmemory.admin.masking import can_reveal, is_revealed, masking_enabled
from ttmemory.admin.transcript import build_transcript, rows_from_payload
from ttmemory.models import MemorySession, Snapshot, SnapshotKind


@admin.register(Snapshot)
class SnapshotAdmin(ConsoleAdmin):
    list_display = (
        "id",
        "session_link",
        "kind",
        "label",
        "message_count",
        "token_count",
        "upto_seq",
        "created_by",
        "created_at",
    )
    list_display_links = ("id",)
    list_filter = ("kind", NamespaceFilter, "created_at")
    search_fields = ("namespace", "session__key", "label")
    search_help_text = "Search by namespace, session key or label."
    list_select_related = ("session", "created_by")
    ordering = ("-created_at", "-pk")
    fields = (
        "session_link",
        "namespace",
        "kind",
        "label",
        "message_count",
        "token_count",
        "upto_seq",
        "created_by",
        "created_at",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Snapshot]:
        return super().get_queryset(request).defer("payload")

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
