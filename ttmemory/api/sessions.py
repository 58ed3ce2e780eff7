"""Sessions over HTTP: open, list, read, update state, delete; context, prompt, trim, clear
and undo are actions on one session (rewind, fork, edit and branches: ``api/history.py``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiParameter
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory import conversation
from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryPagination, MemoryViewSet, extend_schema, sessions_in
from ttmemory.api.examples import CHAT, ROLLBACK_EXAMPLE, SESSION_EXAMPLE
from ttmemory.api.filters import SessionKeyFilter
from ttmemory.api.history import TimeTravelMixin
from ttmemory.api.permissions import CanRollback
from ttmemory.api.snapshots import audited_rollback
from ttmemory.conf import app_settings
from ttmemory.models import SnapshotKind
from ttmemory.selectors import context_window, prompt_build, snapshot_list
from ttmemory.services import (
    session_clear,
    session_delete,
    session_open,
    session_state_update,
    session_trim,
)

SESSIONS_DESCRIPTION = (
    "The caller's sessions, most recently active first; POST opens (gets or creates) one."
)


class SessionViewSet(
    TimeTravelMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    MemoryViewSet,
):
    """The caller's sessions, most recently active first; POST opens (gets or creates) one."""

    schema_tag = "sessions"
    schema_verbs = {"create": "open", "rewind:get": "rewind_preview"}

    serializer_class = s.SessionDetailSerializer
    pagination_class = MemoryPagination
    filter_backends = [SessionKeyFilter]
    lookup_url_kwarg = "session_id"
    lookup_value_converter = "int"

    def get_queryset(self) -> Any:
        return sessions_in(self.namespace).order_by("-updated_at", "-pk")

    def get_serializer_class(self) -> Any:
        # The list route renders the short form; an @action may name its own serializer.
        return s.SessionSerializer if not self.detail else super().get_serializer_class()

    @extend_schema(
        description=SESSIONS_DESCRIPTION,
        summary="List sessions",
        responses=s.SessionSerializer(many=True),
        parameters=[OpenApiParameter("key", str, description="Only the session with this key.")],
        examples=[OpenApiExample("A page", value=SESSION_EXAMPLE, response_only=True)],
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        description=SESSIONS_DESCRIPTION,
        summary="Open a session (get or create by key)",
        request=s.SessionOpenSerializer,
        responses={200: s.SessionSerializer, 201: s.SessionSerializer},
        examples=[
            OpenApiExample(
                "Open", value={"key": "support-chat-42", "metadata": {"channel": "web"}}
            ),
            OpenApiExample("Opened", value=SESSION_EXAMPLE, response_only=True),
        ],
    )
    def create(self, request: Request) -> Response:
        data = self.valid_body(s.SessionOpenSerializer)
        session, created = session_open(
            namespace=self.namespace,
            key=data["key"],
            metadata=data.get("metadata"),
            with_created=True,
        )
        return Response(
            s.SessionSerializer(session).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        summary="Get a session",
        examples=[
            OpenApiExample(
                "Session",
                value={**SESSION_EXAMPLE, "summary": None, "summary_upto_seq": 0, "state": {}},
                response_only=True,
            )
        ],
    )
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(
        summary="Update session state variables",
        request=s.SessionUpdateSerializer,
        examples=[OpenApiExample("Set a variable", value={"state": {"order_id": "A-1043"}})],
    )
    def partial_update(self, request: Request, session_id: int) -> Response:
        session = self.get_object()
        data = self.valid_body(s.SessionUpdateSerializer)
        session_state_update(session=session, values=data["state"])
        return Response(s.SessionDetailSerializer(session).data)

    @extend_schema(
        summary="Delete a session with its messages and snapshots",
        responses={204: None},
    )
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, instance: Any) -> None:
        session_delete(session=instance)

    @extend_schema(
        summary="The context window for a token budget, ready to send to a model",
        description="The rolling summary and system messages first, then whole turns (a user "
        "message with its replies; a tool call with all its results), newest first, in "
        "chronological order, never over `max_tokens`. When the newest turn does not fit, its "
        "question and newest groups are kept, so the window never starts with an orphan "
        "answer. When what must be kept (system messages, summary, the newest group and its "
        "question) exceeds `max_tokens`, the answer is 400 naming `max_tokens` with the "
        "tokens required. Repaired for the model: orphan tool results are dropped and "
        "unanswered calls get an 'interrupted' result; the stored history is not changed.",
        parameters=[s.ContextQuerySerializer],
        responses=s.ContextSerializer,
        examples=[
            OpenApiExample("Window", value={"messages": CHAT, "tokens": 61}, response_only=True)
        ],
    )
    @action(detail=True, url_name="context", serializer_class=s.ContextSerializer)
    def context(self, request: Request, session_id: int) -> Response:
        session = self.get_object()
        query = self.valid_query(s.ContextQuerySerializer)
        messages = context_window(session=session, max_tokens=query["max_tokens"])
        tokens = conversation.count_messages_tokens(messages, encoding=app_settings.TOKENIZER)
        return Response(s.ContextSerializer({"messages": messages, "tokens": tokens}).data)

    @extend_schema(
        summary="Build the prompt for the next turn: profile, recalled facts, state, window",
        request=s.PromptRequestSerializer,
        responses=s.PromptSerializer,
        examples=[
            OpenApiExample("Build", value={"query": "Where do I live?", "max_tokens": 4000}),
            OpenApiExample(
                "Prompt",
                value={
                    "system": '<memories>\n- "Lives in Lisbon"\n</memories>',
                    "messages": [{"role": "system", "content": "…"}, CHAT[0]],
                    "tokens": {"profile": 0, "memories": 9, "state": 0, "window": 14},
                    "total": 23,
                    "recall_mode": "hybrid",
                    "empty": {"profile": "nothing stored", "episodes": "not asked"},
                },
                response_only=True,
            ),
        ],
    )
    @action(detail=True, methods=["post"], url_name="prompt", serializer_class=s.PromptSerializer)
    def prompt(self, request: Request, session_id: int) -> Response:
        session = self.get_object()
        data = self.valid_body(s.PromptRequestSerializer)
        built = prompt_build(
            session=session,
            query=data.get("query"),
            max_tokens=data["max_tokens"],
            memories=data["memories"],
        )
        return Response(s.PromptSerializer(built).data)

    @extend_schema(
        summary="Trim the session to a token budget (archive or delete what falls out)",
        request=s.TrimRequestSerializer,
        responses=s.TrimSerializer,
        examples=[OpenApiExample("Trim", value={"max_tokens": 2000})],
    )
    @action(detail=True, methods=["post"], url_name="trim", serializer_class=s.TrimSerializer)
    def trim(self, request: Request, session_id: int) -> Response:
        session = self.get_object()
        data = self.valid_body(s.TrimRequestSerializer)
        result = session_trim(session=session, max_tokens=data["max_tokens"])
        return Response(s.TrimSerializer(result).data)

    @extend_schema(
        summary="Delete every message of the session (seqs are not reused)",
        request=None,
        responses=s.ClearSerializer,
        examples=[OpenApiExample("Cleared", value={"deleted": 3}, response_only=True)],
    )
    @action(detail=True, methods=["post"], url_name="clear", serializer_class=s.ClearSerializer)
    def clear(self, request: Request, session_id: int) -> Response:
        deleted = session_clear(session=self.get_object())
        return Response(s.ClearSerializer({"deleted": deleted}).data)

    @extend_schema(
        summary="Undo the last rollback (roll back to the newest safety snapshot)",
        request=None,
        responses={200: s.RollbackSerializer, 409: None},
        examples=[OpenApiExample("Result", value=ROLLBACK_EXAMPLE, response_only=True)],
    )
    @action(
        detail=True,
        methods=["post"],
        url_name="undo",
        permission_classes=[CanRollback],
        serializer_class=s.RollbackSerializer,
    )
    def undo(self, request: Request, session_id: int) -> Response:
        session = self.get_object()
        # Newest first, payloads deferred; retention keeps at most MAX_SNAPSHOTS_PER_SESSION.
        safety = next(
            (snap for snap in snapshot_list(session=session) if snap.kind == SnapshotKind.SAFETY),
            None,
        )
        if safety is None:
            return Response(
                {"detail": "This session has no rollback to undo."},
                status=status.HTTP_409_CONFLICT,
            )
        return audited_rollback(self, session, safety, safe=True, action="undo")
