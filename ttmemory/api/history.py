"""Time travel over HTTP: rewind a session to a message (with a preview), fork it, edit a message
into a new branch, list its branches. Actions of ``SessionViewSet``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiExample
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryViewSet, extend_schema
from ttmemory.api.examples import CHAT, DIFF_EXAMPLE, ROLLBACK_EXAMPLE, SESSION_EXAMPLE
from ttmemory.api.messages import IDEMPOTENCY_HEADER
from ttmemory.api.permissions import CanRollback, CanRollbackToWrite
from ttmemory.api.snapshots import rollback_answer
from ttmemory.models import AuditAction, MemorySession
from ttmemory.selectors import session_branches, session_rewind_preview
from ttmemory.services import session_edit, session_fork, session_rewind
from ttmemory.services.idempotency import idempotent_call

POINT_CONFLICT = (
    "409 when the seq is not a live message of the session (never stored, trimmed, or removed "
    "by a rollback or rewind) or cutting there would split a tool group (a call and its "
    "results are kept or removed whole); `group` then names the group's first and last seq, "
    "so cut before the first or at the last."
)
FORK_EXAMPLE = {
    **SESSION_EXAMPLE,
    "id": 8,
    "key": "support-chat-42~fork-1a2b3c4d",
    "parent": 7,
    "forked_at_seq": 3,
}


class TimeTravelMixin:
    """``rewind/``, ``fork/``, ``edit/`` and ``branches/`` under ``sessions/<id>/``."""

    @extend_schema(
        methods=["GET"],
        operation_id="rewind_get",
        summary="Preview a rewind: the messages and facts it would remove; nothing changes",
        description=POINT_CONFLICT,
        parameters=[s.RewindQuerySerializer],
        responses={200: s.SnapshotDiffSerializer, 409: None},
        examples=[OpenApiExample("Preview", value=DIFF_EXAMPLE, response_only=True)],
    )
    @extend_schema(
        methods=["POST"],
        operation_id="rewind_post",
        summary="Rewind the session to a message (undoable: a safety snapshot is taken first)",
        description="Removes every live message after `to_seq` (archived or deleted per "
        "TRIM_MODE), supersedes facts learned only from them and drops a summary covering "
        "them, in one transaction with its audit entry. POST to `undo` (the safety "
        "snapshot's rollback) to undo it. " + POINT_CONFLICT,
        request=s.RewindRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={200: s.RollbackSerializer, 409: None, 422: None},
        examples=[
            OpenApiExample("Rewind", value={"to_seq": 3, "reason": "ticket 4711: wrong city"}),
            OpenApiExample("Result", value=ROLLBACK_EXAMPLE, response_only=True),
        ],
    )
    @action(
        detail=True,
        methods=["get", "post"],
        url_name="rewind",
        permission_classes=[CanRollbackToWrite],
        serializer_class=s.RollbackSerializer,
    )
    def rewind(self: Any, request: Request, session_id: int) -> Response:
        session = self.get_object()
        if request.method == "GET":
            query = self.valid_query(s.RewindQuerySerializer)
            diff = session_rewind_preview(session=session, to_seq=query["to_seq"])
            return Response(s.SnapshotDiffSerializer(diff).data)
        data = self.valid_body(s.RewindRequestSerializer)

        def run() -> tuple[int, dict[str, Any]]:
            user = request.user if getattr(request.user, "pk", None) else None
            with transaction.atomic():  # the rewind and its audit entry commit together
                result = session_rewind(
                    session=session,
                    to_seq=data["to_seq"],
                    reason=data["reason"] or None,
                    created_by=user,  # type: ignore[arg-type]
                )
                self.audit(
                    AuditAction.REWIND,
                    object_type="session",
                    object_id=session.pk,
                    reason=data["reason"],
                    details={
                        "to_seq": data["to_seq"],
                        "safety_snapshot": result.safety.pk,
                        "removed": len(result.removed_seqs),
                        "facts_superseded": len(result.superseded_facts),
                        "via": "api",
                    },
                )
            return status.HTTP_200_OK, rollback_answer(request, session, result)

        return idempotently(self, f"rewind:{session.pk}", run)

    @extend_schema(
        operation_id="fork_post",
        summary="Fork the session: a new session with its history up to a message",
        description="The fork holds a copy of the live messages up to `at_seq` (all when "
        "null, none when 0), the state variables, and the summary unless it covers later "
        "messages; it records `parent` and `forked_at_seq`. The session itself is not "
        "changed. " + POINT_CONFLICT,
        request=s.ForkRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: s.SessionDetailSerializer, 409: None, 422: None},
        examples=[
            OpenApiExample("Fork", value={"at_seq": 3}),
            OpenApiExample("Forked", value=FORK_EXAMPLE, response_only=True),
        ],
    )
    @action(
        detail=True,
        methods=["post"],
        url_name="fork",
        permission_classes=[CanRollback],
        serializer_class=s.SessionDetailSerializer,
    )
    def fork(self: Any, request: Request, session_id: int) -> Response:
        session = self.get_object()
        data = self.valid_body(s.ForkRequestSerializer)

        def run() -> tuple[int, dict[str, Any]]:
            with transaction.atomic():
                fork = session_fork(session=session, at_seq=data["at_seq"], key=data.get("key"))
                audit_fork(self, session, fork, details={"at_seq": data["at_seq"]})
            return status.HTTP_201_CREATED, dict(s.SessionDetailSerializer(fork).data)

        return idempotently(self, f"fork:{session.pk}", run)

    @extend_schema(
        operation_id="edit_post",
        summary="Edit a message into a new branch (edit and regenerate)",
        description="Forks the session before message `seq` and appends `message` in its "
        "place; answers with the new branch, whose newest message is the edited one (ask the "
        "model for its answer next). The session itself stays as the previous branch. "
        + POINT_CONFLICT,
        request=s.EditRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: s.SessionDetailSerializer, 409: None, 422: None},
        examples=[
            OpenApiExample("Edit", value={"seq": 3, "message": CHAT[0]}),
            OpenApiExample("New branch", value=FORK_EXAMPLE, response_only=True),
        ],
    )
    @action(
        detail=True,
        methods=["post"],
        url_name="edit",
        permission_classes=[CanRollback],
        serializer_class=s.SessionDetailSerializer,
    )
    def edit(self: Any, request: Request, session_id: int) -> Response:
        session = self.get_object()
        data = self.valid_body(s.EditRequestSerializer)

        def run() -> tuple[int, dict[str, Any]]:
            with transaction.atomic():
                branch = session_edit(
                    session=session, seq=data["seq"], message=data["message"], key=data.get("key")
                )
                audit_fork(self, session, branch, details={"edited_seq": data["seq"]})
            return status.HTTP_201_CREATED, dict(s.SessionDetailSerializer(branch).data)

        return idempotently(self, f"edit:{session.pk}", run)

    @extend_schema(
        operation_id="branches_get",
        summary="List the sessions forked from this one, oldest first",
        responses=s.SessionSerializer(many=True),
        examples=[OpenApiExample("Branches", value=[FORK_EXAMPLE], response_only=True)],
    )
    @action(
        detail=True,
        url_name="branches",
        serializer_class=s.SessionSerializer,
        pagination_class=None,  # one plain list, as a session's snapshots are
    )
    def branches(self: Any, request: Request, session_id: int) -> Response:
        session = self.get_object()
        return Response(s.SessionSerializer(session_branches(session=session), many=True).data)


def audit_fork(
    view: MemoryViewSet, parent: MemorySession, fork: MemorySession, *, details: dict[str, Any]
) -> None:
    view.audit(
        AuditAction.FORK,
        object_type="session",
        object_id=parent.pk,
        details={
            "fork": fork.pk,
            "forked_at_seq": fork.forked_at_seq,
            "messages": fork.message_count,
            **details,
            "via": "api",
        },
    )


def idempotently(
    view: MemoryViewSet, scope: str, run: Callable[[], tuple[int, dict[str, Any]]]
) -> Response:
    """``run()`` once per ``Idempotency-Key`` (when the request has one), as appends are."""
    key = view.request.headers.get("Idempotency-Key")
    if key is None:
        code, body = run()
        return Response(body, status=code)
    code, body, replayed = idempotent_call(
        namespace=view.namespace,
        scope=scope,
        key=key,
        fingerprint=view.fingerprint(),
        call=run,
    )
    headers = {"Idempotent-Replayed": "true"} if replayed else {}
    return Response(body, status=code, headers=headers)
