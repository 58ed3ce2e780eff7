"""API-key authentication for service clients (``Authorization: Api-Key <key>``) and DRF's
token authentication, each reading its credential from the database on every request
(``ttmemory.services.access``: revocation applies at once in every process)."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.request import Request

from ttmemory.services.access import api_key_check, token_check

KEYWORD = "Api-Key"


class ApiKeyUser:
    """The user of a request made with an API key: authenticated, never staff."""

    is_authenticated = True
    is_anonymous = False
    is_staff = False
    is_superuser = False
    pk = None
    id = None

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"api-key:{self.name}"

    def get_username(self) -> str:
        return str(self)

    def has_perm(self, perm: str, obj: Any = None) -> bool:
        return False


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """``Authorization: Api-Key ttm_…`` (or ``X-Api-Key: ttm_…``); ``request.auth`` is the key."""

    def authenticate(self, request: Request) -> tuple[ApiKeyUser, Any] | None:
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if header and header[0].lower() == KEYWORD.lower():
            if len(header) != 2:
                raise exceptions.AuthenticationFailed("Api-Key header must hold one key.")
            raw = header[1]
        else:
            # request.headers["X-Api-Key"], without building the dict of every header.
            raw = request.META.get("HTTP_X_API_KEY", "")
            if not raw:
                return None
        key = api_key_check(raw_key=raw.strip())
        if key is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return ApiKeyUser(key.name), key

    def authenticate_header(self, request: Request) -> str:
        return KEYWORD


class FreshTokenAuthentication(TokenAuthentication):
    """DRF's ``TokenAuthentication`` (``Authorization: Token <key>``) reading the token and its
    user on every request in one compiled statement (``services.access.token_check``): a token
    deleted or a user deactivated, by any process or by SQL, is refused by the next request.

    Same answers as DRF's class; it replaces it in ttmemory's views.
    """

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        found = token_check(key=key, token_model=self.get_model())
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid token, or its user is inactive.")
        return found
