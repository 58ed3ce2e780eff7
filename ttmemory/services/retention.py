"""Retention policies: each namespace's own lifetimes, overriding the ``TTMEMORY`` settings.

The prune that applies them is ``services/prune.py``; legal holds, which suspend them, are
``services/holds.py``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import RetentionPolicy
from ttmemory.selectors.retention import POLICY_LIFETIMES
from ttmemory.services.gate import change

UNSET: Any = object()


def clean_lifetime(value: Any, field: str) -> dt.timedelta | None:
    """None (inherit the setting), or a timedelta / seconds >= 0 (0: keep forever)."""
    if value is None:
        return None
    if isinstance(value, dt.timedelta):
        seconds: float = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise MemoryValidationError(field, "must be seconds (>= 0; 0 keeps forever) or null")
    if not seconds >= 0 or seconds > 100 * 365 * 86400:
        raise MemoryValidationError(
            field, "must be from 0 (keep forever) to 100 years in seconds, or null (the default)"
        )
    return dt.timedelta(seconds=seconds)


def retention_policy_set(
    *,
    namespace: str,
    session_ttl: Any = UNSET,
    session_expiry: Any = UNSET,
    archived_message_ttl: Any = UNSET,
    snapshot_ttl: Any = UNSET,
    ledger_ttl: Any = UNSET,
    actor: str = "",
    user: Any = None,
) -> RetentionPolicy:
    """Create or change ``namespace``'s retention policy; only the lifetimes given change.

    Each lifetime is None (the ``TTMEMORY`` setting applies), 0 (keep forever) or a
    ``timedelta`` / seconds; ``session_expiry`` is "", "delete" or "archive". Recorded in the
    audit log (the values, no content). Raises MemoryValidationError naming the field.
    """
    given = {
        "session_ttl": session_ttl,
        "archived_message_ttl": archived_message_ttl,
        "snapshot_ttl": snapshot_ttl,
        "ledger_ttl": ledger_ttl,
    }
    with change("retention policy", namespace=namespace, hold="allow") as gate:
        changes: dict[str, Any] = {
            name: clean_lifetime(value, name) for name, value in given.items() if value is not UNSET
        }
        if session_expiry is not UNSET:
            if session_expiry not in ("", None, "delete", "archive"):
                raise MemoryValidationError(
                    "session_expiry", "must be 'delete', 'archive' or empty (the setting)"
                )
            changes["session_expiry"] = session_expiry or ""
        policy, _ = RetentionPolicy.objects.select_for_update().get_or_create(
            namespace=gate.namespace
        )
        for name, value in changes.items():
            setattr(policy, name, value)
        policy.updated_at = timezone.now()
        policy.save()
        gate.audit(
            action="retention",
            user=user,
            actor=actor,
            object_type="retention_policy",
            object_id=policy.pk,
            details={"changed": policy_values(policy, only=tuple(changes))},
        )
    return policy


def policy_values(policy: RetentionPolicy, *, only: Sequence[str] = ()) -> dict[str, Any]:
    """The policy's values as JSON (lifetimes in seconds, None inheriting)."""
    names = only or (*POLICY_LIFETIMES, "session_expiry")
    values: dict[str, Any] = {}
    for name in names:
        value = getattr(policy, name)
        values[name] = value.total_seconds() if isinstance(value, dt.timedelta) else value
    return values


def retention_policy_delete(*, namespace: str, actor: str = "", user: Any = None) -> bool:
    """Remove ``namespace``'s policy (the settings apply again); False when it had none."""
    with change("retention policy", namespace=namespace, hold="allow") as gate:
        deleted = RetentionPolicy.objects.filter(namespace=gate.namespace).delete()[0]
        if deleted:
            gate.audit(
                action="retention",
                user=user,
                actor=actor,
                object_type="retention_policy",
                details={"deleted": True},
            )
    return bool(deleted)
