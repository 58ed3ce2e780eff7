"""The base view every endpoint shares: authentication, namespace, limits, errors."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.http import Http404
from drf_spectacular.openapi import AutoSchema
from rest_framework import generics
from rest_framework.authentication import BaseAuthentication
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import BaseParser
from rest_framework.permissions import BasePermission
from rest_framework.serializers import Serializer
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from ttmemory.api.authentication import ApiKeyAuthentication
from ttmemory.api.exceptions import api_exception_handler
from ttmemory.api.parsers import BoundedJSONParser
from ttmemory.api.permissions import HasNamespace
from ttmemory.api.serializers import MAX_ID
from ttmemory.api.throttling import WriteRateThrottle
from ttmemory.models import ApiKey, Fact, MemorySession, Snapshot
from ttmemory.services.audit import audit_record


class MemoryPagination(LimitOffsetPagination):
    """``?limit=&offset=``: 50 per page by default, at most 500."""

    default_limit = 50
    max_limit = 500


class MemoryAutoSchema(AutoSchema):
    """Operation ids from the view name: ``SnapshotRollbackView`` POST is snapshot_rollback_post."""

    def get_operation_id(self) -> str:
        name = type(self.view).__name__.removesuffix("View")
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
        return f"{snake}_{self.method.lower()}"


class MemoryAPIView(generics.GenericAPIView[Any]):
    """Authenticated by API key, session or token; every object lookup is within the caller's
    namespace, so another namespace's ids answer 404 exactly like ids that do not exist."""

    extra_permissions: tuple[type[BasePermission], ...] = ()
    schema = MemoryAutoSchema()  # documented whatever the project's DEFAULT_SCHEMA_CLASS

    def get_authenticators(self) -> list[BaseAuthentication]:
        # Read at request time, so a project's DEFAULT_AUTHENTICATION_CLASSES applies.
        defaults: list[Any] = list(api_settings.DEFAULT_AUTHENTICATION_CLASSES)
        return [ApiKeyAuthentication(), *(cls() for cls in defaults)]

    def get_permissions(self) -> list[BasePermission]:
        return [HasNamespace()] + [cls() for cls in self.extra_permissions]

    def get_parsers(self) -> list[BaseParser]:
        return [BoundedJSONParser()]

    def get_throttles(self) -> list[BaseThrottle]:
        return [WriteRateThrottle()]

    def get_exception_handler(self) -> Any:
        return api_exception_handler

    @property
    def namespace(self) -> str:
        namespace: str = self.request.namespace  # type: ignore[attr-defined]
        return namespace

    def valid_query(self, serializer_class: type[Serializer[Any]]) -> dict[str, Any]:
        serializer = serializer_class(data=self.request.query_params)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def valid_body(self, serializer_class: type[Serializer[Any]]) -> dict[str, Any]:
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def get_memory_session(self, session_id: int) -> MemorySession:
        _check_id(session_id)
        session = MemorySession.objects.filter(namespace=self.namespace, pk=session_id).first()
        if session is None:
            raise Http404
        return session

    def get_snapshot(self, session: MemorySession, snapshot_id: int) -> Snapshot:
        _check_id(snapshot_id)
        snapshot = Snapshot.objects.filter(
            namespace=self.namespace, session=session, pk=snapshot_id
        ).first()
        if snapshot is None:
            raise Http404
        return snapshot

    def get_fact(self, fact_id: int) -> Fact:
        _check_id(fact_id)
        fact = Fact.objects.filter(namespace=self.namespace, pk=fact_id).defer("embedding").first()
        if fact is None:
            raise Http404
        return fact

    def audit(self, action: str, **fields: Any) -> None:
        user = self.request.user
        actor = str(user) if isinstance(self.request.auth, ApiKey) else ""
        audit_record(
            action=action,
            namespace=self.namespace,
            user=user if isinstance(user, AbstractBaseUser) else None,
            actor=actor,
            **fields,
        )

    def fingerprint(self) -> str:
        body = json.dumps(self.request.data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(f"{self.request.path}\n{body}".encode()).hexdigest()


def _check_id(value: int) -> None:
    # A path id beyond the bigint range is simply not found (PostgreSQL would refuse it).
    if not 0 < value <= MAX_ID:
        raise Http404
