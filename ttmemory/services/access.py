"""API keys for service clients: create (the secret is shown once), check, revoke."""

from __future__ import annotations

import copy
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone
from django.utils.module_loading import import_string

from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError, NamespaceAccessError
from ttmemory.models import ApiKey
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


class CredentialCache:
    """Credentials checked recently, by a digest of the secret, trusted for
    ``API_AUTH_CACHE_SECONDS`` without reading them again (0: never trusted).

    Each entry names its owners (``("api_key", pk)``, ``("user", pk)``); ``forget(owner)``
    drops every entry of an owner at once, and an answer read from the database while a
    ``forget`` ran is not stored (the generation moved), so a revocation in this process is
    never undone by a request that was checking the same credential. Other processes see it
    within ``API_AUTH_CACHE_SECONDS``. Holds copies of the rows' values, never the instances a
    request may change.
    """

    MAX_ENTRIES = 10_000

    def __init__(self) -> None:
        self._entries: dict[bytes, tuple[float, frozenset[Hashable], Any]] = {}
        self.generation = 0

    @staticmethod
    def digest(secret: str) -> bytes:
        return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()

    def get(self, secret: str) -> Any:
        """The value stored for ``secret`` while fresh, else None."""
        entry = self._entries.get(self.digest(secret))
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[2]

    def put(self, secret: str, value: Any, *, owners: Iterable[Hashable], generation: int) -> None:
        """Store ``value`` for ``secret`` if nothing was forgotten since ``generation`` (read
        before the database was)."""
        ttl = app_settings.API_AUTH_CACHE_SECONDS
        if ttl <= 0 or generation != self.generation:
            return
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()
        self._entries[self.digest(secret)] = (time.monotonic() + ttl, frozenset(owners), value)

    def forget(self, owner: Hashable) -> None:
        """Drop every entry of ``owner`` (a revoked key, a deleted token, a changed user)."""
        self.generation += 1
        for digest, (_, owners, _) in list(self._entries.items()):
            if owner in owners:
                self._entries.pop(digest, None)

    def clear(self) -> None:
        self.generation += 1
        self._entries.clear()


# API keys by their full key: the row's field values (``api_key_check``).
api_key_cache = CredentialCache()


def api_key_create(
    *,
    name: str,
    namespaces: Sequence[str],
    can_rollback: bool = False,
    can_erase: bool = False,
) -> tuple[ApiKey, str]:
    """Create a key; returns the row and the full key, which is not stored and never shown again.

    The key looks like ``ttm_<prefix>_<secret>``; clients send it as ``Authorization: Api-Key
    <key>``. Raises MemoryValidationError for an empty name or bad namespace grants.
    """
    if not isinstance(name, str) or not name.strip():
        raise MemoryValidationError("name", "must not be empty")
    grants = clean_grants(namespaces)
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    key = ApiKey.objects.create(
        name=name.strip()[:100],
        prefix=prefix,
        secret_hash=_hash(secret),
        namespaces=grants,
        can_rollback=bool(can_rollback),
        can_erase=bool(can_erase),
    )
    return key, f"{KEY_PREFIX}{prefix}_{secret}"


def api_key_check(*, raw_key: str) -> ApiKey | None:
    """The active key matching ``raw_key``, or None. Records when it was last used.

    Every call reads the key's row from the database (one primary-key lookup), so a key
    revoked or deleted by any process, or through SQL, is refused by the very next request in
    every process. What ``api_key_cache`` keeps for ``API_AUTH_CACHE_SECONDS`` is only the proof
    that the secret matched (which row, with which secret hash): a cached entry can never
    answer for a row that is gone, revoked or given a new secret.
    """
    if not isinstance(raw_key, str) or not raw_key.startswith(KEY_PREFIX):
        return None
    prefix, sep, secret = raw_key[len(KEY_PREFIX) :].partition("_")
    if not sep or not prefix or not secret:
        return None
    generation = api_key_cache.generation  # before reading: see CredentialCache.put
    cached = api_key_cache.get(raw_key)
    if cached is not None:
        pk, secret_hash = cached
        found = ApiKey.objects.active().filter(pk=pk, prefix=prefix).first()
        if found is None or not hmac.compare_digest(found.secret_hash, secret_hash):
            api_key_cache.forget(("api_key", pk))
            return None
    else:
        found = ApiKey.objects.active().filter(prefix=prefix).first()
        if found is None or not hmac.compare_digest(found.secret_hash, _hash(secret)):
            return None
        api_key_cache.put(
            raw_key,
            (found.pk, found.secret_hash),
            owners=[("api_key", found.pk)],
            generation=generation,
        )
    key = found
    now = timezone.now()
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        # Bookkeeping only: it extends nothing (validity is read on every call).
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key


def copy_field_values(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """Field values no request can change in the cache: containers copied, scalars shared."""
    return tuple(
        copy.deepcopy(value) if isinstance(value, list | dict | set) else value for value in values
    )


def api_key_revoke(*, key: ApiKey) -> None:
    """Revoke ``key``: every later request with it is unauthenticated (401)."""
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    api_key_cache.forget(("api_key", key.pk))
    key.refresh_from_db(fields=["revoked_at"])


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
        api_key_cache.clear()


@receiver(post_save, sender=ApiKey)
@receiver(post_delete, sender=ApiKey)
def _forget_api_key(*, instance: ApiKey, **kwargs: Any) -> None:
    # A key edited (grants, flags, revoked) or deleted, in the admin or anywhere in this
    # process, is read again by its next request.
    api_key_cache.forget(("api_key", instance.pk))
