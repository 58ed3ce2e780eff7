"""Retention in the admin: policies and legal holds edited through the services (audited), and
a session's expiry and hold on its page."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tests.admin.conftest import VIEW_ALL, Conversation, MakeClient, page, session_url
from ttmemory import memory
from ttmemory.models import AuditEntry, LegalHold, RetentionPolicy

POLICIES = "/admin/ttmemory/retentionpolicy/"
HOLDS = "/admin/ttmemory/legalhold/"


def test_a_policy_is_added_through_the_service_and_shown_as_the_session_expiry(
    conversation: Conversation, staff_client: MakeClient, settings: Any
) -> None:
    client = staff_client(*VIEW_ALL, "add_retentionpolicy", "change_retentionpolicy")
    form = {"namespace": "user-42", "session_ttl": "7 00:00:00", "session_expiry": ""}
    bad = client.post(f"{POLICIES}add/", {**form, "snapshot_ttl": "-1 00:00:00"})
    assert bad.status_code == 200 and "must be from 0" in page(bad)
    assert not RetentionPolicy.objects.exists()

    added = client.post(f"{POLICIES}add/", form)
    assert added.status_code == 302, page(added)
    policy = RetentionPolicy.objects.get()
    assert policy.session_ttl == dt.timedelta(days=7) and policy.snapshot_ttl is None
    entry = AuditEntry.objects.get(action="retention")
    assert entry.actor.startswith("agent") and entry.details["changed"]["session_ttl"] == 604800

    shown = page(client.get(session_url(conversation.session)))
    expires = conversation.session.updated_at + dt.timedelta(days=7)
    assert "Expires" in shown and str(expires.year) in shown
    assert "Legal hold" in shown


def test_a_hold_placed_and_lifted_in_the_admin_guards_the_session(
    conversation: Conversation, staff_client: MakeClient
) -> None:
    client = staff_client(*VIEW_ALL, "view_legalhold", "add_legalhold", "delete_legalhold")
    session = conversation.session
    placed = client.post(f"{HOLDS}add/", {"session": session.pk, "reason": "case 2026-17"})
    assert placed.status_code == 302, page(placed)
    hold = LegalHold.objects.get()
    assert (hold.namespace, hold.session_id) == ("user-42", session.pk)
    assert "case 2026-17" in page(client.get(session_url(session)))
    try:
        memory.session_delete(session=session)
    except memory.LegalHoldError as refused:
        assert refused.session_id == session.pk
    else:
        raise AssertionError("a held session was deleted")

    lifted = client.post(f"{HOLDS}{hold.pk}/delete/", {"post": "yes"})
    assert lifted.status_code == 302
    assert not LegalHold.objects.exists()
    actions = list(AuditEntry.objects.order_by("pk").values_list("action", flat=True))
    assert actions == ["hold", "hold_lift"]
    memory.session_delete(session=session)


def test_staff_without_the_permission_cannot_place_holds(
    conversation: Conversation, staff_client: MakeClient
) -> None:
    client = staff_client(*VIEW_ALL)
    response = client.post(f"{HOLDS}add/", {"namespace": "user-42", "reason": "x"})
    assert response.status_code == 403 and not LegalHold.objects.exists()
