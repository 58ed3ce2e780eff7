"""Who the caller is, as a namespace: a pluggable resolver for users, grants for API keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request

from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import ApiKey
from ttmemory.validation import clean_namespace

NAMESPACE_HEADER = "X-Memory-Namespace"


def user_namespace(request: Request) -> str | None:
    """The default resolver: one namespace per Django user, ``user-<pk>``."""
    user = request.user
    if user is None or not user.is_authenticated:
        return None
    return f"user-{user.pk}"


_resolver_cache: Callable[[Request], str | None] | None = None


def _resolver() -> Callable[[Request], str | None]:
    """``API_NAMESPACE_RESOLVER``, imported once per settings change."""
    global _resolver_cache
    if _resolver_cache is None:
        configured = app_settings.API_NAMESPACE_RESOLVER
        if not isinstance(configured, str):
            _resolver_cache = configured
            return configured
        try:
            _resolver_cache = import_string(configured)
        except ImportError as exc:
            raise ImproperlyConfigured(
                f"TTMEMORY['API_NAMESPACE_RESOLVER']: cannot import {configured!r}: {exc}"
            ) from exc
    return _resolver_cache


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    global _resolver_cache
    if setting == "TTMEMORY":
        _resolver_cache = None


def resolve_namespace(request: Request) -> str:
    """The namespace every object of this request belongs to.

    API keys name it in the ``X-Memory-Namespace`` header (optional when the key is granted
    exactly one namespace) and must be granted it; users get the resolver's answer. Raises
    PermissionDenied when there is none, ValidationError for a malformed header.
    """
    if isinstance(request.auth, ApiKey):
        key: ApiKey = request.auth
        asked: Any = request.headers.get(NAMESPACE_HEADER)
        if asked is None:
            asked = key.single_namespace
            if asked is None:
                raise ValidationError(
                    {NAMESPACE_HEADER: ["required: this key is granted several namespaces"]}
                )
        try:
            namespace = clean_namespace(asked, field=NAMESPACE_HEADER)
        except MemoryValidationError as exc:
            raise ValidationError({exc.field: [exc.message]}) from exc
        if not key.grants(namespace):
            raise PermissionDenied(f"This API key is not granted the namespace {namespace!r}.")
        return namespace
    resolved = _resolver()(request)
    if not resolved:
        raise PermissionDenied("No memory namespace belongs to this user.")
    return resolved
