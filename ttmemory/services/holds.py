"""Legal holds: place and lift them. While one is in force nothing in its scope is deleted or
rewritten: the database's triggers refuse it (migration 0023), and the gate
(``services/gate.py``) refuses it first with the hold named."""

from __future__ import annotations

from typing import Any

from ttmemory.backends.locks import session_lock_hold
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import LegalHold, MemorySession
from ttmemory.services.gate import Change, change

MAX_HOLD_REASON = 500


def legal_hold_place(
    *,
    namespace: str,
    reason: str,
    session: MemorySession | None = None,
    actor: str = "",
    user: Any = None,
) -> LegalHold:
    """Put ``namespace`` (or one of its sessions) under legal hold: from when this commits,
    nothing in its scope is deleted (expiry, pruning, erase, delete, clear, forget) until
    ``legal_hold_lift``. Placing a hold that exists returns it unchanged. Audited.

    A session hold takes the session's lock, so a prune or delete of that session running
    now either finished before or sees the hold.
    """
    with change("hold", namespace=namespace, hold="allow") as gate:
        reason = (reason or "").strip()
        if not reason:
            raise MemoryValidationError(
                "reason", "a legal hold needs a reason (e.g. a case number)"
            )
        if len(reason) > MAX_HOLD_REASON:
            raise MemoryValidationError("reason", f"is longer than {MAX_HOLD_REASON} characters")
        if session is not None and session.namespace != gate.namespace:
            raise MemoryValidationError("session", "belongs to another namespace")
        if user is not None and getattr(user, "is_authenticated", False):
            actor = actor or user.get_username()
        if session is not None:
            session_lock_hold(session.pk)
            if not MemorySession.objects.filter(pk=session.pk).exists():
                raise MemorySession.DoesNotExist(f"session {session.pk} no longer exists")
        placed, created = LegalHold.objects.get_or_create(
            namespace=gate.namespace,
            session=session,
            defaults={"reason": reason, "placed_by": (actor or "unknown")[:150]},
        )
        if created:
            _audit(gate, "hold", session, placed.pk, user=user, actor=actor, reason=reason)
    return placed


def legal_hold_lift(
    *,
    namespace: str,
    session: MemorySession | None = None,
    reason: str = "",
    actor: str = "",
    user: Any = None,
) -> bool:
    """Lift the hold on ``namespace`` (or on its ``session``); False when there was none.

    The data becomes subject to its lifetimes again at the next prune. Audited.
    """
    with change("hold lift", namespace=namespace, hold="allow") as gate:
        holds = LegalHold.objects.filter(namespace=gate.namespace, session=session)
        found = list(holds.values_list("pk", flat=True))
        holds.delete()
        if found:
            _audit(gate, "hold_lift", session, found[0], user=user, actor=actor, reason=reason)
    return bool(found)


def _audit(
    gate: Change, action: str, session: MemorySession | None, hold_id: int, **fields: Any
) -> None:
    """The audit row of placing or lifting the hold ``hold_id`` (who, why: ``fields``)."""
    gate.audit(
        action=action,
        object_type="session" if session is not None else "namespace",
        object_id=session.pk if session is not None else "",
        details={"hold": hold_id},
        **fields,
    )
