"""The LLM path follows change too: the prompt asks for SUPERSEDE / RETRACT / previous values /
slots and for others' facts to stay theirs, and the answers a model gives (served by the strict
fake OpenAI server) are applied: the old value is kept in the chain and never served as current."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import assistant, user
from tests.fakes.openai_server import FakeOpenAI
from tests.learning.chat import served as served_in
from tests.learning.test_change import history
from ttmemory import memory
from ttmemory.longterm import extraction
from ttmemory.models import Fact

pytestmark = pytest.mark.contract
NS = "user-llm"


@pytest.fixture
def fake(db: Any, settings: Any, monkeypatch: Any) -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        monkeypatch.setenv("TTM_TEST_OPENAI_KEY", server.api_key)
        settings.TTMEMORY = {
            **settings.TTMEMORY,
            "JOBS": "inline",
            "LLM": {
                "BACKEND": "ttmemory.backends.llm.OpenAIChatLLM",
                "OPTIONS": {
                    "base_url": server.base_url,
                    "api_key_env": "TTM_TEST_OPENAI_KEY",
                    "model": "gpt-4o-mini",
                    "retry_backoff": 0.01,
                },
            },
        }
        server.require_system_prompt(extraction.EXTRACTION_SYSTEM_PROMPT)
        yield server


def turn(fake: FakeOpenAI, said: str, *facts: dict[str, Any]) -> list[tuple[str, str]]:
    """One turn learned with the model answering ``facts``; the changes it made."""
    fake.chat_reply(json.dumps({"facts": list(facts)}))
    session = memory.session_open(namespace=NS, key="chat-1")
    result = memory.turn_add(session=session, messages=[user(said), assistant("Noted.")])
    return [(change.action, change.fact.text) for change in result.changes]


def current() -> list[str]:
    return sorted(f.text for f in memory.fact_list(namespace=NS))


def stored(text: str) -> Fact:
    [fact] = [f for f in Fact.objects.filter(namespace=NS) if f.text == text]
    return fact


def served(query: str) -> str:
    return served_in(NS, query)


def shown_facts(fake: FakeOpenAI) -> list[dict[str, Any]]:
    """The existing facts the last extraction request showed the model."""
    payload = json.loads(
        fake.requests_to("/v1/chat/completions")[-1].json["messages"][1]["content"]
    )
    facts: list[dict[str, Any]] = payload["existing_facts"]
    return facts


def test_the_prompt_asks_for_change_retraction_others_and_refusals() -> None:
    prompt = extraction.EXTRACTION_SYSTEM_PROMPT
    for asked in [
        "SUPERSEDE",
        "RETRACT",
        '"previous": true',
        "no longer",
        "sorry, I meant",
        "my sister Lena is a teacher",
        "never a fact about the user",
        "hypotheticals",
        "quoted or reported speech",
        "jokes",
        '"now"',
        "clause tails",
        '"slot"',
    ]:
        assert asked in prompt


def test_the_model_sees_the_users_earlier_messages_to_know_whom_a_pronoun_means(
    fake: FakeOpenAI,
) -> None:
    assert "earlier_user_messages" in extraction.EXTRACTION_SYSTEM_PROMPT
    turn(
        fake,
        "My sister Anna lives in Leeds.",
        {
            "action": "ADD",
            "text": "The user's sister Anna lives in Leeds",
            "slot": "sister anna location",
        },
    )
    leeds = stored("The user's sister Anna lives in Leeds")

    turn(
        fake,
        "She moved to York last year.",
        {"action": "SUPERSEDE", "text": "The user's sister Anna lives in York",
         "target_id": leeds.pk, "slot": "sister anna location"},
    )  # fmt: skip

    payload = json.loads(
        fake.requests_to("/v1/chat/completions")[-1].json["messages"][1]["content"]
    )
    assert payload["earlier_user_messages"] == ["My sister Anna lives in Leeds."]
    assert [m["content"] for m in payload["new_messages"] if m["role"] == "user"] == [
        "She moved to York last year."
    ]
    assert current() == ["The user's sister Anna lives in York"]
    leeds.refresh_from_db()
    assert history(leeds) == [
        "The user's sister Anna lives in Leeds",
        "The user's sister Anna lives in York",
    ]


def test_a_move_supersedes_the_shown_fact_and_the_chain_keeps_it(fake: FakeOpenAI) -> None:
    turn(fake, "I live in Paris.", {"action": "ADD", "text": "The user lives in Paris"})
    paris = stored("The user lives in Paris")

    changes = turn(
        fake,
        "I moved from Paris to Berlin last month",
        {"action": "SUPERSEDE", "text": "The user lives in Berlin", "target_id": paris.pk},
    )

    assert {"id": paris.pk, "text": "The user lives in Paris"} in shown_facts(fake)
    assert changes == [("SUPERSEDE", "The user lives in Berlin")]
    assert current() == ["The user lives in Berlin"]
    paris.refresh_from_db()
    assert (
        paris.superseded_by is not None and paris.superseded_by.text == "The user lives in Berlin"
    )
    assert "Paris" not in served("Where does the user live?")


def test_a_previous_value_is_kept_as_history_before_the_new_one(fake: FakeOpenAI) -> None:
    changes = turn(
        fake,
        "I moved from Paris to Berlin last month",
        {"action": "ADD", "text": "The user lives in Paris", "slot": "location", "previous": True},
        {"action": "ADD", "text": "The user lives in Berlin now", "slot": "location"},
    )

    assert changes == [
        ("ADD", "The user lives in Paris"),
        ("SUPERSEDE", "The user lives in Berlin"),
    ]
    assert current() == ["The user lives in Berlin"]
    assert (
        stored("The user lives in Paris").superseded_by_id == stored("The user lives in Berlin").pk
    )


def test_a_previous_value_is_not_stored_over_a_current_one(fake: FakeOpenAI) -> None:
    turn(fake, "I live in Lyon.", {"action": "ADD", "text": "The user lives in Lyon"})

    turn(
        fake,
        "I moved from Paris to Berlin",
        {"action": "ADD", "text": "The user lives in Paris", "slot": "location", "previous": True},
        {"action": "ADD", "text": "The user lives in Berlin", "slot": "location"},
    )

    assert current() == ["The user lives in Berlin"]
    assert (
        stored("The user lives in Lyon").superseded_by_id == stored("The user lives in Berlin").pk
    )
    assert [
        f for f in Fact.objects.filter(namespace=NS) if f.text == "The user lives in Paris"
    ] == []


def test_a_retraction_with_its_target_ends_the_fact(fake: FakeOpenAI) -> None:
    turn(
        fake,
        "I'm allergic to peanuts.",
        {"action": "ADD", "text": "The user is allergic to peanuts"},
    )
    allergy = stored("The user is allergic to peanuts")

    changes = turn(
        fake,
        "I'm not allergic to peanuts anymore",
        {"action": "RETRACT", "text": "The user is allergic to peanuts", "target_id": allergy.pk},
    )

    assert changes == [("RETRACT", "The user is allergic to peanuts")]
    assert current() == []
    allergy.refresh_from_db()
    assert allergy.valid_to is not None and allergy.superseded_by is None  # history, not current
    assert "peanuts" not in served("Is the user allergic to peanuts?")


def test_a_retraction_without_a_target_ends_the_fact_saying_the_same(fake: FakeOpenAI) -> None:
    turn(
        fake,
        "I work at Siemens. I play tennis.",
        {"action": "ADD", "text": "The user works at Siemens"},
        {"action": "ADD", "text": "The user plays tennis"},
    )

    turn(fake, "I left Siemens", {"action": "RETRACT", "text": "The user works at Siemens"})

    assert current() == ["The user plays tennis"]


def test_a_supersede_without_a_target_replaces_the_closest_fact_of_another_value(
    fake: FakeOpenAI,
) -> None:
    turn(fake, "I prefer window seats.", {"action": "ADD", "text": "The user prefers window seats"})

    turn(
        fake,
        "Actually I prefer aisle seats now",
        {"action": "SUPERSEDE", "text": "The user prefers aisle seats now", "target_id": None},
    )

    assert current() == ["The user prefers aisle seats"]
    assert stored("The user prefers window seats").superseded_by is not None


def test_the_models_slot_supersedes_in_any_language(fake: FakeOpenAI) -> None:
    turn(
        fake,
        "Я живу в Москве.",
        {"action": "ADD", "text": "Пользователь живёт в Москве", "slot": "location"},
    )

    turn(
        fake,
        "Я переехал из Москвы в Казань.",
        {"action": "ADD", "text": "Пользователь живёт в Казани", "slot": "location"},
    )

    assert current() == ["Пользователь живёт в Казани"]
    assert stored("Пользователь живёт в Москве").superseded_by is not None


def test_a_fact_about_someone_close_stays_theirs(fake: FakeOpenAI) -> None:
    turn(fake, "I work as a nurse.", {"action": "ADD", "text": "The user works as a nurse"})

    turn(
        fake,
        "My sister Lena is a teacher",
        {"action": "ADD", "text": "The user's sister Lena is a teacher", "kind": "fact"},
    )

    assert current() == ["The user works as a nurse", "The user's sister Lena is a teacher"]
    assert stored("The user's sister Lena is a teacher").metadata == {"slot": "sister lena job"}


def test_what_must_not_be_a_fact_is_refused_even_when_the_model_proposes_it(
    fake: FakeOpenAI,
) -> None:
    changes = turn(
        fake,
        "If I moved to Tokyo I'd learn Japanese. Do I live in Paris? lol",
        {"action": "ADD", "text": "If the user moved to Tokyo they would learn Japanese"},
        {"action": "ADD", "text": "Does the user live in Paris?"},
        {
            "action": "ADD",
            "text": "The user is allergic to peanuts, so careful with the dessert recipes",
        },
    )

    assert changes == [("ADD", "The user is allergic to peanuts")]
    assert current() == ["The user is allergic to peanuts"]


def test_a_new_value_under_another_name_of_the_slot_supersedes_the_old(fake: FakeOpenAI) -> None:
    # The model names the slot its own way ("current city", "occupation") and answers ADD with
    # no target: the slot registry reads the name, and a single-valued slot's new value
    # supersedes the current one however it was said.
    turn(fake, "I live in Paris.", {"action": "ADD", "text": "The user lives in Paris"})
    turn(fake, "I'm a teacher.", {"action": "ADD", "text": "The user is a teacher"})

    turn(
        fake,
        "these days home is Berlin, and I retrained as a nurse",
        {"action": "ADD", "text": "The user is now based in Berlin", "slot": "current_city"},
        {"action": "ADD", "text": "The user retrained as a nurse", "slot": "Occupation"},
    )

    assert current() == ["The user is based in Berlin", "The user retrained as a nurse"]
    assert history(stored("The user lives in Paris")) == [
        "The user lives in Paris",
        "The user is based in Berlin",
    ]
    assert stored("The user is based in Berlin").metadata == {"slot": "location"}
    assert "Paris" not in served("Where does the user live?")


def test_a_count_or_an_opposite_the_model_adds_without_a_target_supersedes(
    fake: FakeOpenAI,
) -> None:
    """The model often answers ADD for a new count or the opposite of a value; the one place
    that decides supersedes the old fact as it does for the offline rules."""
    turn(
        fake,
        "I have three cats. I drink coffee every morning.",
        {"action": "ADD", "text": "The user has three cats"},
        {"action": "ADD", "text": "The user drinks coffee every morning", "value": "coffee"},
    )

    turn(fake, "We're down to two cats", {"action": "ADD", "text": "The user has two cats"})
    turn(
        fake,
        "I don't drink coffee",
        {"action": "ADD", "text": "The user does not drink coffee", "value": "coffee"},
    )

    assert current() == ["The user does not drink coffee", "The user has two cats"]
    assert stored("The user has three cats").superseded_by is not None
