"""The caller's namespace's data lifecycle: lifetimes in force, its retention policy, legal
holds (docs/retention.md)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from drf_spectacular.utils import OpenApiExample
from rest_framework import status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from ttmemory.api import serializers as s
from ttmemory.api.base import MemoryViewSet, extend_schema
from ttmemory.api.permissions import CanLiftHold, CanManageRetention
from ttmemory.models import ApiKey, LegalHold, RetentionPolicy
from ttmemory.selectors.retention import POLICY_LIFETIMES, legal_holds, retention_effective
from ttmemory.services.holds import legal_hold_lift, legal_hold_place
from ttmemory.services.retention import (
    policy_values,
    retention_policy_delete,
    retention_policy_set,
)

RETENTION_EXAMPLE = {
    "namespace": "user-42",
    "effective": {
        "session_ttl": 7776000.0,
        "session_expiry": "delete",
        "archived_message_ttl": None,
        "snapshot_ttl": None,
        "ledger_ttl": None,
        "audit_ttl": None,
    },
    "policy": {"session_ttl": 7776000.0},
    "holds": [],
}


def _seconds(value: dt.timedelta | None) -> float | None:
    return value.total_seconds() if value is not None else None


class RetentionViewSet(MemoryViewSet):
    """How long the namespace's data lives, its own policy and its legal holds."""

    serializer_class = s.RetentionSerializer
    schema_tag = "retention"
    schema_verbs = {
        "retrieve": "get",
        "partial_update": "update",
        "destroy": "reset",
        "place": "hold",
        "lift": "lift_hold",
    }

    def get_permissions(self) -> list[BasePermission]:
        lift = "lift" in self.action_map.values()
        write = self.request.method not in ("GET", "HEAD", "OPTIONS")
        extra: list[BasePermission] = []
        if lift:
            extra = [CanLiftHold()]
        elif write:
            extra = [CanManageRetention()]
        return super().get_permissions() + extra

    def _actor(self) -> dict[str, Any]:
        user = self.request.user
        if isinstance(self.request.auth, ApiKey):
            return {"actor": str(user)}
        return {"user": user}

    def _answer(self, code: int = status.HTTP_200_OK) -> Response:
        policy = RetentionPolicy.objects.filter(namespace=self.namespace).first()
        retention = retention_effective(namespace=self.namespace, policy=policy)
        effective: dict[str, Any] = {
            name: _seconds(getattr(retention, name)) for name in POLICY_LIFETIMES
        }
        effective["session_expiry"] = retention.session_expiry
        effective["audit_ttl"] = _seconds(retention.audit_ttl)
        own = None
        if policy is not None:
            own = {
                name: value
                for name, value in policy_values(policy).items()
                if value not in (None, "")
            }
        data = {
            "namespace": self.namespace,
            "effective": effective,
            "policy": own,
            "holds": s.LegalHoldSerializer(legal_holds(namespace=self.namespace), many=True).data,
        }
        return Response(data, status=code)

    @extend_schema(
        summary="Lifetimes in force, the namespace's retention policy and its legal holds",
        examples=[OpenApiExample("Retention", value=RETENTION_EXAMPLE, response_only=True)],
    )
    def retrieve(self, request: Request) -> Response:
        return self._answer()

    @extend_schema(
        summary="Change the namespace's retention policy (seconds; null inherits, 0 forever)",
        request=s.RetentionPolicySerializer,
        responses={200: s.RetentionSerializer},
        examples=[OpenApiExample("90 days", value={"session_ttl": 7776000})],
    )
    def partial_update(self, request: Request) -> Response:
        data = self.valid_body(s.RetentionPolicySerializer)
        retention_policy_set(namespace=self.namespace, **data, **self._actor())
        return self._answer()

    @extend_schema(
        summary="Remove the namespace's retention policy (the settings apply again)",
        request=None,
        responses={200: s.RetentionSerializer},
        examples=[OpenApiExample("Retention", value=RETENTION_EXAMPLE, response_only=True)],
    )
    def destroy(self, request: Request) -> Response:
        retention_policy_delete(namespace=self.namespace, **self._actor())
        return self._answer()

    @extend_schema(
        summary="Place a legal hold on the namespace or one of its sessions",
        description="While held, nothing in its scope is deleted: no expiry or pruning, and "
        "erase, session delete, clear and fact forget answer 423 naming the hold.",
        request=s.LegalHoldSerializer,
        responses={201: s.RetentionSerializer},
        examples=[OpenApiExample("Hold", value={"reason": "case 2026-17"})],
    )
    def place(self, request: Request) -> Response:
        data = self.valid_body(s.LegalHoldSerializer)
        session_id = data.get("session_id")
        session = (
            None if session_id is None else self.session_from_body(session_id, field="session")
        )
        legal_hold_place(
            namespace=self.namespace, session=session, reason=data["reason"], **self._actor()
        )
        return self._answer(status.HTTP_201_CREATED)

    @extend_schema(
        summary="Lift a legal hold (users with ttmemory.delete_legalhold; never an API key)",
        request=None,
        responses={200: s.RetentionSerializer},
        examples=[OpenApiExample("Retention", value=RETENTION_EXAMPLE, response_only=True)],
    )
    def lift(self, request: Request, hold_id: int) -> Response:
        if not 0 < hold_id <= s.MAX_ID:
            raise LegalHold.DoesNotExist
        hold = LegalHold.objects.filter(namespace=self.namespace, pk=hold_id).first()
        if hold is None:
            raise LegalHold.DoesNotExist
        legal_hold_lift(namespace=self.namespace, session=hold.session, **self._actor())
        return self._answer()
