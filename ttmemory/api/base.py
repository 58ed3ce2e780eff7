"""The base viewset every endpoint shares: authentication, namespace, limits, errors."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.apps import apps
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone
from django.utils.functional import cached_property
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import extend_schema as spectacular_extend_schema
from rest_framework import viewsets
from rest_framework.authentication import (
    BaseAuthentication,
    SessionAuthentication,
    TokenAuthentication,
)
from rest_framework.generics import get_object_or_404
from rest_framework.negotiation import BaseContentNegotiation, DefaultContentNegotiation
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import BaseParser
from rest_framework.permissions import BasePermission
from rest_framework.renderers import BaseRenderer
from rest_framework.serializers import Serializer
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from ttmemory.api.authentication import ApiKeyAuthentication, FreshTokenAuthentication
from ttmemory.api.exceptions import PROBLEM_CONTENT_TYPE, api_exception_handler, as_problem
from ttmemory.api.parsers import BoundedJSONParser
from ttmemory.api.permissions import HasNamespace
from ttmemory.api.renderers import FastContentNegotiation, fast_renderers
from ttmemory.api.serializers import MAX_ID
from ttmemory.api.throttling import WriteRateThrottle
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import ApiKey, MemorySession
from ttmemory.services.audit import audit_record


def extend_schema(**kwargs: Any) -> Callable[[Any], Any]:
    """drf-spectacular's ``extend_schema`` based on ``MemoryAutoSchema``, not on the project's
    ``DEFAULT_SCHEMA_CLASS`` (DRF's own by default, which cannot document a view)."""
    extend = spectacular_extend_schema(**kwargs)

    def decorator(method: Any) -> Any:
        if "schema" not in getattr(method, "kwargs", {}):
            method.kwargs = {**getattr(method, "kwargs", {}), "schema": MemoryAutoSchema}
        return extend(method)

    return decorator


class MemoryPagination(LimitOffsetPagination):
    """``?limit=&offset=``: 50 per page by default, at most 500."""

    default_limit = 50
    max_limit = 500


PROBLEM = "Problem"
PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An error answer (RFC 9457 problem details, `application/problem+json`), "
    "the same shape for every error of every operation.",
    "properties": {
        "type": {
            "type": "string",
            "description": "A URI reference naming the problem type; `about:blank`: the "
            "status says what happened.",
            "example": "about:blank",
        },
        "title": {
            "type": "string",
            "description": "The HTTP status phrase.",
            "example": "Bad Request",
        },
        "status": {"type": "integer", "description": "The HTTP status code.", "example": 400},
        "detail": {
            "type": "string",
            "description": "What went wrong, for a person.",
            "example": "messages[1].role: must be one of assistant, developer, system, tool, user",
        },
        "errors": {
            "type": "object",
            "description": "Invalid input only (400, 422): each key names a field, query "
            "parameter or header (nested for nested fields, e.g. 'messages[3].role'); each "
            "value lists what is wrong with it.",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "example": {
                "messages[1].role": ["must be one of assistant, developer, system, tool, user"]
            },
        },
    },
    "required": ["type", "title", "status", "detail"],
}
ERROR_ANSWERS = {
    "400": "A field, query parameter or header is invalid (`errors` names each).",
    "401": "Not authenticated.",
    "403": "Not allowed (a permission, or a namespace the API key is not granted).",
    "503": "The database is unavailable; retry after Retry-After seconds.",
}
NOT_FOUND_ANSWER = "Not found in the caller's namespace."
WRITE_ERROR_ANSWERS = {
    "413": "Request body larger than API_MAX_REQUEST_BYTES.",
    "429": "Too many writes; see Retry-After.",
    "503": "The session's lock was busy (nothing was written) or the database is unavailable; "
    "retry after Retry-After seconds.",
}
# Operation ids are "<tag>_<verb>"; DRF's action names, except where a viewset says otherwise.
VERBS = {
    "list": "list",
    "create": "create",
    "retrieve": "get",
    "update": "replace",
    "partial_update": "update",
    "destroy": "delete",
}


