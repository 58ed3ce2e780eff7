"""Sessions in the admin: list, search, filters, the transcript as a chat, masking and reveal."""

from __future__ import annotations

import html
from typing import Any

from django.test import Client

from tests.admin.conftest import (
    BAD_TEXT,
    GOOD_TEXT,
    NAMESPACE,
    SUPPORT,
    TOOL_RESULT_TEXT,
    VIEW_ALL,
    Conversation,
    MakeClient,
    page,
    session_url,
)
from tests.conftest import assistant, user
from ttmemory import memory
from ttmemory.models import AuditEntry, MemorySession

LIST = "/admin/ttmemory/memorysession/"


def unmasked(settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "ADMIN_MASK_CONTENT": False}


def test_list_shows_sessions_with_counts_and_finds_them_by_namespace_and_key(
    conversation: Conversation, support_client: Client
) -> None:
    memory.session_open(namespace="user-7", key="other-chat")
    body = page(support_client.get(LIST))
    assert "lisbon-trip" in body and "other-chat" in body
    assert '<td class="field-message_count">9</td>' in body

    found = page(support_client.get(LIST, {"q": NAMESPACE}))
    assert "lisbon-trip" in found and "other-chat" not in found
    found = page(support_client.get(LIST, {"q": "other-chat"}))
    assert "other-chat" in found and "lisbon-trip" not in found
    filtered = page(support_client.get(LIST, {"namespace": "user-7"}))
    assert "other-chat" in filtered and "lisbon-trip" not in filtered


def test_summary_filter(conversation: Conversation, support_client: Client) -> None:
    memory.session_open(namespace="user-7", key="no-summary")
    MemorySession.objects.filter(pk=conversation.session.pk).update(
        summary="Earlier: greetings.", summary_upto_seq=2
    )
    body = page(support_client.get(LIST, {"summary": "yes"}))
    assert "lisbon-trip" in body and "no-summary" not in body
    body = page(support_client.get(LIST, {"summary": "no"}))
    assert "no-summary" in body and "lisbon-trip" not in body


def test_transcript_is_masked_by_default_with_roles_seqs_and_tokens_visible(
    conversation: Conversation, support_client: Client
) -> None:
    body = page(support_client.get(session_url(conversation.session)))
    assert BAD_TEXT not in body and GOOD_TEXT not in body
    assert html.escape(TOOL_RESULT_TEXT) not in body and "peanuts" not in body
    assert f"\u2022\u2022\u2022 {len(GOOD_TEXT)} characters" in body
    for seq in range(1, 10):
        assert f'data-seq="{seq}"' in body
    assert "ttm-role-user" in body and "ttm-role-assistant" in body
    assert "tokens" in body
    assert "Reveal content" in body


def test_tool_calls_are_folded_with_their_results(
    conversation: Conversation, support_client: Client, settings: Any
) -> None:
    unmasked(settings)
    body = page(support_client.get(session_url(conversation.session)))
    start = body.index('<details class="ttm-tool" data-call="call_weather">')
    details = body[start : body.index("</details>", start)]
    assert "get_weather" in details
    assert html.escape(TOOL_RESULT_TEXT) in details  # the result sits inside its call
    assert 'data-seq="6"' in details
    assert 'id="msg-6"' not in body  # not a bubble of its own
    assert GOOD_TEXT in body and BAD_TEXT in body


def test_summary_trim_and_gap_markers(
    conversation: Conversation, support_client: Client, settings: Any
) -> None:
    unmasked(settings)
    session = conversation.session
    memory.session_trim(session=session, max_tokens=60)  # archives the oldest turns
    MemorySession.objects.filter(pk=session.pk).update(
        summary="Ada is allergic to peanuts.", summary_upto_seq=3
    )
    body = page(support_client.get(session_url(session)))
    assert 'data-summary-upto="3"' in body and "Ada is allergic to peanuts." in body
    assert "trimmed, in the summary" in body
    assert "ttm-archived" in body

    memory.snapshot_rollback(session=session, snapshot=conversation.good)
    memory.message_add(session=session, message=user("new turn"))
    body = page(support_client.get(session_url(session)))
    assert 'data-gap="8-9"' in body  # removed by the rollback; seqs are never reused


