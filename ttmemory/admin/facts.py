"""Facts and profiles in the admin: keyword search on encrypted text, chains, correct, forget."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import timezone
from django.utils.html import format_html

from ttmemory.admin.base import (
    ConsoleAdmin,
    NamespaceFilter,
    ReasonForm,
    View,
    record_on,
    require,
)
from ttmemory.admin.masking import can_reveal, is_revealed, masking_enabled, shown
from ttmemory.admin.selectors import fact_chain, fact_ids_matching, fact_namespaces
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import AuditAction, AuditEntry, Fact, MemorySession, Profile
from ttmemory.services import fact_forget, fact_supersede
from ttmemory.services.facts import MAX_FACT_CHARS

PERM_CORRECT = "ttmemory.change_fact"
# Keyword search hashes the query with each namespace's own blind-index key: across more
# namespaces than this, staff pick one in the filter first.
MAX_SEARCH_NAMESPACES = 1000
PERM_FORGET = "ttmemory.delete_fact"


def fact_status(fact: Fact) -> str:
    """current, superseded (replaced by a newer version), ended (e.g. by a rollback), expired."""
    if fact.superseded_by_id is not None:
        return "superseded"
    if fact.valid_to is not None:
        return "ended"
    if fact.expires_at is not None and fact.expires_at <= timezone.now():
        return "expired"
    return "current"


class ValidityFilter(admin.SimpleListFilter):
    title = "validity"
    parameter_name = "validity"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("current", "Current"),
            ("superseded", "Superseded by a newer version"),
            ("ended", "Ended (e.g. by a rollback)"),
            ("expired", "Expired"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value == "current":
            return queryset.filter(
                Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
                superseded_by__isnull=True,
                valid_to__isnull=True,
            )
        if value == "superseded":
            return queryset.filter(superseded_by__isnull=False)
        if value == "ended":
            return queryset.filter(superseded_by__isnull=True, valid_to__isnull=False)
        if value == "expired":
            return queryset.filter(expires_at__lte=timezone.now())
        return queryset


class CorrectForm(ReasonForm):
    text = forms.CharField(
        label="Corrected text",
        max_length=MAX_FACT_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 70}),
        help_text="A new version is stored; the current one stays in the chain as superseded.",
    )
    field_order = ["text", "reason"]


@admin.register(Fact)
class FactAdmin(ConsoleAdmin):
    list_display = ("id", "namespace", "kind", "status", "valid_from", "recall_count", "source")
    list_display_links = ("id",)
    list_filter = (NamespaceFilter, "kind", ValidityFilter, "valid_from")
    # The search box searches the blind keyword index (see get_search_results).
    search_fields = ("namespace",)
    search_help_text = (
        "Keywords of the fact text (found through the blind index, so masked text is "
        "searchable; every word must match), a namespace, or a fact id."
    )
    ordering = ("-created_at", "-pk")
    list_per_page = 50
    actions = ["forget_action"]
    reveal_object_type = "fact"
    fields = (
        "namespace",
        "kind",
        "status",
        "superseded_by_link",
        "valid_from",
        "valid_to",
        "expires_at",
        "source",
        "metadata",
        "recall_count",
        "last_recalled_at",
        "embedding_model",
        "term_count",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Fact]:
        return super().get_queryset(request).select_related("usage").defer("embedding")

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        """The text column masks per fact, so it needs the request: a closure, not state."""

        def text(obj: Fact) -> str:
            value = shown(obj.text, is_revealed(request, "fact", obj.pk))
            return value if len(value) <= 120 else value[:119] + "\u2026"

        text.short_description = "Text"  # type: ignore[attr-defined]
        columns = list(super().get_list_display(request))
        columns.insert(3, text)
        return columns

    def get_list_display_links(self, request: HttpRequest, list_display: Any) -> list[Any]:
        return ["id", list_display[3]]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Fact], search_term: str
    ) -> tuple[QuerySet[Fact], bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        chosen = request.GET.get(NamespaceFilter.parameter_name)
        namespaces = [chosen] if chosen else fact_namespaces(limit=MAX_SEARCH_NAMESPACES + 1)
        condition = Q(namespace=term)
        if len(namespaces) <= MAX_SEARCH_NAMESPACES:
            condition |= Q(pk__in=fact_ids_matching(query=term, namespaces=namespaces))
        else:
            messages.warning(
                request,
                f"Keywords are searched in at most {MAX_SEARCH_NAMESPACES} namespaces (each has "
                "its own blind-index key): pick a namespace to search its facts by keyword.",
            )
        if term.lstrip("#").isdigit():
            condition |= Q(pk=int(term.lstrip("#")))
        return queryset.filter(condition), False

    @admin.display(description="Recall count", ordering="usage__recall_count")
    def recall_count(self, obj: Fact) -> int:
        return obj.recall_count  # FactUsage's row, fetched with the fact (get_queryset)

    @admin.display(description="Validity")
    def status(self, obj: Fact) -> str:
        return fact_status(obj)

    @admin.display(description="Superseded by")
    def superseded_by_link(self, obj: Fact) -> str:
        if obj.superseded_by_id is None:
            return "-"
        url = self.console_url("change", obj.superseded_by_id)
        return format_html('<a href="{}">fact #{}</a>', url, obj.superseded_by_id)

    @admin.display(description="Source")
    def source(self, obj: Fact) -> str:
        if obj.source_session_id is None:
            return "-"
        url = self.console_url("change", obj.source_session_id, model=MemorySession)
        seqs = ", ".join(str(s) for s in obj.source_seqs or []) or "-"
        return format_html(
            '<a href="{}">session #{}</a>, messages {}', url, obj.source_session_id, seqs
        )

    # -- detail page ------------------------------------------------------------------------

    def reveal_targets(self, obj: Any) -> tuple[str, list[Any]]:
        return obj.namespace, [fact.pk for fact in fact_chain(fact=obj)]

    def console_views(self) -> Sequence[tuple[str, View, str]]:
        return [
            *super().console_views(),
            ("<int:object_id>/correct/", self.correct_view, "correct"),
            ("<int:object_id>/forget/", self.forget_view, "forget"),
        ]

    def detail_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        fact = obj
        chain = [
            {
                "fact": item,
                "text": shown(item.text, is_revealed(request, "fact", item.pk)),
                "status": fact_status(item),
                "url": self.console_url("change", item.pk),
                "is_this": item.pk == fact.pk,
            }
            for item in fact_chain(fact=fact)
        ]
        query = f"?namespace={quote(fact.namespace, safe='')}"
        return {
            "chain": chain,
            "text": shown(fact.text, is_revealed(request, "fact", fact.pk)),
            "revealed": is_revealed(request, "fact", fact.pk),
            "masking": masking_enabled(),
            "can_reveal": can_reveal(request),
            "reveal_url": self.console_url("reveal", fact.pk),
            "can_correct": request.user.has_perm(PERM_CORRECT) and fact_status(fact) == "current",
            "correct_url": self.console_url("correct", fact.pk),
            "can_forget": request.user.has_perm(PERM_FORGET),
            "forget_url": self.console_url("forget", fact.pk),
            "namespace_url": self.console_url("namespace", model=MemorySession) + query,
            "audit_url": self.console_url("changelist", model=AuditEntry) + query,
        }

    # -- correct ----------------------------------------------------------------------------

    def correct_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """A new version of the fact supersedes it (``fact_supersede``), recorded."""
        require(request, PERM_CORRECT)
        fact: Fact = self.get_console_object(request, object_id)
        if fact_status(fact) != "current":
            messages.error(
                request, f"Fact #{fact.pk} is {fact_status(fact)}; correct the current version."
            )
            return HttpResponseRedirect(self.change_url(fact))
        revealed = is_revealed(request, "fact", fact.pk)
        form = CorrectForm(request.POST or None, initial={"text": fact.text} if revealed else None)
        if request.method == "POST" and form.is_valid():
            try:
                # The change and its audit entry commit together, or neither does.
                with transaction.atomic():
                    new = fact_supersede(
                        namespace=fact.namespace, fact_id=fact.pk, text=form.cleaned_data["text"]
                    )
                    record_on(
                        request,
                        "fact",
                        fact,
                        action=AuditAction.FACT_CORRECT,
                        reason=form.cleaned_data["reason"],
                        new_fact=new.pk,
                    )
            except (MemoryValidationError, Fact.DoesNotExist) as exc:
                messages.error(request, f"Nothing was changed: {exc}")
                return HttpResponseRedirect(self.change_url(fact))
            if new.pk == fact.pk:
                messages.info(request, f"Fact #{fact.pk} already says that; nothing superseded.")
            else:
                messages.success(request, f"Fact #{fact.pk} is superseded by fact #{new.pk}.")
            return HttpResponseRedirect(self.change_url(new))
        return self.render_page(
            request,
            "admin/ttmemory/fact_correct.html",
            f"Correct fact #{fact.pk}",
            {
                "fact": fact,
                "fact_url": self.change_url(fact),
                "text": shown(fact.text, revealed),
                "form": form,
            },
        )

    # -- forget -----------------------------------------------------------------------------

    def _forget(self, request: HttpRequest, facts: Sequence[Fact], reason: str) -> int:
        done = 0
        for fact in facts:
            try:
                # Each forget and its audit entry commit together, or neither does.
                with transaction.atomic():
                    fact_forget(namespace=fact.namespace, fact_id=fact.pk)
                    record_on(
                        request,
                        "fact",
                        fact,
                        action=AuditAction.FACT_FORGET,
                        reason=reason,
                        kind=fact.kind,
                    )
            except Fact.DoesNotExist:
                continue
            done += 1
        return done

    def forget_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """Delete a fact for good (``fact_forget``) after a reason, recorded."""
        require(request, PERM_FORGET)
        fact: Fact = self.get_console_object(request, object_id)
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            self._forget(request, [fact], form.cleaned_data["reason"])
            messages.success(request, f"Fact #{fact.pk} of {fact.namespace} is forgotten.")
            return HttpResponseRedirect(self.console_url("changelist"))
        return self._forget_page(request, [fact], form, action=False)

    def has_forget_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm(PERM_FORGET))

    @admin.action(description="Forget the selected facts…", permissions=["forget"])
    def forget_action(self, request: HttpRequest, queryset: QuerySet[Fact]) -> HttpResponse | None:
        facts = list(queryset)
        form = ReasonForm(request.POST if request.POST.get("post") else None)
        if request.POST.get("post") and form.is_valid():
            done = self._forget(request, facts, form.cleaned_data["reason"])
            messages.success(request, f"{done} fact(s) forgotten.")
            return None
        return self._forget_page(request, facts, form, action=True)

    def _forget_page(
        self, request: HttpRequest, facts: Sequence[Fact], form: ReasonForm, *, action: bool
    ) -> HttpResponse:
        rows = [
            {
                "fact": fact,
                "text": shown(fact.text, is_revealed(request, "fact", fact.pk)),
                "status": fact_status(fact),
                "url": self.change_url(fact),
            }
            for fact in facts
        ]
        return self.render_page(
            request,
            "admin/ttmemory/fact_forget.html",
            "Forget facts" if len(facts) != 1 else f"Forget fact #{facts[0].pk}",
            {
                "rows": rows,
                "form": form,
                "action": action,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                "changelist_url": self.console_url("changelist"),
            },
        )


@admin.register(Profile)
class ProfileAdmin(ConsoleAdmin):
    list_display = ("namespace", "kind", "keys", "updated_at", "expires_at")
    list_filter = ("kind", NamespaceFilter)
    search_fields = ("namespace",)
    search_help_text = "Search by namespace."
    ordering = ("namespace", "kind")
    fields = ("namespace", "kind", "keys", "updated_at", "expires_at")
    readonly_fields = fields
    reveal_object_type = "profile"

    def detail_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        revealed = is_revealed(request, "profile", obj.pk)
        return {
            "key_count": len(obj.data or {}),
            "data": _profile_data(obj.data or {}, revealed=revealed),
            "revealed": revealed,
            "masking": masking_enabled(),
            "can_reveal": can_reveal(request),
            "reveal_url": self.console_url("reveal", obj.pk),
        }

    @admin.display(description="Keys")
    def keys(self, obj: Profile) -> str:
        """The key names, or only how many there are while content is masked (a key name such
        as ``hiv_status`` says as much as its value); the detail page reveals them."""
        data = obj.data or {}
        if masking_enabled():
            return f"{len(data)} key{'' if len(data) == 1 else 's'}"
        return ", ".join(sorted(data)) or "-"


def _profile_data(data: dict[str, Any], *, revealed: bool) -> list[tuple[str, str]]:
    """Each key of a profile with its value as JSON; both masked unless revealed."""
    rows = []
    for key in sorted(data):
        value = json.dumps(data[key], ensure_ascii=False, sort_keys=True)
        rows.append((shown(key, revealed), shown(value, revealed)))
    return rows
