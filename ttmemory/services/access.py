"""Credentials: API keys for service clients (create, the secret shown once; check; revoke) and
DRF tokens (check), each read from the database on every check: revocation applies at once in
every process (docs/security.md, "Revocation")."""

from __future__ import annotations

import datetime
import hashlib
import hmac
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db.models import F, Model
from django.dispatch import receiver
from django.utils import timezone
from django.utils.module_loading import import_string

from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError, NamespaceAccessError
from ttmemory.models import ApiKey
from ttmemory.models.compiled import CompiledQuery
from ttmemory.validation import NAMESPACE_SEPARATORS, clean_namespace

KEY_PREFIX = "ttm_"


def _hash(secret: str) -> str:
    # The secret is 256 random bits, so a plain SHA-256 cannot be brute-forced; no salt needed.
    return hashlib.sha256(secret.encode()).hexdigest()


def clean_grant(value: Any, *, field: str) -> str:
    """One grant: a namespace (``clean_namespace``), or a prefix grant, a namespace followed by
    one separator of ``NAMESPACE_SEPARATORS`` and ``*`` (``acme/*``, ``user-1:*``).

    A prefix ending inside a name (``user-1*``) is refused: it would reach ``user-10``.
    """
    if not isinstance(value, str) or not value.endswith("*"):
        return clean_namespace(value, field=field)
    prefix = value[:-1]
    if not prefix or prefix[-1] not in NAMESPACE_SEPARATORS:
        separators = " ".join(repr(ch) for ch in NAMESPACE_SEPARATORS)
        raise MemoryValidationError(
            field,
            f"a prefix grant must end with a separator ({separators}) and '*', such as "
            f"'acme/*' or 'user-1:*'; {value!r} would also grant names that merely start "
            "the same way",
        )
    clean_namespace(prefix[:-1], field=field)
    return value


def clean_grants(namespaces: Any) -> list[str]:
    """A non-empty list of grants (``clean_grant``), each naming its index when refused."""
    if isinstance(namespaces, str) or not isinstance(namespaces, Sequence) or not namespaces:
        raise MemoryValidationError("namespaces", "must be a non-empty list of namespaces")
    return [
        clean_grant(value, field=f"namespaces[{index}]") for index, value in enumerate(namespaces)
    ]


# The active key's row by its public prefix: compiled once per connection (the ORM's per-call
# queryset building was most of an authenticated request's Python; ttmemory.models.compiled).
_API_KEY_BY_PREFIX = CompiledQuery(ApiKey, lambda _, prefix: ApiKey.objects.filter(prefix=prefix))


def api_key_create(
    *,
    name: str,
    namespaces: Sequence[str],
    can_rollback: bool = False,
    can_erase: bool = False,
    expires_at: datetime.datetime | None = None,
) -> tuple[ApiKey, str]:
    """Create a key; returns the row and the full key, which is not stored and never shown again.

    The key looks like ``ttm_<prefix>_<secret>``; clients send it as ``Authorization: Api-Key
    <key>``. From ``expires_at`` on (an aware datetime; None: never) it is refused like a
    revoked key. Raises MemoryValidationError for an empty name, bad namespace grants or a
    naive ``expires_at``.
    """
    if not isinstance(name, str) or not name.strip():
        raise MemoryValidationError("name", "must not be empty")
    grants = clean_grants(namespaces)
    if expires_at is not None and (
        not isinstance(expires_at, datetime.datetime) or timezone.is_naive(expires_at)
    ):
        raise MemoryValidationError("expires_at", "must be an aware datetime or None")
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    key = ApiKey.objects.create(
        name=name.strip()[:100],
        prefix=prefix,
        secret_hash=_hash(secret),
        namespaces=grants,
        can_rollback=bool(can_rollback),
        can_erase=bool(can_erase),
        expires_at=expires_at,
    )
    return key, f"{KEY_PREFIX}{prefix}_{secret}"


def api_key_check(*, raw_key: str) -> ApiKey | None:
    """The active key matching ``raw_key``, or None. Records when it was last used.

    Every call reads the key's row from the database (one statement, by its prefix) and
    decides from that row alone: a key revoked, expired, deleted or given another secret, by
    any process or by SQL, is refused by the very next call in every process. Nothing about a
    key is kept between calls, so nothing (such as the ``last_used_at`` refresh) can extend it.
    """
    if not isinstance(raw_key, str) or not raw_key.startswith(KEY_PREFIX):
        return None
    prefix, sep, secret = raw_key[len(KEY_PREFIX) :].partition("_")
    if not sep or not prefix or not secret:
        return None
    key: ApiKey | None = next(_API_KEY_BY_PREFIX.objects(prefix=prefix), None)
    now = timezone.now()
    if key is None or not key.is_active_at(now):
        return None
    if not hmac.compare_digest(key.secret_hash, _hash(secret)):
        return None
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        # Bookkeeping only: validity is decided by the row read above, on every call.
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key


def api_key_revoke(*, key: ApiKey) -> None:
    """Revoke ``key``: every later request with it is unauthenticated (401)."""
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db(fields=["revoked_at"])


