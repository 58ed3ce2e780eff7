"""API-key authentication for service clients (``Authorization: Api-Key <key>``) and DRF's
token authentication with the checked token trusted for ``API_AUTH_CACHE_SECONDS``."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.signals import setting_changed
from django.db.models.signals import post_delete, post_save
from rest_framework import authentication, exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.request import Request

from ttmemory.services.access import CredentialCache, api_key_check, copy_field_values

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


# DRF tokens by their key: the token's and its user's field values (CachedTokenAuthentication).
token_cache = CredentialCache()


class CachedTokenAuthentication(TokenAuthentication):
    """DRF's ``TokenAuthentication`` (``Authorization: Token <key>``), answering a token it
    checked within ``API_AUTH_CACHE_SECONDS`` without reading it and its user again.

    Every request gets its own token and user instances, built from the values read (so a
    permission cache filled on one request's user never reaches another). Deleting the token,
    or saving or deleting its user (``is_active=False``), forgets it at once in this process;
    other processes read it again within ``API_AUTH_CACHE_SECONDS``. A change that sends no
    signal (``QuerySet.update()``) is also seen within that bound.
    """

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        generation = token_cache.generation  # before reading: see CredentialCache.put
        cached = token_cache.get(key)
        if cached is not None:
            alias, token_values, user_values = cached
            token_model: Any = self.get_model()
            user_model: Any = token_model._meta.get_field("user").related_model
            user = user_model.from_db(alias, _attnames(user_model), copy_field_values(user_values))
            token = token_model.from_db(alias, _attnames(token_model), token_values)
            token.user = user
            return user, token
        user, token = super().authenticate_credentials(key)
        cached = (
            token._state.db,
            tuple(getattr(token, name) for name in _attnames(type(token))),
            copy_field_values(tuple(getattr(user, name) for name in _attnames(type(user)))),
        )
        token_cache.put(key, cached, owners=[("user", user.pk)], generation=generation)
        return user, token


def _attnames(model: Any) -> list[str]:
    return [field.attname for field in model._meta.concrete_fields]


def _forget_user(*, instance: Any, **kwargs: Any) -> None:
    token_cache.forget(("user", instance.pk))


def _forget_token_user(*, instance: Any, **kwargs: Any) -> None:
    token_cache.forget(("user", instance.user_id))


# Lazy senders ("app_label.Model"): connected once those models are loaded.
post_save.connect(_forget_user, sender=settings.AUTH_USER_MODEL, weak=False)
post_delete.connect(_forget_user, sender=settings.AUTH_USER_MODEL, weak=False)
if apps.is_installed("rest_framework.authtoken"):
    post_save.connect(_forget_token_user, sender="authtoken.Token", weak=False)
    post_delete.connect(_forget_token_user, sender="authtoken.Token", weak=False)


def _reset_token_cache(*, setting: str, **kwargs: Any) -> None:
    if setting in ("TTMEMORY", "AUTH_USER_MODEL", "REST_FRAMEWORK"):
        token_cache.clear()


setting_changed.connect(_reset_token_cache, weak=False)