OPERATION_DESCRIPTION = (
    "Authenticated by API key, session or token; every object lookup is within the caller's\n"
    "namespace, so another namespace's ids answer 404 exactly like ids that do not exist."
)


class MemoryAutoSchema(AutoSchema):
    """Documents the error answers every view can give (one shared ``Problem`` component),
    and names every operation ``<tag>_<verb>`` (``sessions_open``, ``messages_append``): the
    tag is the viewset's ``schema_tag`` (else the path's first segment), the verb its
    ``schema_verbs`` entry for the action (or ``"<action>:<method>"``), else ``VERBS``, else
    the action's name. An ``operation_id`` or ``tags`` given to ``extend_schema`` is
    overridden, so every operation follows the one pattern generated clients are named by."""

    def get_description(self) -> str:  # type: ignore[override]  # drf-spectacular's signature
        # Viewset docstrings are written for readers of the code; an operation without its own
        # description says what holds for all of them.
        return OPERATION_DESCRIPTION

    def get_operation(self, *args: Any, **kwargs: Any) -> Any:
        operation = super().get_operation(*args, **kwargs)
        if operation:
            tag = getattr(self.view, "schema_tag", "") or super().get_tags()[0]
            action = getattr(self.view, "action", None) or self.method.lower()
            verbs = {**VERBS, **getattr(self.view, "schema_verbs", {})}
            # An action answering two methods (rewind: GET previews, POST applies) names each
            # with an ``"<action>:<method>"`` entry.
            verb = verbs.get(f"{action}:{self.method.lower()}", verbs.get(action, action))
            operation["operationId"] = f"{tag}_{verb}"
            operation["tags"] = [tag]
        return operation

    def problem_ref(self) -> dict[str, str]:
        component = ResolvedComponent(
            name=PROBLEM,
            type=ResolvedComponent.SCHEMA,
            object=PROBLEM,
            schema=PROBLEM_SCHEMA,
        )
        self.registry.register_on_missing(component)
        return dict(component.ref)

    def _get_response_bodies(self, direction: Any = "response") -> Any:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        answers = dict(ERROR_ANSWERS)
        if "{" in self.path:
            answers["404"] = NOT_FOUND_ANSWER
        if self.method not in ("GET", "HEAD", "OPTIONS"):
            answers.update(WRITE_ERROR_ANSWERS)
        for code, description in answers.items():
            responses.setdefault(code, {"description": description})
        problem = {PROBLEM_CONTENT_TYPE: {"schema": self.problem_ref()}}
        for code, response in responses.items():
            if str(code)[0] in "45":
                response["content"] = problem
        return responses


