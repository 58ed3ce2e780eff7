"""A fact stored without a slot (by an LLM that named none, by an earlier release, or in a form
no slot pattern read then) is superseded by a later value of the slot it says, as a slotted one
would be; a fact of another slot, or of someone else, is left alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.chat import Talk
from ttmemory import memory
from ttmemory.models import Fact

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-unslotted"


talk = Talk(NS)
chat, current = talk.chat, talk.current


def remember(text: str) -> Fact:
    """A fact stored as an LLM or an earlier release left it: no slot in its metadata."""
    return memory.fact_remember(namespace=NS, text=text)


@pytest.mark.parametrize(
    ("stored", "said", "now"),
    [
        ("The user lives in Leeds", "we just moved to Bristol", "The user lives in Bristol"),
        ("The user works at Siemens", "I joined Zalando", "The user works at Zalando"),
        ("The user is a teacher", "I work as a nurse now", "The user works as a nurse"),
        ("The user is vegan", "I'm vegetarian", "The user is vegetarian"),
        ("Der Nutzer wohnt in München", "Ich wohne jetzt in Berlin", "Der Nutzer wohnt in Berlin"),
        ("El usuario vive en Madrid", "me mudé a Valencia", "El usuario vive en Valencia"),
        ("L'utilisateur habite à Lyon", "j'habite à Nantes", "L'utilisateur habite à Nantes"),
    ],
)
def test_an_unslotted_fact_is_superseded_by_a_slotted_value_of_the_same_attribute(
    db: Any, stored: str, said: str, now: str
) -> None:
    old = remember(stored)
    assert not (old.metadata or {}).get("slot")

    chat(said)

    assert current() == [now]
    old.refresh_from_db()
    assert old.valid_to is not None and old.superseded_by is not None
    assert old.superseded_by.text == now


def test_an_unslotted_fact_of_another_attribute_or_person_stays_current(db: Any) -> None:
    remember("The user's sister lives in Leeds")
    remember("The user works at Siemens")
    remember("The user loves Bristol")

    chat("we just moved to Bristol")

    assert current() == [
        "The user lives in Bristol",
        "The user loves Bristol",
        "The user works at Siemens",
        "The user's sister lives in Leeds",
    ]


def test_a_job_left_ends_the_unslotted_employer_too(db: Any) -> None:
    old = remember("The user works at Siemens")

    chat("I quit my job")

    old.refresh_from_db()
    assert old.valid_to is not None and old.superseded_by is None
    assert current() == []
