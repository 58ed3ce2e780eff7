"""The legal-hold guard every deleting service calls before it deletes anything."""

from __future__ import annotations

from ttmemory.exceptions import LegalHoldError
from ttmemory.models import LegalHold
from ttmemory.selectors.retention import legal_hold_find


def refuse_if_held(
    *, namespace: str, action: str, session_id: int | None = None, any_session: bool = False
) -> None:
    """Raise ``LegalHoldError`` naming the hold when ``namespace`` (or its session
    ``session_id``; with ``any_session``, any of its sessions) is under legal hold.

    Call it inside the service's transaction, after taking the session lock, so a hold
    committed before the deletion starts is always seen.
    """
    if any_session:
        hold = LegalHold.objects.filter(namespace=namespace).order_by("session_id").first()
    else:
        hold = legal_hold_find(namespace=namespace, session_id=session_id)
    if hold is not None:
        raise LegalHoldError(
            namespace=hold.namespace, session_id=hold.session_id, reason=hold.reason, action=action
        )
