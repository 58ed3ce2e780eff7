"""The caller's namespace as a whole: who am I, export, erase, LLM cost ledger."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiExample
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryViewSet, extend_schema
from ttmemory.api.permissions import CanErase
from ttmemory.selectors import ledger_totals, namespace_export
from ttmemory.services import namespace_erase


class NamespaceViewSet(MemoryViewSet):
    """The namespace this caller acts on: who am I, export everything, erase everything."""

    schema_tag = "namespace"

    # One resource without an id: its routes are bound in urls.py, not by the router.

    serializer_class = s.NamespaceSerializer

    def get_permissions(self) -> list[BasePermission]:
        # By route, not by method: OPTIONS on namespace/erase/ is guarded as POST is.
        erase = "erase" in self.action_map.values()
        return super().get_permissions() + ([CanErase()] if erase else [])

    def get_serializer_class(self) -> Any:
        return s.ReceiptSerializer if "erase" in self.action_map.values() else s.NamespaceSerializer

    @extend_schema(
        summary="The namespace this caller acts on",
        examples=[OpenApiExample("Namespace", value={"namespace": "user-42"}, response_only=True)],
    )
    def retrieve(self, request: Request) -> Response:
        return Response(s.NamespaceSerializer({"namespace": self.namespace}).data)

    @extend_schema(
        summary="Export everything the namespace owns, decrypted (sessions, facts, profiles)",
        responses={200: dict[str, Any]},
        examples=[
            OpenApiExample(
                "Export",
                value={"namespace": "user-42", "sessions": [], "facts": [], "profiles": {}},
                response_only=True,
            )
        ],
    )
    def export(self, request: Request) -> Response:
        data = namespace_export(namespace=self.namespace)
        self.audit(
            "export",
            details={"sessions": len(data["sessions"]), "facts": len(data["facts"]), "via": "api"},
        )
        return Response(
            data,
            headers={"Content-Disposition": 'attachment; filename="ttmemory-export.json"'},
        )

    @extend_schema(
        summary="Erase everything the namespace owns (type the namespace to confirm)",
        request=s.EraseRequestSerializer,
        responses=s.ReceiptSerializer,
        examples=[
            OpenApiExample("Erase", value={"confirm": "user-42"}),
            OpenApiExample(
                "Receipt",
                value={
                    "namespace": "user-42",
                    "counts": {"message": 120, "fact": 9, "memory_session": 2},
                    "redis_keys": 0,
                    "erased_at": "2026-11-30T09:05:00+00:00",
                    "total": 131,
                },
                response_only=True,
            ),
        ],
    )
    def erase(self, request: Request) -> Response:
        data = self.valid_body(s.EraseRequestSerializer)
        if data["confirm"] != self.namespace:
            return Response({"confirm": ["must be exactly the namespace being erased"]}, status=400)
        with transaction.atomic():  # the erase and its audit entry commit together
            receipt = namespace_erase(namespace=self.namespace)
            self.audit("erase", details={"counts": receipt.counts, "via": "api"})
        return Response(s.ReceiptSerializer(receipt).data)


class LedgerViewSet(MemoryViewSet):
    """LLM and embedding token totals of the namespace per day, purpose and model."""

    schema_tag = "ledger"

    serializer_class = s.LedgerRowSerializer

    @extend_schema(
        summary="LLM and embedding token totals per day, purpose and model",
        parameters=[s.LedgerQuerySerializer],
        responses=s.LedgerRowSerializer(many=True),
        examples=[
            OpenApiExample(
                "Totals",
                value=[
                    {
                        "day": "2026-11-30",
                        "purpose": "extract",
                        "model": "gpt-4.1-mini",
                        "calls": 4,
                        "prompt_tokens": 3120,
                        "completion_tokens": 210,
                        "total_tokens": 3330,
                        "errors": 0,
                        "skipped": 0,
                    }
                ],
                response_only=True,
            )
        ],
    )
    def list(self, request: Request) -> Response:
        query = self.valid_query(s.LedgerQuerySerializer)
        rows = ledger_totals(namespace=self.namespace, days=query["days"])
        return Response(s.LedgerRowSerializer(rows, many=True).data)