class MemoryViewSet(viewsets.GenericViewSet[Any]):
    """Authenticated by API key, session or token; ``get_queryset()`` of every viewset is
    filtered by the caller's namespace, so ``get_object()`` answers 404 for another
    namespace's ids exactly as for ids that do not exist.

    ``permission_classes`` adds guards to the namespace check (per viewset or per
    ``@action``); parsers, throttles and authenticators are read at request time.
    """

    permission_classes: Any = ()
    schema = MemoryAutoSchema()  # documented whatever the project's DEFAULT_SCHEMA_CLASS
    schema_tag = ""  # the OpenAPI tag and operation id prefix (MemoryAutoSchema)
    schema_verbs: dict[str, str] = {}  # action -> the verb of its operation id

    def get_authenticators(self) -> list[BaseAuthentication]:
        # API keys, Django sessions and (with rest_framework.authtoken installed) DRF tokens
        # work whatever the project's REST_FRAMEWORK says; its DEFAULT_AUTHENTICATION_CLASSES,
        # read at request time, add to them and never take them away.
        # DRF's TokenAuthentication is replaced by FreshTokenAuthentication (same answers).
        classes: list[Any] = [ApiKeyAuthentication, SessionAuthentication]
        if apps.is_installed("rest_framework.authtoken"):
            classes.append(FreshTokenAuthentication)
        for cls in api_settings.DEFAULT_AUTHENTICATION_CLASSES:
            if cls not in classes and not (
                cls is TokenAuthentication and FreshTokenAuthentication in classes
            ):
                classes.append(cls)
        return [cls() for cls in classes]

    def get_permissions(self) -> list[BasePermission]:
        return [HasNamespace()] + [cls() for cls in self.permission_classes]

    def get_parsers(self) -> list[BaseParser]:
        return [BoundedJSONParser()]

    def get_renderers(self) -> list[BaseRenderer]:
        # The project's renderers, DRF's JSONRenderer rendering with orjson where the bytes
        # are the same (views with ``json_finite``).
        return fast_renderers(super().get_renderers())

    def get_content_negotiator(self) -> BaseContentNegotiation:
        if self.content_negotiation_class is DefaultContentNegotiation:
            negotiator = getattr(self, "_negotiator", None)
            if negotiator is None:
                negotiator = self._negotiator = FastContentNegotiation()
            return negotiator
        return super().get_content_negotiator()

    def get_throttles(self) -> list[BaseThrottle]:
        return [WriteRateThrottle()]

    def get_exception_handler(self) -> Any:
        return api_exception_handler

    def finalize_response(self, request: Any, response: Any, *args: Any, **kwargs: Any) -> Any:
        # Every error answer, raised or returned by a view, is problem details.
        return as_problem(super().finalize_response(request, response, *args, **kwargs))

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        # Timestamps in UTC whatever the project's TIME_ZONE: always valid RFC 3339 (historic
        # local offsets can have seconds) and the same for every client.
        with timezone.override(dt.UTC):
            return super().dispatch(request, *args, **kwargs)

    @property
    def namespace(self) -> str:
        namespace: str = self.request.namespace  # type: ignore[attr-defined]
        return namespace

    def filter_queryset(self, queryset: Any) -> Any:
        # Filter backends read a list's query string; get_object() must not apply them (a
        # superseded fact is still found by id).
        return super().filter_queryset(queryset) if self.action == "list" else queryset

    def get_object(self) -> Any:
        for value in self.kwargs.values():  # the object's id and its parent session's
            check_id(value)
        return super().get_object()

    def valid_query(self, serializer_class: type[Serializer[Any]]) -> dict[str, Any]:
        return valid_data(serializer_class, self.request.query_params)

    def valid_body(self, serializer_class: type[Serializer[Any]]) -> dict[str, Any]:
        return valid_data(serializer_class, self.request.data)

    def session_from_body(self, session_id: int, *, field: str) -> MemorySession:
        """A session named in a request body: 400 naming ``field`` when it is not the
        caller's (the same answer for another namespace's id and for no id at all)."""
        try:
            return session_of(self.namespace, session_id)
        except Http404:
            raise MemoryValidationError(field, "no such session") from None

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


class SessionChildViewSet(MemoryViewSet):
    """A resource nested under ``sessions/<int:session_id>/`` (messages, snapshots): its
    queryset is the caller's namespace and that session; ``session`` is the parent."""

    @cached_property
    def session(self) -> MemorySession:
        return session_of(self.namespace, self.kwargs["session_id"])


def valid_data(serializer_class: type[Serializer[Any]], data: Any) -> dict[str, Any]:
    """``data`` validated by ``serializer_class``, or its 400. A hot route's serializer may
    have a ``quick(data)`` answering the common inputs exactly as it would (None: ask it)."""
    quick = getattr(serializer_class, "quick", None)
    if quick is not None and (validated := quick(data)) is not None:
        return dict(validated)
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def sessions_in(namespace: str) -> QuerySet[MemorySession]:
    """The queryset of every session lookup: ``SessionViewSet``, nested parents, bodies."""
    return MemorySession.objects.for_namespace(namespace)


def session_of(namespace: str, session_id: int) -> MemorySession:
    check_id(session_id)
    return get_object_or_404(sessions_in(namespace), pk=session_id)


def check_id(value: Any) -> None:
    # A path id beyond the bigint range is simply not found (PostgreSQL would refuse it).
    if isinstance(value, int) and not 0 < value <= MAX_ID:
        raise Http404
