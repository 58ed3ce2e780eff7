"""Sessions, messages, context windows, prompts, trim, clear: session memory over HTTP."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.http import Http404
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from ttmemory import conversation
from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryAPIView, MemoryPagination
from ttmemory.conf import app_settings
from ttmemory.models import MemorySession, Message
from ttmemory.prompt import prompt_build
from ttmemory.selectors import context_window, message_page
from ttmemory.services import (
    message_add,
    message_add_many,
    session_clear,
    session_delete,
    session_open,
    session_state_update,
    session_trim,
)
from ttmemory.services.idempotency import idempotent_call
from ttmemory.validation import clean_identifier

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="Any unique string; a retried request with the same key and body is answered "
    "with the first response (header `Idempotent-Replayed: true`) and adds nothing.",
)
CHAT = [
    {"role": "user", "content": "What's the weather in Lisbon?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Lisbon"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "21°C, sunny"},
]
SESSION_EXAMPLE = {
    "id": 7,
    "key": "support-chat-42",
    "metadata": {"channel": "web"},
    "message_count": 3,
    "token_count": 61,
    "last_seq": 3,
    "created_at": "2026-11-30T09:00:00Z",
    "updated_at": "2026-11-30T09:01:12Z",
}


def _message_rows(messages: list[Message]) -> list[dict[str, Any]]:
    return _render_page(
        [
            {
                "seq": m.seq,
                "role": m.role,
                "tokens": m.token_count,
                "archived": m.archived_at is not None,
                "created_at": m.created_at,
                "message": m.data,
            }
            for m in messages
        ]
    )


def _render_page(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The shape of MessageSerializer, without a serializer per row: pages are the hot read.
    for item in items:
        item["created_at"] = _iso(item["created_at"])
    return items


def _session_counters(session: MemorySession) -> dict[str, Any]:
    # SessionSerializer's shape, built directly: it is part of every append's answer.
    return {
        "id": session.pk,
        "key": session.key,
        "metadata": session.metadata,
        "message_count": session.message_count,
        "token_count": session.token_count,
        "last_seq": session.last_seq,
        "created_at": _iso(session.created_at),
        "updated_at": _iso(session.updated_at),
    }


def _iso(value: dt.datetime) -> str:
    """As DRF's DateTimeField renders it: the current time zone, ISO 8601, "Z" for UTC."""
    text = timezone.localtime(value).isoformat() if timezone.is_aware(value) else value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class SessionListView(MemoryAPIView):
    """The caller's sessions, most recently active first; POST opens (gets or creates) one."""

    serializer_class = s.SessionSerializer
    pagination_class = MemoryPagination

    def get_queryset(self) -> Any:
        queryset = MemorySession.objects.for_namespace(self.namespace).order_by(
            "-updated_at", "-pk"
        )
        key = self.request.query_params.get("key")
        if key is not None:
            queryset = queryset.filter(key=clean_identifier(key, field="key"))
        return queryset

    @extend_schema(
        summary="List sessions",
        responses=s.SessionSerializer(many=True),
        parameters=[OpenApiParameter("key", str, description="Only the session with this key.")],
        examples=[OpenApiExample("A page", value=SESSION_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(s.SessionSerializer(page, many=True).data)

    @extend_schema(
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
    def post(self, request: Request) -> Response:
        data = self.valid_body(s.SessionOpenSerializer)
        existed = MemorySession.objects.filter(namespace=self.namespace, key=data["key"]).exists()
        session = session_open(
            namespace=self.namespace, key=data["key"], metadata=data.get("metadata")
        )
        return Response(
            s.SessionSerializer(session).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


class SessionDetailView(MemoryAPIView):
    serializer_class = s.SessionDetailSerializer

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
    def get(self, request: Request, session_id: int) -> Response:
        return Response(s.SessionDetailSerializer(self.get_memory_session(session_id)).data)

    @extend_schema(
        summary="Update session state variables",
        request=s.SessionUpdateSerializer,
        examples=[OpenApiExample("Set a variable", value={"state": {"order_id": "A-1043"}})],
    )
    def patch(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        data = self.valid_body(s.SessionUpdateSerializer)
        session_state_update(session=session, values=data["state"])
        return Response(s.SessionDetailSerializer(session).data)

    @extend_schema(
        summary="Delete a session with its messages and snapshots", responses={204: None}
    )
    def delete(self, request: Request, session_id: int) -> Response:
        session_delete(session=self.get_memory_session(session_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MessageListView(MemoryAPIView):
    serializer_class = s.MessageSerializer

    @extend_schema(
        summary="Read messages, newest page first (chronological within a page)",
        parameters=[s.MessagePageQuerySerializer],
        responses=s.MessagePageSerializer,
        examples=[
            OpenApiExample(
                "Page",
                value={
                    "results": [
                        {
                            "seq": 3,
                            "role": "tool",
                            "tokens": 12,
                            "archived": False,
                            "created_at": "2026-11-30T09:01:12Z",
                            "message": CHAT[2],
                        }
                    ],
                    "next": "https://example.com/api/memory/sessions/7/messages/?before=3&limit=1",
                },
                response_only=True,
            )
        ],
    )
    def get(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        query = self.valid_query(s.MessagePageQuerySerializer)
        rows = message_page(
            session=session,
            limit=query["limit"],
            before_seq=query.get("before"),
            include_archived=query["archived"],
        )
        next_url = None
        if len(rows) == query["limit"] and rows[0]["seq"] > 1:
            url = request.build_absolute_uri()
            next_url = replace_query_param(url, "before", rows[0]["seq"])
        return Response({"results": _render_page(rows), "next": next_url})

    @extend_schema(
        summary="Append one message or several (in one transaction)",
        request=s.MessageAppendSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: s.MessagesAddedSerializer, 422: None},
        examples=[
            OpenApiExample("One message", value={"message": CHAT[0]}),
            OpenApiExample("A tool call with its result", value={"messages": CHAT[1:]}),
        ],
    )
    def post(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        data = self.valid_body(s.MessageAppendSerializer)
        messages = data["messages"] if "messages" in data else [data["message"]]
        limit = app_settings.API_MAX_BATCH
        if len(messages) > limit:
            return Response(
                {"messages": [f"at most {limit} messages per request"]},
                status=status.HTTP_400_BAD_REQUEST,
            )

        def append() -> tuple[int, dict[str, Any]]:
            if "message" in data:  # errors then name "message.role", as the body does
                rows = [message_add(session=session, message=data["message"])]
            else:
                rows = message_add_many(session=session, messages=messages)
            return status.HTTP_201_CREATED, {
                "messages": _message_rows(rows),
                "session": _session_counters(session),
            }

        key = request.headers.get("Idempotency-Key")
        if key is None:
            code, body = append()
            return Response(body, status=code)
        code, body, replayed = idempotent_call(
            namespace=self.namespace,
            scope=f"messages:{session.pk}",
            key=key,
            fingerprint=self.fingerprint(),
            call=append,
        )
        headers = {"Idempotent-Replayed": "true"} if replayed else {}
        return Response(body, status=code, headers=headers)


class MessageDetailView(MemoryAPIView):
    serializer_class = s.MessageSerializer

    @extend_schema(
        summary="Get one message by seq",
        examples=[
            OpenApiExample(
                "Message",
                value={
                    "seq": 1,
                    "role": "user",
                    "tokens": 14,
                    "archived": False,
                    "created_at": "2026-11-30T09:00:00Z",
                    "message": CHAT[0],
                },
                response_only=True,
            )
        ],
    )
    def get(self, request: Request, session_id: int, seq: int) -> Response:
        session = self.get_memory_session(session_id)
        message = None
        if 0 < seq <= s.MAX_ID:
            message = Message.objects.filter(session=session, seq=seq).first()
        if message is None:
            raise Http404
        return Response(s.MessageSerializer(message).data)


class ContextView(MemoryAPIView):
    serializer_class = s.ContextSerializer

    @extend_schema(
        summary="The context window for a token budget, ready to send to a model",
        description="The rolling summary and system messages first, then whole tool groups "
        "(a call with all its results), newest first, in chronological order. Repaired for "
        "the model: orphan tool results are dropped and unanswered calls get an "
        "'interrupted' result; the stored history is not changed.",
        parameters=[s.ContextQuerySerializer],
        examples=[
            OpenApiExample("Window", value={"messages": CHAT, "tokens": 61}, response_only=True)
        ],
    )
    def get(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        query = self.valid_query(s.ContextQuerySerializer)
        messages = context_window(session=session, max_tokens=query["max_tokens"])
        tokens = conversation.count_messages_tokens(messages, encoding=app_settings.TOKENIZER)
        return Response({"messages": messages, "tokens": tokens})


class PromptView(MemoryAPIView):
    serializer_class = s.PromptSerializer

    @extend_schema(
        summary="Build the prompt for the next turn: profile, recalled facts, state, window",
        request=s.PromptRequestSerializer,
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
                },
                response_only=True,
            ),
        ],
    )
    def post(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        data = self.valid_body(s.PromptRequestSerializer)
        built = prompt_build(
            session=session,
            query=data.get("query"),
            max_tokens=data["max_tokens"],
            memories=data["memories"],
        )
        return Response(
            {
                "system": built.system,
                "messages": built.messages,
                "tokens": built.tokens,
                "total": built.total,
                "recall_mode": built.recall_mode,
            }
        )


class TrimView(MemoryAPIView):
    serializer_class = s.TrimSerializer

    @extend_schema(
        summary="Trim the session to a token budget (archive or delete what falls out)",
        request=s.TrimRequestSerializer,
        examples=[OpenApiExample("Trim", value={"max_tokens": 2000})],
    )
    def post(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        data = self.valid_body(s.TrimRequestSerializer)
        result = session_trim(session=session, max_tokens=data["max_tokens"])
        return Response(
            {
                "removed": result.removed,
                "removed_tokens": result.removed_tokens,
                "kept": result.kept,
                "kept_tokens": result.kept_tokens,
                "mode": result.mode,
                "removed_seqs": list(result.removed_seqs),
            }
        )


class ClearView(MemoryAPIView):
    serializer_class = s.ClearSerializer

    @extend_schema(
        summary="Delete every message of the session (seqs are not reused)",
        request=None,
        examples=[OpenApiExample("Cleared", value={"deleted": 3}, response_only=True)],
    )
    def post(self, request: Request, session_id: int) -> Response:
        session = self.get_memory_session(session_id)
        return Response({"deleted": session_clear(session=session)})
