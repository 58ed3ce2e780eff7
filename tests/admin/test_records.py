"""The audit log admin is read-only; the ledger too; API keys are created once and revoked."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from tests.admin.conftest import NAMESPACE, VIEW_ALL, Conversation, MakeClient, page
from ttmemory.models import ApiKey, AuditEntry, LedgerEntry
from ttmemory.services.access import api_key_check
from ttmemory.services.audit import audit_record

AUDIT = "/admin/ttmemory/auditentry/"


def test_audit_log_lists_entries_and_cannot_be_changed(
    conversation: Conversation, admin_client: Client
) -> None:
    entry = audit_record(
        action="rollback",
        namespace=NAMESPACE,
        actor="sam",
        object_type="session",
        object_id=conversation.session.pk,
        reason="ticket 7",
        details={"removed": 2},
    )
    body = page(admin_client.get(AUDIT))
    assert "ticket 7" in body and "sam" in body
    assert f"/admin/ttmemory/memorysession/{conversation.session.pk}/change/" in body
    assert 'name="action"' not in body  # no bulk actions, not even delete
    assert admin_client.get(AUDIT + "add/").status_code == 403
    change = f"{AUDIT}{entry.pk}/change/"
    detail = page(admin_client.get(change))
    assert 'name="_save"' not in detail and "&quot;removed&quot;: 2" in detail
    assert admin_client.post(change, {"reason": "edited"}).status_code == 403
    assert admin_client.post(f"{AUDIT}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AuditEntry.objects.get(pk=entry.pk).reason == "ticket 7"


def test_audit_log_filters_by_namespace_and_action(
    conversation: Conversation, admin_client: Client
) -> None:
    audit_record(action="export", namespace=NAMESPACE, actor="sam", reason="first")
    audit_record(action="erase", namespace="user-7", actor="sam", reason="second")
    body = page(admin_client.get(AUDIT, {"namespace": NAMESPACE}))
    assert "first" in body and "second" not in body
    body = page(admin_client.get(AUDIT, {"action": "erase"}))
    assert "second" in body and "first" not in body


def test_audit_log_needs_its_view_permission(staff_client: MakeClient) -> None:
    assert staff_client("view_memorysession").get(AUDIT).status_code == 403
    assert staff_client(*VIEW_ALL).get(AUDIT).status_code == 200


def test_ledger_is_read_only(admin_client: Client) -> None:
    entry = LedgerEntry.objects.create(namespace=NAMESPACE, purpose="extract", model="gpt-x")
    assert "gpt-x" in page(admin_client.get("/admin/ttmemory/ledgerentry/"))
    assert admin_client.get("/admin/ttmemory/ledgerentry/add/").status_code == 403
    url = f"/admin/ttmemory/ledgerentry/{entry.pk}/change/"
    assert 'name="_save"' not in page(admin_client.get(url))


def test_api_key_is_shown_once_at_creation_and_can_be_revoked(admin_client: Client) -> None:
    response = admin_client.post(
        "/admin/ttmemory/apikey/add/",
        {"name": "web frontend", "namespaces": "acme/*\nuser-42", "can_rollback": "on"},
    )
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    raw_key = response.context["raw_key"]
    assert raw_key in page(response)
    key = ApiKey.objects.get()
    assert key.namespaces == ["acme/*", "user-42"] and key.can_rollback and not key.can_erase
    assert api_key_check(raw_key=raw_key) == key
    assert raw_key not in page(admin_client.get(f"/admin/ttmemory/apikey/{key.pk}/change/"))

    admin_client.post(
        "/admin/ttmemory/apikey/", {"action": "revoke_action", "_selected_action": [key.pk]}
    )
    assert api_key_check(raw_key=raw_key) is None


def test_an_api_key_created_with_an_expiry_is_refused_once_it_has_passed(
    admin_client: Client,
) -> None:
    response = admin_client.post(
        "/admin/ttmemory/apikey/add/",
        {"name": "trial", "namespaces": "user-42", "expires_at": "2100-01-01 00:00:00"},
    )
    raw_key = response.context["raw_key"]
    key = ApiKey.objects.get()
    assert key.expires_at is not None and key.expires_at.year == 2100
    assert api_key_check(raw_key=raw_key) == key
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now())
    assert api_key_check(raw_key=raw_key) is None
    assert "trial" in page(admin_client.get("/admin/ttmemory/apikey/"))


@pytest.mark.parametrize("grants", ["*", "user-1*", "acme/../*"])
def test_api_key_form_rejects_bad_grants(admin_client: Client, grants: str) -> None:
    response = admin_client.post(
        "/admin/ttmemory/apikey/add/", {"name": "bad", "namespaces": grants}
    )
    assert response.status_code == 200
    assert "must end with a separator" in page(response) or "segments" in page(response)
    assert not ApiKey.objects.exists()


def test_api_keys_need_add_permission(staff_client: MakeClient) -> None:
    client = staff_client(*VIEW_ALL)
    assert client.get("/admin/ttmemory/apikey/add/").status_code == 403
