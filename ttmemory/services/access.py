"""API keys for service clients: create (the secret is shown once), check, revoke."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from ttmemory.exceptions import MemoryValidationError
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
    """The active key matching ``raw_key``, or None. Records when it was last used."""
    if not isinstance(raw_key, str) or not raw_key.startswith(KEY_PREFIX):
        return None
    prefix, sep, secret = raw_key[len(KEY_PREFIX) :].partition("_")
    if not sep or not prefix or not secret:
        return None
    key = ApiKey.objects.active().filter(prefix=prefix).first()
    if key is None or not hmac.compare_digest(key.secret_hash, _hash(secret)):
        return None
    now = timezone.now()
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key


def api_key_revoke(*, key: ApiKey) -> None:
    """Revoke ``key``: every later request with it is unauthenticated (401)."""
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db(fields=["revoked_at"])
