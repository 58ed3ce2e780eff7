"""Finding 7: key names are content. Profile keys and session-state names stay masked for staff
who have not revealed them; admin correct and forget commit together with their audit entry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import DatabaseError, connection
from django.test import Client

from tests.admin.conftest import SUPPORT, VIEW_ALL, MakeClient
from ttmemory import memory
from ttmemory.models import AuditEntry, Fact, MemorySession, Profile

NS = "user-42"
PROFILE_KEY = "patient_hiv_status"
STATE_KEY = "pending_pregnancy_test"


@pytest.fixture
def private(db: Any) -> tuple[MemorySession, Profile]:
    session = memory.session_open(namespace=NS, key="chat")
    memory.session_state_update(session=session, values={STATE_KEY: "tomorrow"})
    profile = memory.profile_update(namespace=NS, kind="medical", data={PROFILE_KEY: "x"})
    return session, profile


def pages(client: Client, session: MemorySession, profile: Profile) -> list[str]:
    urls = [
        "/admin/ttmemory/profile/",
        f"/admin/ttmemory/profile/{profile.pk}/change/",
        f"/admin/ttmemory/memorysession/{session.pk}/change/",
    ]
    answers = [client.get(url) for url in urls]
    assert all(answer.status_code == 200 for answer in answers)
    return [answer.content.decode() for answer in answers]


@pytest.mark.parametrize("perms", [VIEW_ALL, SUPPORT], ids=["viewer", "support, not revealed"])
def test_masked_pages_contain_no_key_names(
    staff_client: MakeClient, private: tuple[MemorySession, Profile], perms: list[str]
) -> None:
    shown = pages(staff_client(*perms), *private)

    for html in shown:
        assert PROFILE_KEY not in html and STATE_KEY not in html
    assert "1 key" in shown[0]  # how many, not which
    assert "names and values masked" in shown[2]


def test_revealing_shows_the_key_names(
    staff_client: MakeClient, private: tuple[MemorySession, Profile]
) -> None:
    session, profile = private
    client = staff_client(*SUPPORT)
    client.post(f"/admin/ttmemory/profile/{profile.pk}/reveal/", {"reason": "ticket 9"})
    client.post(f"/admin/ttmemory/memorysession/{session.pk}/reveal/", {"reason": "ticket 9"})

    _, profile_page, session_page = pages(client, session, profile)

    assert PROFILE_KEY in profile_page and STATE_KEY in session_page


@pytest.fixture
def audit_fails(db: Any) -> Iterator[None]:
    """Every insert into the audit log fails (a real database error, raised by a trigger)."""
    table = AuditEntry._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                f"CREATE TRIGGER audit_down BEFORE INSERT ON {table} "
                "BEGIN SELECT RAISE(ABORT, 'audit log unavailable'); END"
            )
        else:
            cursor.execute(
                "CREATE FUNCTION audit_down() RETURNS trigger AS $$ BEGIN "
                "RAISE EXCEPTION 'audit log unavailable'; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                f"CREATE TRIGGER audit_down BEFORE INSERT ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION audit_down()"
            )
    yield


@pytest.mark.parametrize("verb", ["correct", "forget"])
def test_correct_and_forget_change_nothing_when_their_audit_entry_cannot_be_written(
    staff_client: MakeClient, audit_fails: None, verb: str
) -> None:
    fact = memory.fact_remember(namespace=NS, text="Ada is allergic to peanuts")
    client = staff_client(*SUPPORT)
    form = {"reason": "ticket 7", "text": "Ada is allergic to shellfish"}

    with pytest.raises(DatabaseError, match="audit log unavailable"):
        client.post(f"/admin/ttmemory/fact/{fact.pk}/{verb}/", form)

    assert list(Fact.objects.values_list("pk", "superseded_by")) == [(fact.pk, None)]
    assert not AuditEntry.objects.exists()


TOOL_NAME = "cancel_subscription_for_bereavement"
LABEL = "before refunding the wedding dress"
REASON = "customer cried about the divorce"


@pytest.fixture
def tool_turn(db: Any) -> MemorySession:
    session = memory.session_open(namespace=NS, key="support")
    memory.message_add_many(
        session=session,
        messages=[
            {"role": "user", "content": "Please cancel."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call-1",
                        "type": "function",
                        "function": {"name": TOOL_NAME, "arguments": '{"plan": "gold"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call-1", "content": "cancelled"},
            {"role": "assistant", "content": "Done."},
        ],
    )
    memory.snapshot_create(session=session, label=LABEL)
    memory.session_rewind(session=session, to_seq=3, reason=REASON)
    return session


def masked_pages(client: Client, session: MemorySession) -> list[str]:
    snapshot = session.snapshots.order_by("pk").first()
    assert snapshot is not None
    urls = [
        f"/admin/ttmemory/memorysession/{session.pk}/change/",
        "/admin/ttmemory/snapshot/",
        f"/admin/ttmemory/snapshot/{snapshot.pk}/change/",
        f"/admin/ttmemory/memorysession/{session.pk}/rollback/",
        f"/admin/ttmemory/memorysession/{session.pk}/rollback/{snapshot.pk}/",
    ]
    answers = [client.get(url) for url in urls]
    assert [a.status_code for a in answers] == [200] * len(urls)
    return [a.content.decode() for a in answers]


def test_tool_names_and_snapshot_labels_are_masked_with_the_content(
    staff_client: MakeClient, tool_turn: MemorySession
) -> None:
    client = staff_client(*SUPPORT)
    for html in masked_pages(client, tool_turn):
        assert TOOL_NAME not in html and LABEL not in html and REASON not in html
    assert "/admin/ttmemory/snapshot/" in "".join(masked_pages(client, tool_turn))

    client.post(f"/admin/ttmemory/memorysession/{tool_turn.pk}/reveal/", {"reason": "ticket 9"})
    shown = masked_pages(client, tool_turn)
    assert TOOL_NAME in shown[0] and LABEL in shown[0] and REASON in shown[0]
    assert LABEL in shown[1] and LABEL in shown[2]
    reveals = AuditEntry.objects.filter(namespace=NS, action="reveal")
    assert reveals.count() == 1 and reveals.get().reason == "ticket 9"
