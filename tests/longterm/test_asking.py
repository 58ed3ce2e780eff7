"""A question worded unlike the stored fact finds it: routed to the slot it names in other
words (the rule files' ``[[ask]]``) and asked with the synonyms of its words (``[synonyms]``),
in several languages; and a routed question never pads its hits with unrelated facts."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ttmemory import memory
from ttmemory.longterm import asking, rulebook

pytestmark = pytest.mark.contract
NS = "user-asking"


def remember(*facts: tuple[str, str]) -> None:
    for text, slot in facts:
        memory.fact_remember(namespace=NS, text=text, metadata={"slot": slot} if slot else None)


def recalled(question: str) -> list[str]:
    return [fact.text for fact in memory.fact_recall(namespace=NS, query=question, k=5).facts]


@pytest.mark.parametrize(
    ("question", "slot"),
    [
        ("how should I address her?", "name"),
        ("where is she based these days?", "location"),
        ("what's her line of work?", "job"),
        ("где он сейчас обитает?", "location"),
        ("кем он работает?", "job"),
        ("wo ist sie zuhause?", "location"),
        ("was macht sie beruflich?", "job"),
        ("她现在住在哪个城市", "location"),
        ("où vit-elle en ce moment ?", "location"),
        ("¿a qué se dedica?", "job"),
        ("勤め先はどこですか", "employer"),
    ],
)
def test_a_question_is_routed_to_the_slot_it_names_in_other_words(question: str, slot: str) -> None:
    assert slot in asking.routed_slots(question)


@pytest.mark.parametrize(
    "question",
    [
        "HOW SHOULD I ADDRESS HER?",
        "Where Is She Based These Days?",
        "где он сейчас обитает?".upper(),
        "Was Macht Sie Beruflich?",
        "OÙ VIT-ELLE EN CE MOMENT ?",
        "她现在住在哪个城市, what's her line of work?",
        "where does she live, кем он работает?",
        "勤め先はどこですか",
        "Is there anything I should avoid on the trip?",
    ],
)
def test_routing_finds_what_every_pattern_finds_case_insensitively(question: str) -> None:
    """``routed_slots`` skips a script's patterns on a question without that script and
    matches lower-cased text case-sensitively: the slots are those of trying every language's
    every pattern, ignoring case, on the question as asked."""
    expected: list[str] = []
    for lang in rulebook.languages():
        for pattern, slot in lang.asks:
            if slot not in expected and re.search(pattern.pattern, question, re.IGNORECASE):
                expected.append(slot)
    assert asking.routed_slots(question) == expected


def test_a_question_naming_no_slot_is_asked_as_it_is() -> None:
    assert asking.expanded("tell me a joke") == "tell me a joke"


@pytest.mark.parametrize(
    ("facts", "question", "answer"),
    [
        (
            [("The user's name is Marta", "name"), ("The user likes jazz", "")],
            "how should I address her?",
            "Marta",
        ),
        (
            [("Der Nutzer wohnt in Leipzig", "location"), ("Der Nutzer mag Jazz", "")],
            "wo ist sie zuhause?",
            "Leipzig",
        ),
        (
            [("The user's mum lives in Cork", "mum location"), ("The user lives in Galway", "")],
            "where is her mother?",
            "Cork",
        ),
        (
            [("用户的妈妈是医生", "妈妈 job"), ("用户是工程师", "job")],
            "母亲做什么",
            "医生",
        ),
        (
            [("Пользователь говорит по-испански", "language"), ("Пользователь любит чай", "")],
            "иностранные языки",
            "испански",
        ),
    ],
)
def test_the_fact_a_question_asks_for_in_other_words_is_recalled(
    db: Any, facts: list[tuple[str, str]], question: str, answer: str
) -> None:
    remember(*facts)
    assert any(answer in text for text in recalled(question))


def test_a_routed_question_never_pads_its_hits_with_unrelated_facts(db: Any) -> None:
    remember(("The user likes jazz", ""), ("The user has a cat", "pet"))
    # "how old" routes to the age slot: no fact holds it, so nothing comes back.
    assert recalled("how old is she?") == []
