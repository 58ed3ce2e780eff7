"""Rollback in the admin: preview, confirm with a reason, undo, permissions, stale previews."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.test import Client

from tests.admin.conftest import (
    BAD_TEXT,
    NAMESPACE,
    VIEW_ALL,
    Conversation,
    MakeClient,
    page,
    rollback_url,
    session_url,
    undo_url,
)
from tests.conftest import user
from ttmemory import memory
from ttmemory.models import AuditEntry, Fact, Message, Snapshot, SnapshotKind

LIST = "/admin/ttmemory/memorysession/"


def live_seqs(conversation: Conversation) -> list[int]:
    return list(
        Message.objects.live()
        .filter(session=conversation.session)
        .order_by("seq")
        .values_list("seq", flat=True)
    )


def reveal(client: Client, conversation: Conversation) -> None:
    url = f"{LIST}{conversation.session.pk}/reveal/"
    assert client.post(url, {"reason": "ticket 7"}).status_code == 302


def confirm(client: Client, url: str, reason: str = "ticket 7: wrong booking") -> Any:
    form = client.get(url).context["form"]
    return client.post(url, {"reason": reason, "state": form.initial["state"]})


def test_the_preview_shows_what_would_change_and_changes_nothing(
    conversation: Conversation, support_client: Client
) -> None:
    reveal(support_client, conversation)
    response = support_client.get(rollback_url(conversation.session, conversation.good))
    body = page(response)
    assert response.status_code == 200
    assert "2</strong> messages will be removed (#8&ndash;9" in body
    assert html.escape(BAD_TEXT) in body.split('id="removed"')[1]
    assert "Messages that will be restored" not in body
    facts = body.split('id="facts"')[1]
    assert f"#{conversation.bad_fact.pk}" in facts and "Ada flies to Paris on Friday" in facts
    assert f"#{conversation.kept_fact.pk}<" not in facts
    assert "safety snapshot" in body
    assert live_seqs(conversation) == list(range(1, 10))
    assert not AuditEntry.objects.filter(action="rollback").exists()


def test_the_preview_is_masked_until_revealed(
    conversation: Conversation, support_client: Client
) -> None:
    body = page(support_client.get(rollback_url(conversation.session, conversation.good)))
    assert BAD_TEXT not in body and "Ada flies" not in body
    assert f"\u2022\u2022\u2022 {len(BAD_TEXT)} characters" in body
    assert "Reveal the session" in body


def test_confirming_rolls_back_records_it_and_offers_undo(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    response = confirm(support_client, rollback_url(session, conversation.good))
    assert response.status_code == 302
    assert response["Location"] == session_url(session) + "#transcript"
    assert live_seqs(conversation) == list(range(1, 8))
    bad = Fact.objects.get(pk=conversation.bad_fact.pk)
    assert bad.valid_to is not None  # superseded, not deleted
    assert Fact.objects.get(pk=conversation.kept_fact.pk).valid_to is None

    safety = Snapshot.objects.get(session=session, kind=SnapshotKind.SAFETY)
    entry = AuditEntry.objects.get(action="rollback")
    assert (entry.actor, entry.namespace, entry.reason) == (
        "sam",
        NAMESPACE,
        "ticket 7: wrong booking",
    )
    assert entry.details["snapshot"] == conversation.good.pk
    assert entry.details["safety_snapshot"] == safety.pk
    assert (entry.details["removed"], entry.details["restored"]) == (2, 0)
    assert entry.details["superseded_fact_ids"] == [conversation.bad_fact.pk]
    assert entry.user is not None and entry.user.get_username() == "sam"

    body = page(support_client.get(response["Location"]))
    assert "Rolled back user-42/lisbon-trip to snapshot" in body
    assert f'href="{undo_url(session, safety)}" class="ttm-undo-link">Undo</a>' in body
    assert 'id="msg-8"' not in body and 'data-gap="8-9"' in body


def test_undo_restores_the_state_before_the_rollback(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    confirm(support_client, rollback_url(session, conversation.good))
    safety = Snapshot.objects.get(session=session, kind=SnapshotKind.SAFETY)
    reveal(support_client, conversation)

    body = page(support_client.get(undo_url(session, safety)))
    assert "Undo the rollback" in body and "2</strong> messages will be restored" in body
    assert html.escape(BAD_TEXT) in body.split('id="restored"')[1]

    response = confirm(support_client, undo_url(session, safety), reason="customer was right")
    assert response.status_code == 302
    assert live_seqs(conversation) == list(range(1, 10))
    entry = AuditEntry.objects.get(action="undo")
    assert entry.details["snapshot"] == safety.pk and entry.details["restored"] == 2
    assert entry.reason == "customer was right"
    assert html.escape(BAD_TEXT) in page(support_client.get(session_url(session)))


def test_undo_is_only_for_safety_snapshots(
    conversation: Conversation, support_client: Client
) -> None:
    url = undo_url(conversation.session, conversation.good)
    assert support_client.get(url).status_code == 404


def test_a_reason_is_required(conversation: Conversation, support_client: Client) -> None:
    response = confirm(support_client, rollback_url(conversation.session, conversation.good), " ")
    assert response.status_code == 200 and "This field is required" in page(response)
    assert live_seqs(conversation) == list(range(1, 10))
    assert not AuditEntry.objects.exists()


def test_a_stale_preview_is_not_applied(conversation: Conversation, support_client: Client) -> None:
    url = rollback_url(conversation.session, conversation.good)
    state = support_client.get(url).context["form"].initial["state"]
    memory.message_add(session=conversation.session, message=user("one more thing"))
    response = support_client.post(url, {"reason": "ticket 7", "state": state})
    assert response.status_code == 200 and "The session changed" in page(response)
    assert live_seqs(conversation) == list(range(1, 11))
    assert "3</strong> messages will be removed" in page(response)
    assert not AuditEntry.objects.exists()


def test_a_rollback_is_not_applied_when_its_audit_entry_cannot_be_written(
    conversation: Conversation, support_client: Client, monkeypatch: Any
) -> None:
    before = live_seqs(conversation)
    url = rollback_url(conversation.session, conversation.good)
    form = support_client.get(url).context["form"]

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("audit log unavailable")

    monkeypatch.setattr("ttmemory.admin.base.audit_record", broken)
    with pytest.raises(RuntimeError):
        support_client.post(url, {"reason": "ticket 7", "state": form.initial["state"]})
    assert live_seqs(conversation) == before
    assert not Snapshot.objects.filter(kind=SnapshotKind.SAFETY).exists()


def test_rollback_needs_the_permission(
    conversation: Conversation, staff_client: MakeClient
) -> None:
    client = staff_client(*VIEW_ALL)
    session = conversation.session
    body = page(client.get(session_url(session)))
    assert "Roll back to here" not in body and "Take snapshot" not in body
    assert "Can roll back a session" in body
    changelist = page(client.get(LIST))
    assert "rollback_action" not in changelist
    for url in (
        rollback_url(session, conversation.good),
        f"{LIST}{session.pk}/rollback/",
        f"{LIST}{session.pk}/snapshot/",
    ):
        assert client.get(url).status_code == 403, url
        assert client.post(url, {"reason": "x", "label": "x"}).status_code == 403, url
    snapshot_page = page(client.get(f"/admin/ttmemory/snapshot/{conversation.good.pk}/change/"))
    assert "Roll back the session" not in snapshot_page
    assert live_seqs(conversation) == list(range(1, 10))


def test_the_admin_action_leads_to_choosing_a_snapshot(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    response = support_client.post(
        LIST, {"action": "rollback_action", "_selected_action": [session.pk]}
    )
    choose = f"{LIST}{session.pk}/rollback/"
    assert response.status_code == 302 and response["Location"] == choose
    body = page(support_client.get(choose))
    assert f'href="{rollback_url(session, conversation.good)}"' in body
    assert "Preview rollback" in body


def test_the_admin_action_wants_exactly_one_session(
    conversation: Conversation, support_client: Client
) -> None:
    other = memory.session_open(namespace=NAMESPACE, key="second")
    response = support_client.post(
        LIST,
        {"action": "rollback_action", "_selected_action": [conversation.session.pk, other.pk]},
        follow=True,
    )
    assert "Select exactly one session" in page(response)


def test_session_and_snapshot_pages_link_to_the_confirmation(
    conversation: Conversation, support_client: Client
) -> None:
    session, good = conversation.session, conversation.good
    target = f'href="{rollback_url(session, good)}"'
    assert target in page(support_client.get(session_url(session)))
    assert target in page(support_client.get(f"/admin/ttmemory/snapshot/{good.pk}/change/"))


def test_snapshot_page_shows_what_it_holds(
    conversation: Conversation, support_client: Client
) -> None:
    reveal(support_client, conversation)
    body = page(support_client.get(f"/admin/ttmemory/snapshot/{conversation.good.pk}/change/"))
    assert 'id="msg-7"' in body and 'id="msg-8"' not in body
    assert BAD_TEXT not in body


def test_taking_a_snapshot_is_recorded(conversation: Conversation, support_client: Client) -> None:
    url = f"{LIST}{conversation.session.pk}/snapshot/"
    response = support_client.post(url, {"label": "before call", "reason": "ticket 9"})
    assert response.status_code == 302
    snapshot = Snapshot.objects.filter(session=conversation.session).latest("pk")
    assert snapshot.label == "before call" and snapshot.created_by is not None
    entry = AuditEntry.objects.get(action="snapshot")
    assert entry.details["snapshot"] == snapshot.pk and entry.reason == "ticket 9"


def test_confirmation_posts_are_csrf_protected(
    conversation: Conversation, support_client: Client
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(support_client.user)  # type: ignore[attr-defined]
    url = rollback_url(conversation.session, conversation.good)
    state = support_client.get(url).context["form"].initial["state"]
    response = client.post(url, {"reason": "x", "state": state})
    assert response.status_code == 403
    assert live_seqs(conversation) == list(range(1, 10))