# DRF tokens (``rest_framework.authtoken``, or a project's own token model): one compiled
# statement per token model, the user's row joined with the token's.
_TOKEN_QUERIES: dict[type[Model], tuple[CompiledQuery, tuple[str, ...]]] = {}


def _token_query(token_model: type[Model]) -> tuple[CompiledQuery, tuple[str, ...]]:
    found = _TOKEN_QUERIES.get(token_model)
    if found is None:
        user_field: Any = token_model._meta.get_field("user")
        user_model = user_field.related_model
        related = user_field.related_query_name()  # "auth_token" for DRF's Token
        attnames = tuple(field.attname for field in token_model._meta.concrete_fields)
        columns = {f"_ttmemory_token_{attname}": F(f"{related}__{attname}") for attname in attnames}

        def build(_: Any, token_key: str) -> Any:
            by_key = {f"{related}__pk": token_key}
            return user_model._default_manager.filter(**by_key).annotate(**columns)

        found = _TOKEN_QUERIES[token_model] = (CompiledQuery(user_model, build), attnames)
    return found


def token_check(*, key: str, token_model: type[Model] | None = None) -> tuple[Any, Any] | None:
    """The active user of the DRF token ``key`` and the token, or None (no such token, or its
    user is inactive or deleted).

    Every call reads the token and its user from the database in one statement (compiled once
    per connection) and decides from those rows alone: a token deleted, or a user deactivated
    or deleted, by any process or by SQL, is refused by the very next call in every process.
    ``token_model`` defaults to ``rest_framework.authtoken``'s ``Token`` (which must be
    installed); the REST API passes its authentication class's model.
    """
    if not isinstance(key, str) or not key:
        return None
    if token_model is None:
        token_model = apps.get_model("authtoken", "Token")
    query, attnames = _token_query(token_model)
    user = next(query.objects(token_key=key), None)
    if user is None or not user.is_active:
        return None
    values = tuple(user.__dict__.pop(f"_ttmemory_token_{attname}") for attname in attnames)
    token = token_model.from_db(user._state.db, list(attnames), values)
    token.user = user  # type: ignore[attr-defined]
    return user, token


@receiver(setting_changed)
def _reset_token_queries(*, setting: str, **kwargs: Any) -> None:
    if setting in ("AUTH_USER_MODEL", "INSTALLED_APPS"):
        _TOKEN_QUERIES.clear()


# Where an API-key caller names the namespace it acts on (REST API and MCP over HTTP).
NAMESPACE_HEADER = "X-Memory-Namespace"


def api_key_namespace(*, key: ApiKey, asked: str | None) -> str:
    """The namespace a caller holding ``key`` acts on: ``asked`` (the ``X-Memory-Namespace``
    header), or when None the key's single exact grant.

    Raises ``MemoryValidationError`` (field ``X-Memory-Namespace``) when ``asked`` is malformed
    or missing while the key has several grants, ``NamespaceAccessError`` when the key is not
    granted it. Shared by every interface that authenticates API keys (REST API, MCP).
    """
    if asked is None:
        asked = key.single_namespace
        if asked is None:
            raise MemoryValidationError(
                NAMESPACE_HEADER, "required: this key is granted several namespaces"
            )
    namespace = clean_namespace(asked, field=NAMESPACE_HEADER)
    if not key.grants(namespace):
        raise NamespaceAccessError(f"This API key is not granted the namespace {namespace!r}.")
    return namespace


def user_namespace(request: Any) -> str | None:
    """The default ``API_NAMESPACE_RESOLVER``: one namespace per Django user, ``user-<pk>``."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    return f"user-{user.pk}"


# The default setting names the REST API's re-export of ``user_namespace``: resolved here
# without importing the API (and DRF), so other interfaces (MCP) can use it too.
_BUILTIN_RESOLVERS: dict[str, Callable[[Any], str | None]] = {
    "ttmemory.api.namespaces.user_namespace": user_namespace,
    "ttmemory.services.access.user_namespace": user_namespace,
}
_resolver_cache: Callable[[Any], str | None] | None = None


def namespace_resolver() -> Callable[[Any], str | None]:
    """``API_NAMESPACE_RESOLVER`` (request -> namespace or None), imported once per settings
    change. The request has ``user`` (authenticated) and ``headers``; the REST API passes its
    DRF request, MCP over HTTP a Django ``HttpRequest`` built from the call's headers."""
    global _resolver_cache
    if _resolver_cache is None:
        configured = app_settings.API_NAMESPACE_RESOLVER
        if not isinstance(configured, str):
            _resolver_cache = configured
        elif configured in _BUILTIN_RESOLVERS:
            _resolver_cache = _BUILTIN_RESOLVERS[configured]
        else:
            try:
                _resolver_cache = import_string(configured)
            except ImportError as exc:
                raise ImproperlyConfigured(
                    f"TTMEMORY['API_NAMESPACE_RESOLVER']: cannot import {configured!r}: {exc}"
                ) from exc
    return _resolver_cache


@receiver(setting_changed)
def _reset_resolver(*, setting: str, **kwargs: Any) -> None:
    global _resolver_cache
    if setting == "TTMEMORY":
        _resolver_cache = None
