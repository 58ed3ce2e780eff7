"""Query-string filters of the list endpoints, as DRF filter backends (the queryset given is
already the caller's namespace); they are documented by each list's ``extend_schema``."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.filters import BaseFilterBackend
from rest_framework.request import Request

from ttmemory.api import serializers as s
from ttmemory.validation import clean_identifier, clean_kind


class SessionKeyFilter(BaseFilterBackend):
    """``?key=``: only the session with this key (400 naming ``key`` when malformed)."""

    def filter_queryset(self, request: Request, queryset: QuerySet[Any], view: Any) -> Any:
        key = request.query_params.get("key")
        if key is None:
            return queryset
        return queryset.filter(key=clean_identifier(key, field="key"))


class FactFilter(BaseFilterBackend):
    """``?kind=a&kind=b`` and ``?include_superseded=true`` (current facts only by default)."""

    def filter_queryset(self, request: Request, queryset: QuerySet[Any], view: Any) -> Any:
        query = s.FactListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        if not query.validated_data["include_superseded"]:
            queryset = queryset.current()  # type: ignore[attr-defined]
        kinds = query.validated_data.get("kind")
        if kinds:
            queryset = queryset.filter(kind__in=[clean_kind(kind) for kind in kinds])
        return queryset
