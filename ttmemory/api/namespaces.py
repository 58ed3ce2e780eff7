"""Who the caller is, as a namespace: the resolver for users, grants for API keys (both in
``services.access``, shared with the MCP server)."""

from __future__ import annotations

from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request

from ttmemory.exceptions import MemoryValidationError, NamespaceAccessError
from ttmemory.models import ApiKey
from ttmemory.services.access import (
    NAMESPACE_HEADER,
    api_key_namespace,
    namespace_resolver,
    user_namespace,
)

__all__ = ["NAMESPACE_HEADER", "resolve_namespace", "user_namespace"]


def resolve_namespace(request: Request) -> str:
    """The namespace every object of this request belongs to.

    API keys name it in the ``X-Memory-Namespace`` header (optional when the key is granted
    exactly one namespace) and must be granted it (``services.access.api_key_namespace``);
    users get the resolver's answer. Raises PermissionDenied when there is none,
    ValidationError for a malformed header.
    """
    if isinstance(request.auth, ApiKey):
        try:
            return api_key_namespace(key=request.auth, asked=request.headers.get(NAMESPACE_HEADER))
        except MemoryValidationError as exc:
            raise ValidationError({exc.field: [exc.message]}) from exc
        except NamespaceAccessError as exc:
            raise PermissionDenied(str(exc)) from exc
    resolved = namespace_resolver()(request)
    if not resolved:
        raise PermissionDenied("No memory namespace belongs to this user.")
    return resolved
