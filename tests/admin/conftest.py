"""Fixtures of the admin console tests: staff members with chosen permissions, a conversation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.models import Fact, MemorySession, Snapshot

VIEW_ALL = [
    "view_memorysession",
    "view_snapshot",
    "view_fact",
    "view_profile",
    "view_auditentry",
    "view_ledgerentry",
    "view_apikey",
]
# What docs/admin.md suggests for a support agent's group.
SUPPORT = [*VIEW_ALL, "rollback_memorysession", "reveal_content", "change_fact", "delete_fact"]

NAMESPACE = "user-42"
GOOD_TEXT = "Sunny in Lisbon tomorrow, 24 degrees."
BAD_TEXT = "I booked you a flight to Paris instead."
TOOL_RESULT_TEXT = '{"forecast": "sunny", "high_c": 24}'

MakeClient = Callable[..., Client]


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    """Staff logins in these tests need no slow password hashing."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff_client(db: Any, django_user_model: Any) -> MakeClient:
    """``staff_client(*codenames)``: a logged-in staff member with exactly these permissions."""
    made = 0

    def make(*codenames: str, username: str = "") -> Client:
        nonlocal made
        made += 1
        person = django_user_model.objects.create_user(
            username=username or f"agent{made}", password=None, is_staff=True
        )
        perms = Permission.objects.filter(
            content_type__app_label="ttmemory", codename__in=codenames
        )
        assert perms.count() == len(set(codenames)), "unknown permission codename"
        person.user_permissions.add(*perms)
        client = Client()
        client.force_login(person)
        client.user = person  # type: ignore[attr-defined]
        return client

    return make


@pytest.fixture
def support_client(staff_client: MakeClient) -> Client:
    return staff_client(*SUPPORT, username="sam")


@dataclass
class Conversation:
    session: MemorySession
    good: Snapshot
    bad_fact: Fact
    kept_fact: Fact


@pytest.fixture
def conversation(db: Any) -> Conversation:
    """Seven good messages (one tool call with its result), a snapshot, then a bad turn."""
    session = memory.session_open(namespace=NAMESPACE, key="lisbon-trip")
    memory.message_add_many(
        session=session,
        messages=[
            {"role": "system", "content": "You are a travel assistant."},
            user("Hi, I am Ada and I am allergic to peanuts."),
            assistant("Noted, Ada: no peanuts."),
            user("What is the weather in Lisbon tomorrow?"),
            tool_call(["call_weather"], name="get_weather"),
            tool_result("call_weather", TOOL_RESULT_TEXT),
            assistant(GOOD_TEXT),
        ],
    )
    good = memory.snapshot_create(session=session, label="before booking")
    memory.message_add_many(session=session, messages=[user("Book Lisbon."), assistant(BAD_TEXT)])
    kept = memory.fact_remember(
        namespace=NAMESPACE, text="Ada is allergic to peanuts", source=(session, [2])
    )
    bad = memory.fact_remember(
        namespace=NAMESPACE, text="Ada flies to Paris on Friday", source=(session, [9])
    )
    session.refresh_from_db()
    return Conversation(session=session, good=good, bad_fact=bad, kept_fact=kept)


def session_url(session: MemorySession) -> str:
    return f"/admin/ttmemory/memorysession/{session.pk}/change/"


def rollback_url(session: MemorySession, snapshot: Snapshot) -> str:
    return f"/admin/ttmemory/memorysession/{session.pk}/rollback/{snapshot.pk}/"


def undo_url(session: MemorySession, snapshot: Snapshot) -> str:
    return f"/admin/ttmemory/memorysession/{session.pk}/undo/{snapshot.pk}/"


def page(response: Any) -> str:
    return response.content.decode()
