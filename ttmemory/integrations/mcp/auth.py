"""Who an MCP caller is, as a namespace: the REST API's rules (``services.access``), never a
tool argument or the URL.

Over HTTP each tool call authenticates with its own headers: ``Authorization: Api-Key ttm_…``
(or ``X-Api-Key``) with ``X-Memory-Namespace`` when the key has several grants, or a DRF token
(``Authorization: Token …``, with ``rest_framework.authtoken`` installed) whose user goes
through ``API_NAMESPACE_RESOLVER``. Over stdio (and in-process) the server is given
``Credentials`` once; they are checked again on every call. Each check reads the key, the
token or the user from the database (``services.access``), so a revocation by any process
stops the very next call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.http import HttpRequest

from ttmemory.exceptions import NamespaceAccessError, TTMemoryError
from ttmemory.services.access import (
    NAMESPACE_HEADER,
    api_key_check,
    api_key_namespace,
    namespace_resolver,
    token_check,
)

# Where ``mount`` keeps the namespace it authenticated for an HTTP request (ASGI scope state).
SCOPE_KEY = "ttmemory.namespace"


class AuthenticationError(TTMemoryError):
    """No valid credentials came with the call (HTTP 401 before the MCP server answers)."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """Fixed credentials of a stdio or in-process server: an API key (``namespace`` names one
    of its grants when it has several) or a Django username (the resolver names its namespace).
    """

    api_key: str = ""
    namespace: str | None = None
    username: str = ""

    def headers(self) -> dict[str, str]:
        """The HTTP headers these credentials stand for (``resolve_namespace`` reads them)."""
        headers: dict[str, str] = {}
        if self.api_key:
            headers["authorization"] = f"Api-Key {self.api_key}"
        if self.namespace is not None:
            headers[NAMESPACE_HEADER.lower()] = self.namespace
        return headers


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


def _user_request(user: Any, headers: Mapping[str, str]) -> HttpRequest:
    """A Django request for ``API_NAMESPACE_RESOLVER``: the user and the call's headers."""
    request = HttpRequest()
    request.user = user
    for key, value in headers.items():
        request.META["HTTP_" + key.upper().replace("-", "_")] = value
    return request


def _user_namespace(user: Any, headers: Mapping[str, str]) -> str:
    if user is None or not user.is_active:
        raise AuthenticationError("Unknown or inactive user.")
    namespace = namespace_resolver()(_user_request(user, headers))
    if not namespace:
        raise NamespaceAccessError("No memory namespace belongs to this user.")
    return str(namespace)


def resolve_namespace(
    headers: Mapping[str, str] | None, credentials: Credentials | None = None
) -> str:
    """The namespace of one call: from ``credentials`` when the server has them, else from the
    call's HTTP ``headers``. Raises ``AuthenticationError`` (no or bad credentials),
    ``NamespaceAccessError`` (not granted) or ``MemoryValidationError`` (a malformed namespace
    header). Runs ORM queries: call it from a thread (``sync_to_async``)."""
    if credentials is not None and credentials.username:
        user = get_user_model()._default_manager.filter(username=credentials.username).first()
        return _user_namespace(user, {})
    headers = credentials.headers() if credentials is not None else dict(headers or {})
    authorization = (_header(headers, "authorization") or "").split()
    scheme = authorization[0].lower() if authorization else ""
    raw = authorization[1] if scheme == "api-key" and len(authorization) == 2 else None
    raw = raw or _header(headers, "x-api-key")
    if raw:
        key = api_key_check(raw_key=raw.strip())
        if key is None:
            raise AuthenticationError("Invalid or revoked API key.")
        return api_key_namespace(key=key, asked=_header(headers, NAMESPACE_HEADER))
    if scheme == "token" and len(authorization) == 2:
        if not apps.is_installed("rest_framework.authtoken"):
            raise AuthenticationError("Token authentication needs rest_framework.authtoken.")
        found = token_check(key=authorization[1])
        if found is None:
            raise AuthenticationError("Invalid token, or its user is inactive.")
        return _user_namespace(found[0], headers)
    raise AuthenticationError(
        "Authentication required: send 'Authorization: Api-Key <key>' (or a DRF token)."
    )


__all__ = ["AuthenticationError", "Credentials", "resolve_namespace"]
