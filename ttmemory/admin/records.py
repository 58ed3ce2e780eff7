"""Read-only records in the admin (the audit log, the LLM ledger) and service clients' API keys."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html

from ttmemory.admin.base import ConsoleAdmin, NamespaceFilter
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import ApiKey, AuditEntry, Fact, LedgerEntry, MemorySession, Snapshot
from ttmemory.services.access import api_key_create, api_key_revoke

# Which admin page an audit entry's object_type points at.
AUDIT_TARGETS: dict[str, type[Any]] = {
    "session": MemorySession,
    "fact": Fact,
    "snapshot": Snapshot,
}


@admin.register(AuditEntry)
class AuditEntryAdmin(ConsoleAdmin):
    """Nothing adds, edits or deletes an entry here: only viewing is possible."""

    list_display = ("created_at", "actor", "action", "namespace", "target", "reason_short")
    list_filter = ("action", NamespaceFilter, "created_at")
    search_fields = ("namespace", "actor", "reason", "object_id")
    search_help_text = "Search by namespace, staff member, reason or object id."
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-pk")
    list_select_related = ("user",)
    fields = (
        "created_at",
        "actor",
        "user",
        "action",
        "namespace",
        "target",
        "reason",
        "details_display",
    )
    readonly_fields = fields

    actions = None  # read-only: no bulk action at all (Django's documented way to disable them)

    @admin.display(description="Object")
    def target(self, obj: AuditEntry) -> str:
        if obj.object_type == "namespace":
            url = self.console_url("namespace", model=MemorySession)
            return format_html('<a href="{}?namespace={}">namespace</a>', url, quote(obj.namespace))
        if not obj.object_type:
            return "-"
        model = AUDIT_TARGETS.get(obj.object_type)
        label = f"{obj.object_type} #{obj.object_id}" if obj.object_id else obj.object_type
        if model is None or not obj.object_id.isdigit():
            return label
        return format_html(
            '<a href="{}">{}</a>', self.console_url("change", obj.object_id, model=model), label
        )

    @admin.display(description="Reason")
    def reason_short(self, obj: AuditEntry) -> str:
        return obj.reason if len(obj.reason) <= 80 else obj.reason[:79] + "\u2026"

    @admin.display(description="Details")
    def details_display(self, obj: AuditEntry) -> str:
        return json.dumps(obj.details, ensure_ascii=False, sort_keys=True, indent=2)


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ConsoleAdmin):
    list_display = (
        "created_at",
        "namespace",
        "purpose",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "status",
    )
    list_filter = ("purpose", "status", "model", NamespaceFilter, "created_at")
    search_fields = ("namespace", "model")
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-pk")
    readonly_fields = list_display


class ApiKeyCreateForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Who uses the key, e.g. 'web frontend'.")
    namespaces = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="One namespace per line; 'acme/*' grants every namespace under acme/. A "
        "prefix grant ends with a separator (/ : . - _) before the '*': 'user-1:*', not 'user-1*'.",
    )
    can_rollback = forms.BooleanField(required=False, label="May roll back sessions")
    can_erase = forms.BooleanField(required=False, label="May erase namespaces")
    expires_at = forms.DateTimeField(
        required=False,
        label="Expires at",
        help_text="Refused from this moment on (server time zone); empty: never expires.",
    )

    def clean_namespaces(self) -> list[str]:
        raw = str(self.cleaned_data["namespaces"])
        return [line.strip() for line in raw.replace(",", "\n").splitlines() if line.strip()]


@admin.register(ApiKey)
class ApiKeyAdmin(ConsoleAdmin):
    """Keys are created here (the key is shown once) and revoked; never edited."""

    list_display = (
        "name",
        "prefix",
        "grants",
        "can_rollback",
        "can_erase",
        "active",
        "created_at",
        "last_used_at",
        "expires_at",
    )
    list_filter = ("can_rollback", "can_erase", "revoked_at")
    search_fields = ("name", "prefix")
    ordering = ("-created_at", "-pk")
    actions = ["revoke_action"]
    fields = (
        "name",
        "prefix",
        "grants",
        "can_rollback",
        "can_erase",
        "created_at",
        "last_used_at",
        "revoked_at",
        "expires_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.has_perm("ttmemory.add_apikey"))

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("ttmemory.change_apikey"))

    @admin.display(description="Namespaces")
    def grants(self, obj: ApiKey) -> str:
        return ", ".join(str(g) for g in obj.namespaces or []) or "-"

    @admin.display(description="Active", boolean=True)
    def active(self, obj: ApiKey) -> bool:
        return obj.is_active

    @admin.action(description="Revoke the selected keys", permissions=["revoke"])
    def revoke_action(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        count = 0
        for key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(key=key)
            self.log_change(request, key, "Revoked")
            count += 1
        messages.success(request, f"{count} key(s) revoked; requests with them now get 401.")

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Create a key with ``api_key_create`` and show the full key this once."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ApiKeyCreateForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                key, raw_key = api_key_create(
                    name=data["name"],
                    namespaces=data["namespaces"],
                    can_rollback=data["can_rollback"],
                    can_erase=data["can_erase"],
                    expires_at=data["expires_at"],
                )
            except MemoryValidationError as exc:
                field = exc.field if exc.field in ("name", "expires_at") else "namespaces"
                form.add_error(field, exc.message)
            else:
                self.log_addition(request, key, "Created")
                response = self.render_page(
                    request,
                    "admin/ttmemory/apikey_created.html",
                    f"API key {key.name} created",
                    {"key": key, "raw_key": raw_key, "key_url": self.change_url(key)},
                )
                response["Cache-Control"] = "no-store"
                return response
        return self.render_page(
            request,
            "admin/ttmemory/apikey_add.html",
            "Create an API key",
            {"form": form, "changelist_url": self.console_url("changelist")},
        )
