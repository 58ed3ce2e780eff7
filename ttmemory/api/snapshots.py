"""Snapshots over HTTP: take, list, preview a rollback, roll back safely, undo."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryAPIView
from ttmemory.api.permissions import CanRollback
from ttmemory.models import MemorySession, Snapshot, SnapshotKind
from ttmemory.results import RollbackResult
from ttmemory.selectors import snapshot_diff, snapshot_list
from ttmemory.services import snapshot_create, snapshot_rollback_detailed

SNAPSHOT_EXAMPLE = {
    "id": 12,
    "label": "before refund answer",
    "kind": "manual",
    "message_count": 3,
    "token_count": 61,
    "upto_seq": 3,
    "created_at": "2026-11-30T09:01:13Z",
}
ROLLBACK_EXAMPLE = {
    "safety_snapshot": {**SNAPSHOT_EXAMPLE, "id": 13, "label": "", "kind": "safety"},
    "removed_seqs": [4, 5],
    "restored_seqs": [],
    "facts_superseded": [31],
    "session": {"id": 7, "key": "support-chat-42", "message_count": 3, "last_seq": 5},
    "undo": "https://example.com/api/memory/sessions/7/snapshots/13/rollback/",
}


class SnapshotListView(MemoryAPIView):
    serializer_class = s.SnapshotSerializer

    @extend_schema(
        summary="List snapshots, newest first",
        responses=s.SnapshotSerializer(many=True),
        examples=[OpenApiExample("Snapshots", value=[SNAPSHOT_EXAMPLE], response_only=True)],
    )
    def get(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        return Response(s.SnapshotSerializer(snapshot_list(session=session), many=True).data)

    @extend_schema(
        summary="Take a snapshot of the session",
        request=s.SnapshotCreateSerializer,
        responses={201: s.SnapshotSerializer},
        examples=[OpenApiExample("Take", value={"label": "before refund answer"})],
    )
    def post(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        data = self.valid_body(s.SnapshotCreateSerializer)
        snapshot = snapshot_create(session=session, label=data["label"])
        return Response(s.SnapshotSerializer(snapshot).data, status=status.HTTP_201_CREATED)


class SnapshotDetailView(MemoryAPIView):
    serializer_class = s.SnapshotSerializer

    @extend_schema(
        summary="Get a snapshot",
        examples=[OpenApiExample("Snapshot", value=SNAPSHOT_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, session_id: int, snapshot_id: int) -> Response:
        session = self.get_memory_session(session_id)
        return Response(s.SnapshotSerializer(self.get_snapshot(session, snapshot_id)).data)


class SnapshotDiffView(MemoryAPIView):
    serializer_class = s.SnapshotDiffSerializer

    @extend_schema(
        summary="Preview a rollback: messages removed and restored, facts superseded",
        examples=[
            OpenApiExample(
                "Preview",
                value={
                    "remove": [{"seq": 4, "message": {"role": "assistant", "content": "…"}}],
                    "restore": [],
                    "tokens_removed": 40,
                    "tokens_restored": 0,
                    "summary_changes": False,
                    "facts_superseded": [],
                },
                response_only=True,
            )
        ],
    )
    def get(self, request: Request, session_id: int, snapshot_id: int) -> Response:
        session = self.get_memory_session(session_id)
        diff = snapshot_diff(session=session, snapshot=self.get_snapshot(session, snapshot_id))
        return Response(
            {
                "remove": [{"seq": seq, "message": m} for seq, m in diff.remove],
                "restore": [{"seq": seq, "message": m} for seq, m in diff.restore],
                "tokens_removed": diff.tokens_removed,
                "tokens_restored": diff.tokens_restored,
                "summary_changes": diff.summary_changes,
                "facts_superseded": s.FactSerializer(diff.facts_superseded, many=True).data,
            }
        )


def _rollback_body(
    request: Request, session: MemorySession, result: RollbackResult
) -> dict[str, Any]:
    session.refresh_from_db()
    undo = None
    if result.safety is not None:
        undo = request.build_absolute_uri(
            reverse(
                "ttmemory-api:snapshot-rollback",
                kwargs={"session_id": session.pk, "snapshot_id": result.safety.pk},
            )
        )
    return {
        "safety_snapshot": s.SnapshotSerializer(result.safety).data if result.safety else None,
        "removed_seqs": list(result.removed_seqs),
        "restored_seqs": list(result.restored_seqs),
        "facts_superseded": [fact.pk for fact in result.superseded_facts],
        "session": s.SessionDetailSerializer(session).data,
        "undo": undo,
    }


class SnapshotRollbackView(MemoryAPIView):
    serializer_class = s.RollbackSerializer
    extra_permissions = (CanRollback,)

    @extend_schema(
        summary="Roll the session back to a snapshot (safe by default: undoable)",
        request=s.RollbackRequestSerializer,
        responses={200: s.RollbackSerializer, 409: None},
        examples=[
            OpenApiExample("Safe rollback", value={"safe": True}),
            OpenApiExample("Result", value=ROLLBACK_EXAMPLE, response_only=True),
        ],
    )
    def post(self, request: Request, session_id: int, snapshot_id: int) -> Response:
        session = self.get_memory_session(session_id)
        snapshot = self.get_snapshot(session, snapshot_id)
        data = self.valid_body(s.RollbackRequestSerializer)
        user = request.user if getattr(request.user, "pk", None) else None
        with transaction.atomic():  # the rollback and its audit entry commit together
            result = snapshot_rollback_detailed(
                session=session,
                snapshot=snapshot,
                safe=data["safe"],
                created_by=user,  # type: ignore[arg-type]
            )
            self.audit(
                "rollback",
                object_type="session",
                object_id=session.pk,
                details={
                    "snapshot": snapshot.pk,
                    "safety_snapshot": result.safety.pk if result.safety else None,
                    "removed": len(result.removed_seqs),
                    "restored": len(result.restored_seqs),
                    "via": "api",
                },
            )
        return Response(_rollback_body(request, session, result))


class UndoView(MemoryAPIView):
    serializer_class = s.RollbackSerializer
    extra_permissions = (CanRollback,)

    @extend_schema(
        summary="Undo the last rollback (roll back to the newest safety snapshot)",
        request=None,
        responses={200: s.RollbackSerializer, 409: None},
        examples=[OpenApiExample("Result", value=ROLLBACK_EXAMPLE, response_only=True)],
    )
    def post(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        safety = (
            Snapshot.objects.filter(session=session, kind=SnapshotKind.SAFETY)
            .order_by("-created_at", "-pk")
            .first()
        )
        if safety is None:
            return Response(
                {"detail": "This session has no rollback to undo."},
                status=status.HTTP_409_CONFLICT,
            )
        user = request.user if getattr(request.user, "pk", None) else None
        with transaction.atomic():  # the undo and its audit entry commit together
            result = snapshot_rollback_detailed(
                session=session,
                snapshot=safety,
                safe=True,
                created_by=user,  # type: ignore[arg-type]
            )
            self.audit(
                "undo",
                object_type="session",
                object_id=session.pk,
                details={
                    "snapshot": safety.pk,
                    "safety_snapshot": result.safety.pk if result.safety else None,
                    "via": "api",
                },
            )
        return Response(_rollback_body(request, session, result))
