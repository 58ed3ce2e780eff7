"""Shared pieces of the admin console: the read-only base admin, reason forms, audit entries of
staff actions, audited reveal."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IS_POPUP_VAR
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme

from ttmemory.admin.masking import (
    can_reveal,
    hide_again,
    remember_reveal,
    reveal_seconds,
    revealed_until,
)
from ttmemory.admin.selectors import namespace_choices
from ttmemory.exceptions import LegalHoldError
from ttmemory.models import AuditAction, AuditEntry, Fact, MemorySession
from ttmemory.services.audit import MAX_REASON_CHARS, audit_record

PERM_ROLLBACK = "ttmemory.rollback_memorysession"
PERM_EXPORT = "ttmemory.export_namespace"
PERM_ERASE = "ttmemory.erase_namespace"
# Namespaces listed by the namespace filter (the search box finds any other).
NAMESPACE_FILTER_LIMIT = 30

View = Callable[..., HttpResponse]


class ReasonForm(forms.Form):
    """Why a staff member does something; every audited action asks for it."""

    reason = forms.CharField(
        label="Reason",
        max_length=MAX_REASON_CHARS,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 70}),
        help_text="Recorded in the audit log with your name and the time (a ticket number helps).",
    )

    def clean_reason(self) -> str:
        reason = str(self.cleaned_data["reason"]).strip()
        if not reason:
            raise forms.ValidationError("Give a reason; it goes into the audit log.")
        return reason


def require(request: HttpRequest, perm: str) -> None:
    """PermissionDenied (403) unless the user has ``perm``."""
    if not request.user.has_perm(perm):
        raise PermissionDenied


def record(
    request: HttpRequest,
    *,
    action: str,
    namespace: str,
    object_type: str = "",
    object_id: object = "",
    reason: str = "",
    details: dict[str, Any] | None = None,
) -> AuditEntry:
    """Write the audit entry of a staff action (ids and counts only in ``details``)."""
    return audit_record(
        action=action,
        namespace=namespace,
        user=request.user,
        object_type=object_type,
        object_id=object_id,
        reason=reason,
        details=details,
    )


def record_on(
    request: HttpRequest,
    object_type: str,
    obj: Fact | MemorySession,
    *,
    action: str,
    reason: str,
    **details: Any,
) -> AuditEntry:
    """``record`` of a staff action on one fact or session: its namespace and id, the id also
    in ``details`` under ``object_type`` ("fact", "session") beside the other ``details``."""
    return record(
        request,
        action=action,
        namespace=obj.namespace,
        object_type=object_type,
        object_id=obj.pk,
        reason=reason,
        details={object_type: obj.pk, **details},
    )


def safe_next(request: HttpRequest, fallback: str) -> str:
    """The ``next`` parameter when it points at this site, else ``fallback``."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback


class NamespaceFilter(admin.SimpleListFilter):
    """Namespaces to pick from (the first few, and the chosen one); search finds the rest."""

    title = "namespace"
    parameter_name = "namespace"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        values = namespace_choices(
            queryset=model_admin.model.objects.all(), limit=NAMESPACE_FILTER_LIMIT
        )
        chosen = self.value()
        if chosen and chosen not in values:
            values.append(chosen)
        return [(value, value) for value in values]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset.filter(namespace=value) if value else queryset