def test_long_transcripts_show_the_newest_messages_first(
    conversation: Conversation, support_client: Client, monkeypatch: Any
) -> None:
    monkeypatch.setattr("ttmemory.admin.sessions.TRANSCRIPT_LIMIT", 3)
    body = page(support_client.get(session_url(conversation.session)))
    assert "6 earlier messages not shown" in body
    assert 'data-seq="9"' in body and 'id="msg-1"' not in body
    body = page(support_client.get(session_url(conversation.session) + "?all=1"))
    assert 'id="msg-1"' in body


def test_masking_off_shows_content_and_no_reveal(
    conversation: Conversation, support_client: Client, settings: Any
) -> None:
    unmasked(settings)
    body = page(support_client.get(session_url(conversation.session)))
    assert BAD_TEXT in body and "Reveal content" not in body


def test_reveal_asks_for_a_reason_records_it_and_then_shows_content(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    reveal = f"/admin/ttmemory/memorysession/{session.pk}/reveal/"
    assert "reason" in page(support_client.get(reveal)).lower()

    response = support_client.post(reveal, {"reason": "  "})
    assert response.status_code == 200 and "This field is required" in page(response)
    assert not AuditEntry.objects.exists()

    response = support_client.post(reveal, {"reason": "ticket 123: customer asks"})
    assert response.status_code == 302 and response["Location"] == session_url(session)
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.namespace, entry.actor) == ("reveal", NAMESPACE, "sam")
    assert (entry.object_type, entry.object_id) == ("session", str(session.pk))
    assert entry.reason == "ticket 123: customer asks"
    assert "Ada" not in str(entry.details)

    body = page(support_client.get(session_url(session)))
    assert BAD_TEXT in body and GOOD_TEXT in body and "Content is revealed" in body

    support_client.post(reveal, {"hide": "1"})
    assert BAD_TEXT not in page(support_client.get(session_url(session)))


def test_reveal_needs_the_permission(conversation: Conversation, staff_client: MakeClient) -> None:
    client = staff_client(*VIEW_ALL)
    session = conversation.session
    body = page(client.get(session_url(session)))
    assert "Reveal content" not in body and "Can reveal masked" in body
    reveal = f"/admin/ttmemory/memorysession/{session.pk}/reveal/"
    assert client.post(reveal, {"reason": "curious"}).status_code == 403
    assert not AuditEntry.objects.exists()


def test_reveal_is_per_session(conversation: Conversation, support_client: Client) -> None:
    other = memory.session_open(namespace=NAMESPACE, key="second")
    memory.message_add(session=other, message=assistant("a secret second answer"))
    support_client.post(
        f"/admin/ttmemory/memorysession/{conversation.session.pk}/reveal/", {"reason": "t-1"}
    )
    assert "a secret second answer" not in page(support_client.get(session_url(other)))


def test_sessions_are_read_only_in_the_admin(
    conversation: Conversation, support_client: Client, admin_client: Client
) -> None:
    assert support_client.get(LIST + "add/").status_code == 403
    assert admin_client.get(LIST + "add/").status_code == 403
    url = f"{LIST}{conversation.session.pk}/delete/"
    assert admin_client.post(url, {"post": "yes"}).status_code == 403
    body = page(admin_client.get(session_url(conversation.session)))
    assert 'name="_save"' not in body
    assert MemorySession.objects.filter(pk=conversation.session.pk).exists()


def test_staff_without_view_permission_cannot_open_sessions(
    conversation: Conversation, staff_client: MakeClient
) -> None:
    client = staff_client()
    assert client.get(session_url(conversation.session)).status_code == 403
    assert client.get(LIST).status_code == 403


def test_superuser_sees_every_tool(conversation: Conversation, admin_client: Client) -> None:
    body = page(admin_client.get(session_url(conversation.session)))
    assert "Roll back to here" in body and "Take snapshot" in body and "Namespace tools" in body
    assert SUPPORT  # the support group is the least a support agent needs (see docs/admin.md)
