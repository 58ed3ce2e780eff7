"""Namespace tools: what a namespace holds, export as a JSON download, erase after typing it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.utils import timezone
from django.utils.text import slugify

from ttmemory.admin.base import (
    PERM_ERASE,
    PERM_EXPORT,
    ConsoleAdmin,
    ReasonForm,
    View,
    record,
    require,
)
from ttmemory.admin.masking import is_revealed, shown
from ttmemory.admin.selectors import namespace_overview
from ttmemory.exceptions import MemoryValidationError
from ttmemory.longterm.episodes import message_text
from ttmemory.models import AuditAction, AuditEntry, Fact, MemorySession
from ttmemory.selectors import message_search, namespace_export
from ttmemory.services import namespace_erase
from ttmemory.validation import clean_identifier

SEARCH_HITS = 20


class NamespaceField(forms.CharField):
    def clean(self, value: Any) -> str:
        value = super().clean(value)
        try:
            return clean_identifier(value, field="namespace")
        except MemoryValidationError as exc:
            raise forms.ValidationError(exc.message) from exc


class ExportForm(ReasonForm):
    namespace = NamespaceField(widget=forms.HiddenInput)


class EraseForm(ReasonForm):
    namespace = NamespaceField(widget=forms.HiddenInput)
    confirm = forms.CharField(
        label="Type the namespace to confirm",
        strip=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "size": 40}),
    )
    field_order = ["namespace", "confirm", "reason"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if "namespace" in cleaned and cleaned.get("confirm") != cleaned["namespace"]:
            self.add_error(
                "confirm", "This is not the namespace: type it exactly as shown to erase it."
            )
        return cleaned


class NamespaceToolsMixin(ConsoleAdmin):
    """The namespace pages hang under the sessions admin (``memorysession/namespace/``)."""

    def console_views(self) -> Sequence[tuple[str, View, str]]:
        return [
            *super().console_views(),
            ("namespace/", self.namespace_view, "namespace"),
            ("namespace/export/", self.namespace_export_view, "namespace_export"),
            ("namespace/erase/", self.namespace_erase_view, "namespace_erase"),
        ]

    def namespace_tools_url(self, namespace: str = "") -> str:
        url = self.console_url("namespace", model=MemorySession)
        return f"{url}?namespace={quote(namespace, safe='')}" if namespace else url

    def _namespace_param(self, request: HttpRequest) -> tuple[str, str]:
        raw = (request.GET.get("namespace") or "").strip()
        if not raw:
            return "", ""
        try:
            return clean_identifier(raw, field="namespace"), ""
        except MemoryValidationError as exc:
            return "", exc.message

    def namespace_view(self, request: HttpRequest) -> HttpResponse:
        """Counts of one namespace, with export and erase (each behind its permission)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        namespace, error = self._namespace_param(request)
        context: dict[str, Any] = {"namespace": namespace, "error": error}
        if namespace:
            query = f"?namespace={quote(namespace, safe='')}"
            context.update(
                counts=namespace_overview(namespace=namespace),
                sessions_url=self.console_url("changelist", model=MemorySession) + query,
                facts_url=self.console_url("changelist", model=Fact) + query,
                audit_url=self.console_url("changelist", model=AuditEntry) + query,
                can_export=request.user.has_perm(PERM_EXPORT),
                can_erase=request.user.has_perm(PERM_ERASE),
                export_form=ExportForm(initial={"namespace": namespace}),
                export_url=self.console_url("namespace_export", model=MemorySession),
                erase_url=self.console_url("namespace_erase", model=MemorySession) + query,
            )
            context.update(self._search_context(request, namespace))
        return self.render_page(
            request,
            "admin/ttmemory/namespace_tools.html",
            f"Namespace {namespace}" if namespace else "Namespace tools",
            context,
        )

    def _search_context(self, request: HttpRequest, namespace: str) -> dict[str, Any]:
        """Past messages of the namespace matching ``?q=``, masked like transcripts."""
        search = (request.GET.get("q") or "").strip()[:500]
        if not search:
            return {"search": ""}
        hits = []
        for hit in message_search(namespace=namespace, query=search, k=SEARCH_HITS, window=0):
            text = message_text(hit.message)
            revealed = is_revealed(request, "session", hit.session.pk)
            hits.append(
                {
                    "session": hit.session,
                    "seq": hit.seq,
                    "role": hit.message.get("role", ""),
                    "archived": hit.archived,
                    "score": hit.score,
                    "text": shown(text, revealed),
                    "url": self.console_url("change", hit.session.pk, model=MemorySession)
                    + "#transcript",
                }
            )
        return {"search": search, "hits": hits}

    def namespace_export_view(self, request: HttpRequest) -> HttpResponse:
        """POST: the whole namespace as a JSON download, recorded (action ``export``)."""
        require(request, PERM_EXPORT)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        form = ExportForm(request.POST)
        if not form.is_valid():
            namespace = str(request.POST.get("namespace") or "")
            for errors in form.errors.values():
                for error in errors:
                    messages.error(request, f"Not exported: {error}")
            return HttpResponseRedirect(self.namespace_tools_url(namespace))
        namespace = form.cleaned_data["namespace"]
        data = namespace_export(namespace=namespace)
        sessions = data["sessions"]
        record(
            request,
            action=AuditAction.EXPORT,
            namespace=namespace,
            object_type="namespace",
            object_id="",
            reason=form.cleaned_data["reason"],
            details={
                "sessions": len(sessions),
                "messages": sum(len(s["messages"]) for s in sessions),
                "snapshots": sum(len(s["snapshots"]) for s in sessions),
                "facts": len(data["facts"]),
                "profiles": len(data["profiles"]),
            },
        )
        body = json.dumps(data, cls=DjangoJSONEncoder, ensure_ascii=False, indent=2)
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        filename = f"ttmemory-{slugify(namespace) or 'namespace'}-{stamp}.json"
        response = HttpResponse(body, content_type="application/json; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        response["Cache-Control"] = "no-store"
        return response

    def namespace_erase_view(self, request: HttpRequest) -> HttpResponse:
        """Erase everything of a namespace once its name is typed and a reason given."""
        require(request, PERM_ERASE)
        if request.method == "POST":
            form = EraseForm(request.POST)
            namespace = str(request.POST.get("namespace") or "")
            if form.is_valid():
                namespace = form.cleaned_data["namespace"]
                with transaction.atomic():  # the erase and its audit entry, together
                    receipt = namespace_erase(namespace=namespace)
                    record(
                        request,
                        action=AuditAction.ERASE,
                        namespace=namespace,
                        object_type="namespace",
                        reason=form.cleaned_data["reason"],
                        details={
                            "counts": receipt.counts,
                            "total": receipt.total,
                            "redis_keys": receipt.redis_keys,
                            "erased_at": receipt.erased_at,
                        },
                    )
                messages.success(
                    request,
                    f"Erased namespace {namespace}: {receipt.total} row(s) "
                    f"({receipt.counts.get('memory_session', 0)} session(s), "
                    f"{receipt.counts.get('message', 0)} message(s), "
                    f"{receipt.counts.get('fact', 0)} fact(s)). The audit log keeps the record.",
                )
                return HttpResponseRedirect(self.console_url("changelist", model=MemorySession))
        else:
            namespace, error = self._namespace_param(request)
            if not namespace:
                messages.error(request, error or "Choose a namespace first.")
                return HttpResponseRedirect(self.namespace_tools_url())
            form = EraseForm(initial={"namespace": namespace})
        counts = None
        with contextlib.suppress(MemoryValidationError):
            counts = namespace_overview(namespace=namespace)
        return self.render_page(
            request,
            "admin/ttmemory/namespace_erase.html",
            f"Erase namespace {namespace}",
            {
                "namespace": namespace,
                "counts": counts,
                "form": form,
                "tools_url": self.namespace_tools_url(namespace),
            },
        )
