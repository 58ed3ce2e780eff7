"""The audit log: every staff or API action on someone's memory, with who, where and why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import AuditAction, AuditEntry
from ttmemory.validation import clean_json_object

MAX_REASON_CHARS = 2000


def audit_record(
    *,
    action: str,
    namespace: str,
    user: Any = None,
    actor: str = "",
    object_type: str = "",
    object_id: Any = "",
    reason: str = "",
    details: Mapping[str, Any] | None = None,
) -> AuditEntry:
    """Record one action. ``user`` is a Django user (or None for an API key, named by ``actor``).

    ``details`` must hold ids and counts only, never message or fact content. Raises
    MemoryValidationError for an unknown action or an over-long reason.
    """
    if action not in AuditAction.values:
        raise MemoryValidationError("action", f"unknown audit action {action!r}")
    reason = (reason or "").strip()
    if len(reason) > MAX_REASON_CHARS:
        raise MemoryValidationError("reason", f"is longer than {MAX_REASON_CHARS} characters")
    if user is not None and getattr(user, "is_authenticated", False):
        actor = actor or user.get_username()
    else:
        user = None
    return AuditEntry.objects.create(
        action=action,
        namespace=namespace,
        user=user,
        actor=actor[:150] or "unknown",
        object_type=object_type,
        object_id=str(object_id or ""),
        reason=reason,
        details=clean_json_object(details or {}, field="details"),
    )
