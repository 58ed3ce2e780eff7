"""API-key authentication for service clients: ``Authorization: Api-Key <key>``."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from ttmemory.services.access import api_key_check

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
            raw = request.headers.get("X-Api-Key", "")
            if not raw:
                return None
        key = api_key_check(raw_key=raw.strip())
        if key is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return ApiKeyUser(key.name), key

    def authenticate_header(self, request: Request) -> str:
        return KEYWORD
