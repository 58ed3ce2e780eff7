"""A session's messages over HTTP: read pages, append (idempotently), read one by seq."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.http import Http404
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, OpenApiParameter
from rest_framework import mixins, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from ttmemory.api import serializers as s
from ttmemory.api.base import SessionChildViewSet, check_id, extend_schema
from ttmemory.api.examples import CHAT, MESSAGE_EXAMPLE
from ttmemory.conf import app_settings
from ttmemory.models import MemorySession, Message
from ttmemory.selectors.retention import Retention, session_expires_at, session_with_retention
from ttmemory.selectors.sessions import message_page_in
from ttmemory.services import message_add, message_add_many
from ttmemory.services.idempotency import idempotent_call

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="Any unique string; a retried request with the same key and body is answered "
    "with the first response (header `Idempotent-Replayed: true`) and adds nothing.",
)


class MessageViewSet(mixins.RetrieveModelMixin, SessionChildViewSet):
    """A session's messages: pages newest first, appends, one message by its seq."""

    schema_tag = "messages"
    schema_verbs = {"create": "append"}

    serializer_class = s.MessageSerializer
    # Answers hold stored messages (validated JSON: never NaN) and ttmemory's own values:
    # rendered by orjson where its bytes are DRF's (api/renderers.py).
    json_finite = True
    lookup_field = "seq"
    lookup_value_converter = "int"

    def get_queryset(self) -> Any:
        return Message.objects.for_namespace(self.namespace).filter(
            session_id=self.kwargs["session_id"]
        )

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
                            **MESSAGE_EXAMPLE,
                            "seq": 3,
                            "role": "tool",
                            "tokens": 12,
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
    def list(self, request: Request, session_id: int) -> Response:
        query = self.valid_query(s.MessagePageQuerySerializer)
        check_id(session_id)
        # One round trip: the page, joined to the caller's namespace (no session read first).
        rows = message_page_in(
            namespace=self.namespace,
            session_id=session_id,
            limit=query["limit"],
            before_seq=query.get("before"),
            include_archived=query["archived"],
        )
        if rows is None:
            raise Http404
        next_url = None
        if len(rows) == query["limit"] and rows[0]["seq"] > 1:
            next_url = next_page_url(request, rows[0]["seq"])
        return Response({"results": render_page(rows), "next": next_url})

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
    def create(self, request: Request, session_id: int) -> Response:
        check_id(session_id)
        # The session and its namespace's lifetimes (for expires_at) in one round trip.
        found = session_with_retention(namespace=self.namespace, session_id=session_id)
        if found is None:
            raise Http404
        session, retention = found
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
            return status.HTTP_201_CREATED, render_added(rows, session, retention)

        key = request.META.get("HTTP_IDEMPOTENCY_KEY")  # request.headers', without building it
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

    @extend_schema(
        summary="Get one message by seq",
        examples=[OpenApiExample("Message", value=MESSAGE_EXAMPLE, response_only=True)],
    )
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)


def next_page_url(request: Request, before: int) -> str:
    """The request's absolute URL with ``before`` set: ``replace_query_param``'s answer, which
    sorts the query; built directly for the usual query (``limit=N`` alone), where that is
    ``before=<seq>&limit=N`` (parsing and re-encoding the URL was 5% of a page's CPU)."""
    url = request.build_absolute_uri()
    query = request.META.get("QUERY_STRING", "")
    digits = query[6:]
    if (
        query.startswith("limit=")
        and digits.isascii()
        and digits.isdigit()
        and url.endswith(f"?{query}")
        and "#" not in url
    ):
        return f"{url[: -len(query)]}before={before}&{query}"
    return replace_query_param(url, "before", before)


def render_page(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``MessageSerializer``'s shape for the rows ``message_page`` selects (values, not models).

    The page is the hot read: ``MessageSerializer(many=True)`` over model rows cost a GET of
    50 messages about 45% more than rendering the values here (``bench/api_profile.py``).
    """
    if timezone.get_current_timezone() is dt.UTC:  # the API's own case (dispatch)
        for row in rows:
            value = row["created_at"]
            row["created_at"] = (
                value.replace(tzinfo=None).isoformat() + "Z"
                if value.tzinfo is dt.UTC
                else _iso(value)
            )
        return rows
    for row in rows:
        row["created_at"] = _iso(row["created_at"])
    return rows


def render_added(
    rows: list[Message], session: MemorySession, retention: Retention
) -> dict[str, Any]:
    """``MessagesAddedSerializer``'s shape (tests/api/test_endpoints.py compares the two).

    The append's answer, rendered from the objects without DRF's field machinery: in process
    (bench/api_profile.py), the serializer took about a fifth of an append request.
    """
    expires = session_expires_at(session=session, retention=retention)
    return {
        "messages": [
            {
                "seq": row.seq,
                "role": row.role,
                "tokens": row.token_count,
                "archived": row.archived_at is not None,
                "created_at": _iso(row.created_at),
                "message": row.data,
            }
            for row in rows
        ],
        "session": {
            "id": session.pk,
            "key": session.key,
            "metadata": session.metadata,
            "message_count": session.message_count,
            "token_count": session.token_count,
            "last_seq": session.last_seq,
            "parent": session.parent_id,
            "forked_at_seq": session.forked_at_seq,
            "created_at": _iso(session.created_at),
            "updated_at": _iso(session.updated_at),
            "expires_at": _iso(expires) if expires is not None else None,
        },
    }


def _iso(value: dt.datetime) -> str:
    """As DRF's DateTimeField renders it: the current time zone, ISO 8601, "Z" for UTC."""
    if value.tzinfo is dt.UTC and timezone.get_current_timezone() is dt.UTC:
        # The API's own case (dispatch overrides to UTC; the database returns UTC): localtime()
        # was most of a 50-message page's rendering (bench/api_profile.py --profile).
        return value.replace(tzinfo=None).isoformat() + "Z"
    text = timezone.localtime(value).isoformat() if timezone.is_aware(value) else value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
