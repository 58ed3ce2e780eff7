"""Time travel in the admin: "Rewind to here" and "Fork from here" on transcript messages,
through a preview with a reason, undo, branches on the session page, permissions."""

from __future__ import annotations

import html
from typing import Any

from django.test import Client

from tests.admin.conftest import (
    BAD_TEXT,
    NAMESPACE,
    VIEW_ALL,
    Conversation,
    MakeClient,
    page,
    session_url,
    undo_url,
)
from tests.conftest import user
from ttmemory import memory
from ttmemory.models import AuditEntry, Fact, MemorySession, Message, Snapshot, SnapshotKind

LIST = "/admin/ttmemory/memorysession/"


def rewind_url(session: MemorySession, seq: int) -> str:
    return f"{LIST}{session.pk}/rewind/{seq}/"


def fork_url(session: MemorySession, seq: int) -> str:
    return f"{LIST}{session.pk}/fork/{seq}/"


def live_seqs(session: MemorySession) -> list[int]:
    return list(
        Message.objects.live().filter(session=session).order_by("seq").values_list("seq", flat=True)
    )


def confirm(client: Client, url: str, reason: str = "ticket 7: wrong booking") -> Any:
    form = client.get(url).context["form"]
    return client.post(url, {"reason": reason, "state": form.initial["state"]})


def test_each_live_message_offers_rewind_and_fork(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    body = page(support_client.get(session_url(session)))
    # The tool call (#5) and its result (#6) are one bubble: it cuts after the result.
    for seq in (1, 2, 3, 4, 6, 7, 8):
        assert f'href="{rewind_url(session, seq)}"' in body, seq
        assert f'href="{fork_url(session, seq)}"' in body, seq
    assert f'href="{rewind_url(session, 5)}"' not in body
    assert f'href="{rewind_url(session, 9)}"' not in body  # the newest: nothing to rewind
    assert f'href="{fork_url(session, 9)}"' in body
    assert "No session was forked from this one." in body


def test_the_rewind_preview_shows_what_goes_and_changes_nothing(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    support_client.post(f"{LIST}{session.pk}/reveal/", {"reason": "ticket 7"})
    response = support_client.get(rewind_url(session, 7))
    body = page(response)
    assert response.status_code == 200
    assert "2</strong> messages will be removed (#8&ndash;9" in body
    assert html.escape(BAD_TEXT) in body.split('id="removed"')[1]
    assert f"#{conversation.bad_fact.pk}" in body.split('id="facts"')[1]
    assert "safety snapshot" in body
    assert live_seqs(session) == list(range(1, 10))
    assert not Snapshot.objects.filter(kind=SnapshotKind.SAFETY).exists()


def test_confirming_a_rewind_records_it_and_its_undo_restores_everything(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    response = confirm(support_client, rewind_url(session, 7))
    assert response.status_code == 302
    assert response["Location"] == session_url(session) + "#transcript"
    assert live_seqs(session) == list(range(1, 8))
    assert Fact.objects.get(pk=conversation.bad_fact.pk).valid_to is not None

    safety = Snapshot.objects.get(session=session, kind=SnapshotKind.SAFETY)
    entry = AuditEntry.objects.get(action="rewind")
    assert (entry.actor, entry.namespace, entry.reason) == (
        "sam",
        NAMESPACE,
        "ticket 7: wrong booking",
    )
    assert entry.details["to_seq"] == 7 and entry.details["safety_snapshot"] == safety.pk
    assert entry.details["superseded_fact_ids"] == [conversation.bad_fact.pk]
    body = page(support_client.get(response["Location"]))
    assert "Rewound user-42/lisbon-trip to message #7: 2 message(s) removed" in body
    assert body.count("removed by a rewind (archived)") == 2  # #8 and #9, shown dashed
    assert f'href="{undo_url(session, safety)}" class="ttm-undo-link">Undo</a>' in body

    undone = confirm(support_client, undo_url(session, safety), reason="customer was right")
    assert undone.status_code == 302
    assert live_seqs(session) == list(range(1, 10))
    assert AuditEntry.objects.get(action="undo").details["snapshot"] == safety.pk


def test_a_point_inside_a_tool_group_or_gone_is_refused(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    for seq, why in [(5, "inside the tool group #5-#6"), (42, "not a live message")]:
        response = support_client.get(rewind_url(session, seq), follow=True)
        assert why in page(response), seq
        response = support_client.get(fork_url(session, seq), follow=True)
        assert why in page(response), seq
    assert live_seqs(session) == list(range(1, 10))
    assert MemorySession.objects.count() == 1


def test_a_stale_rewind_preview_is_not_applied(
    conversation: Conversation, support_client: Client
) -> None:
    url = rewind_url(conversation.session, 7)
    state = support_client.get(url).context["form"].initial["state"]
    memory.message_add(session=conversation.session, message=user("one more thing"))
    response = support_client.post(url, {"reason": "ticket 7", "state": state})
    assert response.status_code == 200 and "The session changed" in page(response)
    assert "3</strong> messages will be removed" in page(response)
    assert live_seqs(conversation.session) == list(range(1, 11))
    assert not AuditEntry.objects.exists()


def test_forking_makes_a_branch_shown_on_both_pages(
    conversation: Conversation, support_client: Client
) -> None:
    session = conversation.session
    assert "copy of the 7 live messages" in page(support_client.get(fork_url(session, 7)))

    response = support_client.post(fork_url(session, 7), {"key": "retry", "reason": "ticket 7"})

    fork = MemorySession.objects.get(key="retry")
    assert response.status_code == 302 and response["Location"] == session_url(fork)
    assert (fork.parent_id, fork.forked_at_seq, live_seqs(fork)) == (
        session.pk,
        7,
        list(range(1, 8)),
    )
    assert live_seqs(session) == list(range(1, 10))
    fork_page = page(support_client.get(session_url(fork)))
    assert "This session is a branch" in fork_page and session_url(session) in fork_page
    parent_page = page(support_client.get(session_url(session)))
    assert f'href="{session_url(fork)}">retry</a>' in parent_page.split('id="branches"')[1]
    entry = AuditEntry.objects.get(action="fork")
    assert entry.details["fork"] == fork.pk and entry.reason == "ticket 7"

    taken = support_client.post(fork_url(session, 7), {"key": "retry", "reason": "again"})
    assert taken.status_code == 200 and "already exists" in page(taken)
    assert MemorySession.objects.filter(parent=session).count() == 1


def test_rewind_and_fork_need_the_rollback_permission(
    conversation: Conversation, staff_client: MakeClient
) -> None:
    client = staff_client(*VIEW_ALL)
    session = conversation.session
    body = page(client.get(session_url(session)))
    assert "Rewind to here" not in body and "Fork from here" not in body
    for url in (rewind_url(session, 7), fork_url(session, 7)):
        assert client.get(url).status_code == 403, url
        assert client.post(url, {"reason": "x", "state": "x"}).status_code == 403, url
    assert live_seqs(session) == list(range(1, 10))
    assert MemorySession.objects.count() == 1
