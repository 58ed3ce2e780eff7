"""Create the demo superuser (credentials printed) and a demo conversation, once."""

from __future__ import annotations

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
            # The profile first: learned facts are about "Ada", not "The user".
            memory.profile_update(namespace=namespace, kind="user", data={"name": "Ada"})
            memory.message_add_many(session=session, messages=CONVERSATION)
            memory.snapshot_create(session=session, label="after booking")
            # What the offline extractor makes of the conversation (the LLM's, when one is set).
            session.refresh_from_db()
            session_learn(session_id=session.pk, upto_seq=session.last_seq)
            facts = memory.fact_list(namespace=namespace)
            self.stdout.write(
                f"loaded a demo conversation of {len(CONVERSATION)} messages, a snapshot, a "
                f"profile and {len(facts)} facts learned from it: "
                + "; ".join(fact.text for fact in facts)
            )
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(self.style.SUCCESS(f"admin login: {DEMO_USER} / {password}"))
        self.stdout.write(
            f"API token of {DEMO_USER}: {token.key}  (header 'Authorization: Token {token.key}'; "
            "docs at /api/memory/docs/)"
        )
