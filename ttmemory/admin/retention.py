"""Retention policies and legal holds in the admin: edited only through the retention services,
each change recorded in the audit log."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import LegalHold, RetentionPolicy
from ttmemory.selectors.retention import POLICY_LIFETIMES
from ttmemory.services.holds import legal_hold_lift, legal_hold_place
from ttmemory.services.retention import (
    clean_lifetime,
    retention_policy_delete,
    retention_policy_set,
)
from ttmemory.validation import clean_namespace


class RetentionPolicyForm(forms.ModelForm):
    class Meta:
        model = RetentionPolicy
        fields = ["namespace", "session_ttl", "session_expiry", *POLICY_LIFETIMES[1:]]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in POLICY_LIFETIMES:
            try:
                clean_lifetime(data.get(name), name)
            except MemoryValidationError as exc:
                self.add_error(name, exc.message)
        return data


@admin.register(RetentionPolicy)
class RetentionPolicyAdmin(admin.ModelAdmin):
    """Per-namespace lifetimes (empty: the TTMEMORY setting; 0: keep forever)."""

    form = RetentionPolicyForm
    list_display = ("namespace", *POLICY_LIFETIMES, "session_expiry", "updated_at")
    search_fields = ("namespace",)
    ordering = ("namespace",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("namespace", "updated_at") if obj is not None else ("updated_at",)

    def save_model(
        self, request: HttpRequest, obj: RetentionPolicy, form: Any, change: bool
    ) -> None:
        saved = retention_policy_set(
            namespace=obj.namespace,
            session_expiry=obj.session_expiry,
            user=request.user,
            **{name: getattr(obj, name) for name in POLICY_LIFETIMES},
        )
        obj.pk, obj.updated_at = saved.pk, saved.updated_at

    def delete_model(self, request: HttpRequest, obj: RetentionPolicy) -> None:
        retention_policy_delete(namespace=obj.namespace, user=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[RetentionPolicy]) -> None:
        for policy in queryset:
            self.delete_model(request, policy)


class LegalHoldForm(forms.ModelForm):
    namespace = forms.CharField(
        required=False,
        max_length=255,
        help_text="The namespace to hold; leave empty when you pick a session.",
    )

    class Meta:
        model = LegalHold
        fields = ["namespace", "session", "reason"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        session = data.get("session")
        namespace = data.get("namespace") or ""
        if session is not None:
            if namespace and namespace != session.namespace:
                self.add_error("namespace", "The session belongs to another namespace.")
            data["namespace"] = session.namespace
        elif not namespace:
            self.add_error("namespace", "Name a namespace or pick a session.")
        else:
            try:
                data["namespace"] = clean_namespace(namespace, field="namespace")
            except MemoryValidationError as exc:
                self.add_error("namespace", exc.message)
        return data

    def validate_unique(self) -> None:
        pass  # placing an existing hold returns it (legal_hold_place)


@admin.register(LegalHold)
class LegalHoldAdmin(admin.ModelAdmin):
    """Placing a hold (add) suspends every deletion in its scope; deleting it lifts the hold.
    A hold is never edited: lift it and place another."""

    form = LegalHoldForm
    list_display = ("namespace", "session", "reason", "placed_by", "placed_at")
    search_fields = ("namespace", "reason", "placed_by")
    raw_id_fields = ("session",)
    ordering = ("-placed_at", "-pk")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: LegalHold, form: Any, change: bool) -> None:
        hold = legal_hold_place(
            namespace=form.cleaned_data["namespace"],
            session=obj.session,
            reason=obj.reason,
            user=request.user,
        )
        obj.pk, obj.namespace, obj.placed_by = hold.pk, hold.namespace, hold.placed_by

    def delete_model(self, request: HttpRequest, obj: LegalHold) -> None:
        legal_hold_lift(namespace=obj.namespace, session=obj.session, user=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[LegalHold]) -> None:
        for hold in queryset.select_related("session"):
            self.delete_model(request, hold)
