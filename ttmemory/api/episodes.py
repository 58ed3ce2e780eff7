"""Episodic recall over HTTP: search the caller's past messages (``messages/search/``)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryViewSet, extend_schema
from ttmemory.selectors import message_search


class MessageSearchViewSet(MemoryViewSet):
    """Past messages of every session of the caller's namespace, live and archived."""

    # One resource without an id: its route is bound in urls.py, not by the router.

    serializer_class = s.MessageSearchSerializer

    @extend_schema(
        operation_id="messages_search_post",
        summary="Search past messages by meaning and keyword, with neighbouring turns",
        description=(
            "Episodic recall over every message of the namespace (archived ones too): hybrid "
            "keyword and vector scoring like fact recall, where each message also matches on "
            "its neighbours' words. Each hit carries up to ``window`` messages of its session "
            "on each side as ``context``."
        ),
        request=s.MessageSearchRequestSerializer,
        responses=s.MessageSearchSerializer,
        examples=[
            OpenApiExample("Search", value={"query": "what did I say about the contract?"}),
            OpenApiExample(
                "Hits",
                value={
                    "hits": [
                        {
                            "session": 7,
                            "session_key": "chat-2026-10",
                            "seq": 12,
                            "score": 0.91,
                            "archived": True,
                            "created_at": "2026-10-03T09:05:00Z",
                            "message": {"role": "user", "content": "Renew it before March."},
                            "context": [
                                {
                                    "seq": 11,
                                    "message": {"role": "assistant", "content": "The lease?"},
                                }
                            ],
                        }
                    ]
                },
                response_only=True,
            ),
        ],
    )
    def search(self, request: Request) -> Response:
        data = self.valid_body(s.MessageSearchRequestSerializer)
        hits = message_search(
            namespace=self.namespace,
            query=data["query"],
            k=data["k"],
            window=data["window"],
            sessions=data.get("sessions"),
        )
        return Response(s.MessageSearchSerializer({"hits": hits}).data)