class ConsoleAdmin(admin.ModelAdmin):
    """Read-only by default: rows change only through ttmemory's services, via the console's
    own confirmation pages. ``reveal_object_type`` turns on the audited reveal of content."""

    reveal_object_type = ""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    # -- detail page ------------------------------------------------------------------------

    def detail_context(self, request: HttpRequest, obj: Any) -> dict[str, Any] | None:
        """What the detail page shows beside the read-only fields, as the template's ``ttm``.

        Called with the object Django already fetched and checked for view permission.
        """
        return None

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any = None,
    ) -> Any:
        if obj is not None and not add:
            ttm = self.detail_context(request, obj)
            if ttm is not None:
                context["ttm"] = ttm
        return super().render_change_form(request, context, add, change, form_url, obj)

    # -- urls -------------------------------------------------------------------------------

    def console_views(self) -> Sequence[tuple[str, View, str]]:
        """Extra views as ``(route, view, name suffix)``; routes are under the model's URL."""
        if self.reveal_object_type:
            return [("<int:object_id>/reveal/", self.reveal_view, "reveal")]
        return []

    def get_urls(self) -> list[URLPattern]:
        opts = self.model._meta
        extra = [
            path(
                route,
                self.admin_site.admin_view(self.refusing_held(view)),
                name=f"{opts.app_label}_{opts.model_name}_{suffix}",
            )
            for route, view, suffix in self.console_views()
        ]
        return extra + super().get_urls()

    # -- legal holds: one place for every console view and list action -----------------------

    def refusing_held(self, view: View) -> View:
        """``view``, with a legal hold's refusal (``LegalHoldError``, from a service's check or
        from the database's trigger) shown as an error message on the page it came from,
        instead of a server error. Nothing was changed: the service's transaction rolled back."""

        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                return view(request, *args, **kwargs)
            except LegalHoldError as refused:
                return self.held_response(request, refused)

        return wrapped

    def held_response(self, request: HttpRequest, refused: LegalHoldError) -> HttpResponse:
        messages.error(request, str(refused))
        opts = self.model._meta
        changelist = reverse(
            f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_changelist"
        )
        return HttpResponseRedirect(safe_next(request, changelist))

    def response_action(
        self, request: HttpRequest, queryset: QuerySet[Any], *args: Any, **kwargs: Any
    ) -> HttpResponse | None:
        # *args: Django 6.1 adds action_location; 5.2 has none.
        try:
            return super().response_action(request, queryset, *args, **kwargs)
        except LegalHoldError as refused:
            return self.held_response(request, refused)

    def console_url(self, suffix: str, *args: Any, model: type[Model] | None = None) -> str:
        opts = (model or self.model)._meta
        return reverse(
            f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_{suffix}", args=args
        )

    def change_url(self, obj: Model) -> str:
        return self.console_url("change", obj.pk, model=type(obj))

    # -- pages ------------------------------------------------------------------------------

    def render_page(
        self, request: HttpRequest, template: str, title: str, context: dict[str, Any]
    ) -> TemplateResponse:
        """An intermediate page in the admin's frame (header, breadcrumbs, messages)."""
        opts = self.model._meta
        request.current_app = self.admin_site.name
        return TemplateResponse(
            request,
            template,
            {
                **self.admin_site.each_context(request),
                "opts": opts,
                "app_label": opts.app_label,
                "title": title,
                "media": self.media,
                "is_popup": IS_POPUP_VAR in request.GET,
                **context,
            },
        )

    def get_console_object(self, request: HttpRequest, object_id: Any) -> Any:
        """The object, or 404; 403 unless the user may view it."""
        obj = self.get_object(request, str(object_id))
        if obj is None:
            raise Http404(f"No {self.model._meta.verbose_name} with id {object_id}")
        if not self.has_view_permission(request, obj):
            raise PermissionDenied
        return obj

    # -- reveal -----------------------------------------------------------------------------

    def reveal_targets(self, obj: Any) -> tuple[str, list[Any]]:
        """The namespace and the ids one reveal of ``obj`` uncovers."""
        return obj.namespace, [obj.pk]

    def reveal_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """Ask for a reason, record it (action ``reveal``), then show content for a while."""
        if not can_reveal(request):
            raise PermissionDenied
        obj = self.get_console_object(request, object_id)
        namespace, ids = self.reveal_targets(obj)
        back = safe_next(request, self.change_url(obj))
        kind = self.reveal_object_type
        if request.method == "POST" and "hide" in request.POST:
            hide_again(request, kind, ids)
            messages.info(request, "Content is masked again.")
            return HttpResponseRedirect(back)
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            record(
                request,
                action=AuditAction.REVEAL,
                namespace=namespace,
                object_type=kind,
                object_id=obj.pk,
                reason=form.cleaned_data["reason"],
                details={"ids": ids, "count": len(ids)},
            )
            remember_reveal(request, kind, ids)
            messages.success(
                request,
                f"Content of {obj} is shown for {max(1, reveal_seconds() // 60)} minutes; "
                "this was recorded.",
            )
            return HttpResponseRedirect(back)
        return self.render_page(
            request,
            "admin/ttmemory/reveal.html",
            f"Reveal the content of {obj}",
            {
                "object": obj,
                "form": form,
                "next": back,
                "object_count": len(ids),
                "object_type": kind,
                "reveal_minutes": max(1, reveal_seconds() // 60),
                "revealed_until": revealed_until(request, kind, obj.pk),
            },
        )
