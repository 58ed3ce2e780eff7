"""prompt_build says why a section came back empty (PromptContext.empty), on both databases."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import TestCase

from tests.conftest import assistant, user
from ttmemory import memory

pytestmark = pytest.mark.contract

NS = "user-prompt"
CHAT = [
    user("My dentist is Dr. Alvarez, on Rua Augusta."),
    assistant("Noted, Dr. Alvarez on Rua Augusta."),
    user("What was the name of my dentist?"),
]


def chat(key: str = "today") -> Any:
    session = memory.session_open(namespace=NS, key=key)
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=CHAT)
    return session


def test_past_messages_all_in_the_window_say_so(db: Any) -> None:
    session = chat()

    built = memory.prompt_build(session=session, max_tokens=2000, episodes=2)

    # message_search found the dentist turn, but it is live in this session's window.
    assert "past_conversations" not in built.system
    assert built.empty["episodes"] == "all in window"
    assert any("Alvarez" in str(m.get("content")) for m in built.window)


def test_each_empty_section_names_its_reason(db: Any) -> None:
    session = chat()
    memory.fact_remember(namespace=NS, text="Has a cat called Miso.")

    built = memory.prompt_build(
        session=session, query="favourite opera singer", max_tokens=2000, episodes=2
    )

    assert built.empty == {
        "profile": "nothing stored",
        "state": "nothing stored",
        "memories": "nothing relevant",
        "episodes": "nothing relevant",
    }
    plain = memory.prompt_build(session=session, max_tokens=2000, memories=0)
    assert plain.empty["memories"] == "not asked" and plain.empty["episodes"] == "not asked"


def test_a_section_dropped_to_fit_says_over_budget(db: Any) -> None:
    chat(key="march")
    now = memory.session_open(namespace=NS, key="june")
    memory.message_add(session=now, message=user("What was the name of my dentist?"))
    memory.fact_remember(namespace=NS, text="The dentist is Dr. Alvarez.")
    memory.profile_update(namespace=NS, kind="user", data={"name": "Ada"})

    roomy = memory.prompt_build(session=now, max_tokens=2000, episodes=2)
    tight = memory.prompt_build(session=now, max_tokens=12, episodes=2)

    assert "memories" not in roomy.empty and "episodes" not in roomy.empty
    assert "Alvarez" in roomy.sections["episodes"]
    assert tight.empty["memories"] == "over budget"
    assert tight.empty["episodes"] == "over budget"
    assert tight.empty["profile"] == "over budget"


def test_no_query_says_so(db: Any) -> None:
    session = memory.session_open(namespace=NS, key="empty")
    memory.message_add(session=session, message=assistant("Hello! How can I help?"))

    built = memory.prompt_build(session=session, max_tokens=2000, episodes=1)

    assert built.empty["memories"] == "no query" and built.empty["episodes"] == "no query"
