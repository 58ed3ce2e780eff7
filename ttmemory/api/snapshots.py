"""A session's snapshots over HTTP: take, list, get, preview a rollback, roll back safely."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryViewSet, SessionChildViewSet, extend_schema
from ttmemory.api.examples import DIFF_EXAMPLE, ROLLBACK_EXAMPLE, SNAPSHOT_EXAMPLE
from ttmemory.api.permissions import CanRollback
from ttmemory.models import MemorySession, Snapshot
from ttmemory.results import RollbackResult
from ttmemory.selectors import session_get, snapshot_diff, snapshot_list
from ttmemory.services import snapshot_create, snapshot_rollback_detailed


class SnapshotViewSet(mixins.RetrieveModelMixin, SessionChildViewSet):
    """A session's snapshots, newest first; diff previews a rollback, rollback applies it."""

    schema_tag = "snapshots"

    serializer_class = s.SnapshotSerializer
    lookup_url_kwarg = "snapshot_id"
    lookup_value_converter = "int"

    def get_queryset(self) -> Any:
        return (
            Snapshot.objects.for_namespace(self.namespace)
            .filter(session_id=self.kwargs["session_id"])
            .select_related("session")
            .defer("payload")  # rendering and rollback never need it here
        )

    @extend_schema(
        summary="List snapshots, newest first",
        responses=s.SnapshotSerializer(many=True),
        examples=[OpenApiExample("Snapshots", value=[SNAPSHOT_EXAMPLE], response_only=True)],
    )
    def list(self, request: Request, session_id: int) -> Response:
        snapshots = snapshot_list(session=self.session)
        return Response(s.SnapshotSerializer(snapshots, many=True).data)

    @extend_schema(
        summary="Take a snapshot of the session",
        request=s.SnapshotCreateSerializer,
        responses={201: s.SnapshotSerializer},
        examples=[OpenApiExample("Take", value={"label": "before refund answer"})],
    )
    def create(self, request: Request, session_id: int) -> Response:
        session = self.session
        data = self.valid_body(s.SnapshotCreateSerializer)
        snapshot = snapshot_create(session=session, label=data["label"])
        return Response(s.SnapshotSerializer(snapshot).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Get a snapshot",
        examples=[OpenApiExample("Snapshot", value=SNAPSHOT_EXAMPLE, response_only=True)],
    )
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(
        summary="Preview a rollback: messages removed and restored, facts superseded",
        responses=s.SnapshotDiffSerializer,
        examples=[OpenApiExample("Preview", value=DIFF_EXAMPLE, response_only=True)],
    )
    @action(detail=True, url_name="snapshot-diff", serializer_class=s.SnapshotDiffSerializer)
    def diff(self, request: Request, session_id: int, snapshot_id: int) -> Response:
        snapshot = self.get_object()
        diff = snapshot_diff(session=snapshot.session, snapshot=snapshot)
        return Response(s.SnapshotDiffSerializer(diff).data)

    @extend_schema(
        summary="Roll the session back to a snapshot (safe by default: undoable)",
        request=s.RollbackRequestSerializer,
        responses={200: s.RollbackSerializer, 409: None},
        examples=[
            OpenApiExample("Safe rollback", value={"safe": True}),
            OpenApiExample("Result", value=ROLLBACK_EXAMPLE, response_only=True),
        ],
    )
    @action(
        detail=True,
        methods=["post"],
        url_name="snapshot-rollback",
        permission_classes=[CanRollback],
        serializer_class=s.RollbackSerializer,
    )
    def rollback(self, request: Request, session_id: int, snapshot_id: int) -> Response:
        snapshot = self.get_object()
        session = snapshot.session
        data = self.valid_body(s.RollbackRequestSerializer)
        return audited_rollback(
            self,
            session,
            snapshot,
            safe=data["safe"],
            action="rollback",
            counts=lambda result: {
                "removed": len(result.removed_seqs),
                "restored": len(result.restored_seqs),
            },
        )


def audited_rollback(
    view: MemoryViewSet,
    session: MemorySession,
    snapshot: Snapshot,
    *,
    safe: bool,
    action: str,
    counts: Callable[[RollbackResult], dict[str, int]] = lambda result: {},
) -> Response:
    """Roll ``session`` back to ``snapshot`` and record ``action`` in the audit log, committed
    together (a failed audit write leaves nothing changed); answer with ``rollback_answer``."""
    request = view.request
    user = request.user if getattr(request.user, "pk", None) else None
    with transaction.atomic():
        result = snapshot_rollback_detailed(
            session=session,
            snapshot=snapshot,
            safe=safe,
            created_by=user,  # type: ignore[arg-type]
        )
        view.audit(
            action,
            object_type="session",
            object_id=session.pk,
            details={
                "snapshot": snapshot.pk,
                "safety_snapshot": result.safety.pk if result.safety else None,
                **counts(result),
                "via": "api",
            },
        )
    return Response(rollback_answer(request, session, result))


def rollback_answer(
    request: Request, session: MemorySession, result: RollbackResult
) -> dict[str, Any]:
    """The body of a rollback or an undo: what changed, the session now, the undo URL."""
    session = session_get(namespace=session.namespace, key=session.key) or session  # re-read
    undo = None
    if result.safety is not None:
        undo = request.build_absolute_uri(
            reverse(
                "ttmemory-api:snapshot-rollback",
                kwargs={"session_id": session.pk, "snapshot_id": result.safety.pk},
            )
        )
    answer = {
        "safety_snapshot": result.safety,
        "removed_seqs": result.removed_seqs,
        "restored_seqs": result.restored_seqs,
        "facts_superseded": [fact.pk for fact in result.superseded_facts],
        "session": session,
        "undo": undo,
    }
    return dict(s.RollbackSerializer(answer).data)
