"""Create the demo superuser (credentials printed) and demo data that shows the product, once.

A conversation with a rollback story (a wrong turn undone, the safety snapshot kept), a learned
profile with a superseded fact (Lisbon, then Porto), an episodic search over past messages and a
session under legal hold; then the admin login and three URLs to open.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from rest_framework.authtoken.models import Token

from ttmemory import memory
from ttmemory.services.learning import session_learn

DEMO_USER = "demo"

CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful travel assistant. Be brief."},
    {"role": "user", "content": "Hi! I'm Ada. I'm allergic to peanuts and I prefer window seats."},
    {"role": "assistant", "content": "Nice to meet you, Ada. Noted: no peanuts, window seats."},
    {"role": "user", "content": "What's the weather in Lisbon tomorrow?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_weather_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_weather_1",
        "content": '{"forecast": "sunny", "high_c": 24}',
    },
    {"role": "assistant", "content": "Sunny in Lisbon tomorrow, up to 24 °C. ☀️"},
    {"role": "user", "content": "Book me a flight there on Friday, window seat please."},
    {"role": "assistant", "content": "Done: Friday 09:40 to Lisbon, seat 14A (window)."},
]
# The wrong turn a support agent rolls back: the model cancelled what nobody asked to cancel.
WRONG_TURN: list[dict[str, Any]] = [
    {"role": "user", "content": "Is there a vegetarian meal on that flight?"},
    {"role": "assistant", "content": "I cancelled your Friday flight and booked a meal."},
]
# Another day: where Ada lives, then news that changes it (the old fact is superseded).
MOVING: list[list[dict[str, Any]]] = [
    [{"role": "user", "content": "I live in Lisbon."}],
    [{"role": "user", "content": "Big news: I moved to Porto last week."}],
]
COMPLAINT: list[dict[str, Any]] = [
    {"role": "user", "content": "I was charged twice for the Friday flight."},
    {"role": "assistant", "content": "I'm sorry. I've opened ticket 4711 for a refund."},
]


class Command(BaseCommand):
    help = "Create the demo superuser and load a demo conversation (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        password_file = settings.BASE_DIR / ".data" / "demo-password.txt"
        user_model = get_user_model()
        if password_file.exists():
            password = password_file.read_text().strip()
        else:
            password = secrets.token_urlsafe(12)
            password_file.parent.mkdir(parents=True, exist_ok=True)
            password_file.write_text(password + "\n")
        user, _ = user_model.objects.get_or_create(
            username=DEMO_USER, defaults={"is_staff": True, "is_superuser": True}
        )
        user.set_password(password)
        user.save()

        # The API's default resolver gives each user the namespace "user-<pk>": seed the demo
        # user's own, so the API (logged in as demo) shows this conversation.
        namespace = f"user-{user.pk}"
        session = memory.session_open(namespace=namespace, key="lisbon-trip")
        if session.message_count == 0:
            self.seed(namespace, session)
        token, _ = Token.objects.get_or_create(user=user)
        base = f"http://127.0.0.1:{os.environ.get('PORT', '8000')}"
        self.stdout.write(self.style.SUCCESS(f"admin login: {DEMO_USER} / {password}"))
        self.stdout.write(
            f"API token of {DEMO_USER}: {token.key}  (header 'Authorization: Token {token.key}')"
        )
        self.stdout.write("open:")
        self.stdout.write(
            f"  {base}/admin/ttmemory/memorysession/{session.pk}/change/  the conversation: "
            "its snapshots, the rolled-back turn, rewind and fork"
        )
        self.stdout.write(
            f"  {base}/admin/ttmemory/fact/?namespace={namespace}  what was learned, "
            "with the superseded fact"
        )
        self.stdout.write(f"  {base}/api/memory/docs/  the REST API, an example per endpoint")

    def seed(self, namespace: str, session: Any) -> None:
        # The profile first: learned facts are about "Ada", not "The user".
        memory.profile_update(namespace=namespace, kind="user", data={"name": "Ada"})
        memory.message_add_many(session=session, messages=CONVERSATION)
        good = memory.snapshot_create(session=session, label="after booking")
        # What the offline extractor makes of the conversation (the LLM's, when one is set).
        session.refresh_from_db()
        session_learn(session_id=session.pk, upto_seq=session.last_seq)
        facts = memory.fact_list(namespace=namespace)
        self.stdout.write(
            f"a conversation of {len(CONVERSATION)} messages, a snapshot and {len(facts)} facts "
            "learned from it: " + "; ".join(fact.text for fact in facts)
        )

        # The rollback story: a wrong turn, undone; the safety snapshot can undo the undo.
        memory.message_add_many(session=session, messages=WRONG_TURN)
        memory.snapshot_rollback(session=session, snapshot=good)
        self.stdout.write(
            f"rolled back {len(WRONG_TURN)} messages (the model cancelled a flight nobody asked "
            "to cancel); the safety snapshot it took undoes the rollback"
        )

        # A learned fact superseded by news: both kept, the old one ended.
        later = memory.session_open(namespace=namespace, key="moving-news")
        for turn in MOVING:
            memory.message_add_many(session=later, messages=turn)
            later.refresh_from_db()
            session_learn(session_id=later.pk, upto_seq=later.last_seq)
        changed = memory.fact_list(namespace=namespace, include_superseded=True)
        texts = {fact.pk: fact.text for fact in changed}
        superseded = [
            f"'{fact.text}' -> '{texts.get(fact.superseded_by_id, '?')}'"
            for fact in changed
            if fact.superseded_by_id
        ]
        self.stdout.write(f"superseded by news (old -> current): {'; '.join(superseded)}")

        # Episodic recall: past messages of every session, found by what they said.
        (hit,) = memory.message_search(namespace=namespace, query="where did Ada move", k=1)
        self.stdout.write(
            f"episodic search 'where did Ada move': {hit.message['content']!r} "
            f"({hit.session.key} #{hit.seq})"
        )

        # A session under legal hold: nothing of it can be deleted until the hold is lifted.
        complaint = memory.session_open(namespace=namespace, key="refund-dispute")
        memory.message_add_many(session=complaint, messages=COMPLAINT)
        memory.legal_hold_place(
            namespace=namespace, session=complaint, reason="ticket 4711: refund dispute"
        )
        self.stdout.write("legal hold on the session 'refund-dispute' (ticket 4711)")
