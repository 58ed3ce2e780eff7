"""The session console's history changes: safe rollback and its undo, rewind, fork and a manual
snapshot, each previewed where it removes anything, confirmed with a reason and audited."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast
from urllib.parse import quote

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.html import format_html

from ttmemory.admin.base import PERM_ROLLBACK, ConsoleAdmin, ReasonForm, View, record_on, require
from ttmemory.admin.masking import can_reveal, is_revealed, shown
from ttmemory.admin.transcript import build_transcript, rows_from_pairs
from ttmemory.exceptions import (
    HistoryPointError,
    LockTimeout,
    MemoryValidationError,
    SnapshotIntegrityError,
)
from ttmemory.models import AuditAction, Fact, MemorySession, Snapshot, SnapshotKind
from ttmemory.results import RollbackResult, SnapshotDiff
from ttmemory.selectors import session_rewind_preview, snapshot_diff, snapshot_list
from ttmemory.selectors.history import history_cut
from ttmemory.services import (
    session_fork,
    session_rewind,
    snapshot_create,
    snapshot_rollback_detailed,
)


def state_token(session: MemorySession) -> str:
    """Changes whenever the session does: a rollback confirmed on a stale preview is refused."""
    stamp = session.updated_at.isoformat() if session.updated_at else ""
    return f"{stamp}|{session.last_seq}|{session.message_count}"


class RollbackForm(ReasonForm):
    state = forms.CharField(widget=forms.HiddenInput)


class ForkForm(ReasonForm):
    key = forms.CharField(
        label="New session key",
        max_length=255,
        required=False,
        strip=False,
        help_text="Leave empty for the session's key with a random suffix.",
    )
    field_order = ["key", "reason"]


class SnapshotForm(ReasonForm):
    label = forms.CharField(label="Label", max_length=200, required=False)
    field_order = ["label", "reason"]


class SessionHistoryMixin(ConsoleAdmin):
    """The session admin's history views (routes under ``memorysession/<id>/``): rollback,
    undo, rewind, fork and snapshot, for staff with the rollback permission."""

    def has_rollback_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm(PERM_ROLLBACK))

    def console_views(self) -> Sequence[tuple[str, View, str]]:
        return [
            *super().console_views(),
            ("<int:object_id>/rollback/", self.rollback_choose_view, "rollback_choose"),
            ("<int:object_id>/rollback/<int:snapshot_id>/", self.rollback_view, "rollback"),
            ("<int:object_id>/undo/<int:snapshot_id>/", self.undo_view, "undo"),
            ("<int:object_id>/snapshot/", self.snapshot_view, "snapshot"),
            ("<int:object_id>/rewind/<int:seq>/", self.rewind_view, "rewind"),
            ("<int:object_id>/fork/<int:seq>/", self.fork_view, "fork"),
        ]

    # -- rollback ---------------------------------------------------------------------------

    @admin.action(
        description="Roll back the selected session to a snapshot…", permissions=["rollback"]
    )
    def rollback_action(
        self, request: HttpRequest, queryset: QuerySet[MemorySession]
    ) -> HttpResponse | None:
        sessions = list(queryset[:2])
        if len(sessions) != 1:
            messages.warning(request, "Select exactly one session to roll back.")
            return None
        return HttpResponseRedirect(self.console_url("rollback_choose", sessions[0].pk))

    def _rollback_session(self, request: HttpRequest, object_id: int) -> MemorySession:
        require(request, PERM_ROLLBACK)
        session: MemorySession = self.get_console_object(request, object_id)
        return session

    def rollback_choose_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """Pick the snapshot to roll back to (the admin action leads here)."""
        session = self._rollback_session(request, object_id)
        revealed = is_revealed(request, "session", session.pk)
        snapshots = [
            {
                "snapshot": snap,
                "label": shown(snap.label, revealed) if snap.label else "",
                "rollback_url": self.console_url("rollback", session.pk, snap.pk),
            }
            for snap in snapshot_list(session=session)
        ]
        return self.render_page(
            request,
            "admin/ttmemory/rollback_choose.html",
            f"Roll back {session}: choose a snapshot",
            {
                "session": session,
                "session_url": self.change_url(session),
                "snapshots": snapshots,
                "snapshot_url": self.console_url("snapshot", session.pk),
            },
        )

    def undo_view(self, request: HttpRequest, object_id: int, snapshot_id: int) -> HttpResponse:
        """Undo a rollback: roll back (safely again) to the safety snapshot it took."""
        return self.rollback_view(request, object_id, snapshot_id, undo=True)

    def rollback_view(
        self, request: HttpRequest, object_id: int, snapshot_id: int, undo: bool = False
    ) -> HttpResponse:
        """The preview of a rollback with a reason field; confirming runs a safe rollback."""
        session = self._rollback_session(request, object_id)
        snapshot = Snapshot.objects.filter(pk=snapshot_id, session=session).defer("payload").first()
        if snapshot is None or (undo and snapshot.kind != SnapshotKind.SAFETY):
            raise Http404("No such snapshot of this session (retention may have removed it).")
        session_url = self.change_url(session)
        form, stale, reason = self._confirmation(request, session)
        if reason is not None:
            return self._do_rollback(request, session, snapshot, reason, undo=undo)
        try:
            diff = snapshot_diff(session=session, snapshot=snapshot)
        except MemoryValidationError as exc:
            messages.error(request, str(exc))
            return HttpResponseRedirect(session_url)
        preview = self._preview(request, session, diff)
        verb = "Undo the rollback of" if undo else "Roll back"
        return self.render_page(
            request,
            "admin/ttmemory/rollback_confirm.html",
            f"{verb} {session}",
            {
                **preview,
                "session_url": session_url,
                "snapshot": snapshot,
                "snapshot_label": shown(snapshot.label, preview["revealed"]),
                "snapshot_url": self.console_url("change", snapshot.pk, model=Snapshot),
                "restored": build_transcript(
                    rows_from_pairs(diff.restore), revealed=preview["revealed"], show_gaps=False
                ),
                "form": form,
                "stale": stale,
                "undo": undo,
            },
        )

    def _confirmation(
        self, request: HttpRequest, session: MemorySession
    ) -> tuple[RollbackForm, bool, str | None]:
        """The reason form of a rollback or rewind preview: ``(form, stale, reason)``.

        ``reason`` is set when the confirmation is valid and the session is still in the state
        the preview showed; a session that changed meanwhile gives ``stale`` and a fresh form
        keeping the reason, so nothing runs against a preview nobody saw.
        """
        current = state_token(session)
        form = RollbackForm(request.POST or None, initial={"state": current})
        if request.method != "POST" or not form.is_valid():
            return form, False, None
        if form.cleaned_data["state"] != current:
            fresh = RollbackForm(initial={"state": current, "reason": form.cleaned_data["reason"]})
            return fresh, True, None
        return form, False, form.cleaned_data["reason"]

    def _preview(
        self, request: HttpRequest, session: MemorySession, diff: SnapshotDiff
    ) -> dict[str, Any]:
        """What a rollback and a rewind preview page both show: the messages removed, the
        facts superseded, masked unless revealed."""
        revealed = is_revealed(request, "session", session.pk)
        facts = [
            {
                "fact": fact,
                "text": shown(fact.text, revealed or is_revealed(request, "fact", fact.pk)),
                "url": self.console_url("change", fact.pk, model=Fact),
            }
            for fact in diff.facts_superseded
        ]
        return {
            "session": session,
            "diff": diff,
            "removed": build_transcript(
                rows_from_pairs(diff.remove), revealed=revealed, show_gaps=False
            ),
            "facts": facts,
            "revealed": revealed,
            "can_reveal": can_reveal(request),
            "reveal_url": self.console_url("reveal", session.pk)
            + f"?next={_q(request.get_full_path())}",
        }

    def _record_undoable(
        self,
        request: HttpRequest,
        session: MemorySession,
        result: RollbackResult,
        *,
        action: str,
        reason: str,
        **details: Any,
    ) -> None:
        """The audit entry of a change that a safety snapshot makes undoable (a rollback, its
        undo, a rewind): what it removed and superseded, beside ``details``."""
        record_on(
            request,
            "session",
            session,
            action=action,
            reason=reason,
            **details,
            safety_snapshot=result.safety.pk if result.safety else None,
            removed=len(result.removed_seqs),
            facts_superseded=len(result.superseded_facts),
            superseded_fact_ids=[fact.pk for fact in result.superseded_facts],
        )

    def _do_rollback(
        self,
        request: HttpRequest,
        session: MemorySession,
        snapshot: Snapshot,
        reason: str,
        *,
        undo: bool,
    ) -> HttpResponse:
        session_url = self.change_url(session)
        try:
            # The change and its audit entry commit together, or neither does.
            with transaction.atomic():
                result = snapshot_rollback_detailed(
                    session=session,
                    snapshot=snapshot,
                    safe=True,
                    created_by=cast(AbstractBaseUser, request.user),
                )
                self._record_undoable(
                    request,
                    session,
                    result,
                    action=AuditAction.UNDO if undo else AuditAction.ROLLBACK,
                    reason=reason,
                    snapshot=snapshot.pk,
                    restored=len(result.restored_seqs),
                )
        except (MemoryValidationError, SnapshotIntegrityError, LockTimeout) as exc:
            messages.error(request, f"Nothing was changed: {exc}")
            return HttpResponseRedirect(session_url)
        safety = result.safety
        done = "Undid the rollback of" if undo else "Rolled back"
        undo_url = self.console_url("undo", session.pk, safety.pk) if safety else ""
        messages.success(
            request,
            format_html(
                "{} {} to snapshot #{}: {} message(s) removed, {} restored, {} fact(s) "
                'superseded. <a href="{}" class="ttm-undo-link">Undo</a>',
                done,
                session,
                snapshot.pk,
                len(result.removed_seqs),
                len(result.restored_seqs),
                len(result.superseded_facts),
                undo_url,
            ),
        )
        return HttpResponseRedirect(session_url + "#transcript")

    # -- rewind and fork (time travel) -------------------------------------------------------

    def rewind_view(self, request: HttpRequest, object_id: int, seq: int) -> HttpResponse:
        """The preview of a rewind to message ``seq`` with a reason field; confirming rewinds
        (a safety snapshot first, so the success message offers the undo)."""
        session = self._rollback_session(request, object_id)
        session_url = self.change_url(session)
        form, stale, reason = self._confirmation(request, session)
        if reason is not None:
            return self._do_rewind(request, session, seq, reason)
        try:
            diff = session_rewind_preview(session=session, to_seq=seq)
        except MemoryValidationError as exc:
            messages.error(request, f"Cannot rewind to #{seq}: {exc.message}")
            return HttpResponseRedirect(session_url + "#transcript")
        preview = self._preview(request, session, diff)
        return self.render_page(
            request,
            "admin/ttmemory/rewind_confirm.html",
            f"Rewind {session} to message #{seq}",
            {
                **preview,
                "session_url": session_url,
                "seq": seq,
                "message_url": f"{session_url}#msg-{seq}",
                "form": form,
                "stale": stale,
            },
        )

    def _do_rewind(
        self, request: HttpRequest, session: MemorySession, seq: int, reason: str
    ) -> HttpResponse:
        session_url = self.change_url(session)
        try:
            with transaction.atomic():  # the change and its audit entry, or neither
                result = session_rewind(
                    session=session,
                    to_seq=seq,
                    reason=reason,
                    created_by=cast(AbstractBaseUser, request.user),
                )
                self._record_undoable(
                    request, session, result, action=AuditAction.REWIND, reason=reason, to_seq=seq
                )
        except (MemoryValidationError, LockTimeout) as exc:
            messages.error(request, f"Nothing was changed: {exc}")
            return HttpResponseRedirect(session_url)
        messages.success(
            request,
            format_html(
                "Rewound {} to message #{}: {} message(s) removed, {} fact(s) superseded. "
                '<a href="{}" class="ttm-undo-link">Undo</a>',
                session,
                seq,
                len(result.removed_seqs),
                len(result.superseded_facts),
                self.console_url("undo", session.pk, result.safety.pk),
            ),
        )
        return HttpResponseRedirect(session_url + "#transcript")

    def fork_view(self, request: HttpRequest, object_id: int, seq: int) -> HttpResponse:
        """Fork the session at message ``seq`` into a new session (the session itself is not
        changed); asks for the new key (optional) and a reason."""
        session = self._rollback_session(request, object_id)
        session_url = self.change_url(session)
        form = ForkForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                with transaction.atomic():
                    fork = session_fork(
                        session=session, at_seq=seq, key=form.cleaned_data["key"] or None
                    )
                    record_on(
                        request,
                        "session",
                        session,
                        action=AuditAction.FORK,
                        reason=form.cleaned_data["reason"],
                        fork=fork.pk,
                        forked_at_seq=seq,
                        messages=fork.message_count,
                    )
            except HistoryPointError as exc:
                messages.error(request, f"Cannot fork at #{seq}: {exc.message}")
                return HttpResponseRedirect(session_url + "#transcript")
            except MemoryValidationError as exc:
                form.add_error("key" if exc.field == "key" else None, exc.message)
            except LockTimeout as exc:
                messages.error(request, f"Nothing was changed: {exc}")
                return HttpResponseRedirect(session_url)
            else:
                messages.success(
                    request,
                    f"Forked {session} at message #{seq} into {fork} "
                    f"({fork.message_count} message(s)); {session} is unchanged.",
                )
                return HttpResponseRedirect(self.change_url(fork))
        try:
            kept = len(history_cut(session=session, seq=seq, field="at_seq").kept)
        except MemoryValidationError as exc:
            messages.error(request, f"Cannot fork at #{seq}: {exc.message}")
            return HttpResponseRedirect(session_url + "#transcript")
        return self.render_page(
            request,
            "admin/ttmemory/fork_confirm.html",
            f"Fork {session} at message #{seq}",
            {
                "session": session,
                "session_url": session_url,
                "seq": seq,
                "kept": kept,
                "form": form,
            },
        )

    # -- manual snapshot --------------------------------------------------------------------

    def snapshot_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """Take a manual snapshot (a point to roll back to later), with a reason."""
        session = self._rollback_session(request, object_id)
        form = SnapshotForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            snapshot = snapshot_create(
                session=session,
                label=form.cleaned_data["label"],
                created_by=cast(AbstractBaseUser, request.user),
            )
            record_on(
                request,
                "session",
                session,
                action=AuditAction.SNAPSHOT,
                reason=form.cleaned_data["reason"],
                snapshot=snapshot.pk,
            )
            messages.success(request, f"Snapshot #{snapshot.pk} of {session} taken.")
            return HttpResponseRedirect(self.change_url(session) + "#snapshots")
        return self.render_page(
            request,
            "admin/ttmemory/snapshot_take.html",
            f"Take a snapshot of {session}",
            {"session": session, "session_url": self.change_url(session), "form": form},
        )


def _q(value: str) -> str:
    return quote(value, safe="")
