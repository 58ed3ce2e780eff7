# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of these cases)
"""What the learner reads however it is phrased (issue 35, round 5): dated plans in any words and
their loose corrections, other word orders, dropped subjects, a plain negation ending the fact
it restates (never a hedge), and a value added "too"."""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.chat import Talk
from ttmemory.longterm import statements

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-generalise"


talk = Talk(NS)


def chat(*said: str) -> list[str]:
    talk.chat(*said)
    return talk.current()


@pytest.mark.parametrize(
    ("said", "new", "old"),
    [
        (
            [
                "the meeting with my landlord is on Monday",
                "actually scratch that, he moved it to Wednesday",
            ],
            "Wednesday",
            "Monday",
        ),
        (["приём у врача во вторник", "ой, нет, в среду"], "среду", "вторник"),
        (
            ["Mein Termin beim Zahnarzt ist am Montag", "Moment, nein, am Dienstag"],
            "Dienstag",
            "Montag",
        ),
        (["周二我要去看牙医", "不对，是周四"], "周四", "周二"),
        (["la cita con el médico es el lunes", "perdón, quise decir el martes"], "martes", "lunes"),
        (
            ["mon rendez-vous chez le dentiste est jeudi", "non attends, c'est vendredi"],
            "vendredi",
            "jeudi",
        ),
        (["歯医者の予約は火曜日です", "すみません、木曜日でした"], "木曜日", "火曜日"),
    ],
)
def test_a_dated_plan_in_any_words_is_corrected_by_a_loose_correction(
    db: Any, said: list[str], new: str, old: str
) -> None:
    facts = chat(*said)
    assert [fact for fact in facts if new in fact], facts
    assert not [fact for fact in facts if old in fact], facts


def test_a_date_corrects_no_fact_that_holds_no_date(db: Any) -> None:
    assert chat("I live in Madrid", "wait no, it's Thursday") == ["The user lives in Madrid"]


@pytest.mark.parametrize(
    ("said", "current"),
    [
        (
            ["Ich arbeite bei der Telekom", "Seit Januar bin ich bei SAP"],
            "Der Nutzer arbeitet bei SAP",
        ),
        (
            ["Ich bin Lehrerin", "Inzwischen arbeite ich als Übersetzerin"],
            "Der Nutzer arbeitet als Übersetzerin",
        ),
        (["меня зовут Дима, мне 34, живу в Твери"], "Пользователь живёт в Твери"),
        (["我叫王芳，今年28岁，对海鲜过敏"], "用户对海鲜过敏"),
        (["Salut, moi c'est Hugo"], "Le prénom de l'utilisateur est Hugo"),
        (
            ["I work at Bosch", "I'm at Siemens these days, much better team"],
            "The user works at Siemens",
        ),
    ],
)
def test_other_word_orders_and_dropped_subjects_are_read(
    db: Any, said: list[str], current: str
) -> None:
    assert current in chat(*said)


def test_a_plain_negation_ends_the_fact_it_restates_and_a_hedge_ends_nothing(db: Any) -> None:
    assert (
        chat(
            "I'm allergic to penicillin",
            "turns out I'm not actually allergic to penicillin, the test was negative",
        )
        == []
    )
    assert chat("I live in Paris", "I'm not sure I live in Paris") == ["The user lives in Paris"]


def test_a_negation_ends_no_fact_it_names_only_in_part(db: Any) -> None:
    assert "The user lives in Madrid" in chat("I live in Madrid", "I don't like Madrid much")


@pytest.mark.parametrize(
    ("said", "both"),
    [
        (["I'm allergic to peanuts", "oh and to shellfish as well"], ("peanuts", "shellfish")),
        (["у меня аллергия на орехи", "и на кошек тоже"], ("орехи", "кошек")),
    ],
)
def test_a_value_added_too_stands_beside_the_fact_before_it(
    db: Any, said: list[str], both: tuple[str, str]
) -> None:
    facts = chat(*said)
    assert all(any(value in fact for fact in facts) for value in both), facts


def test_a_statement_names_the_email_slot_by_its_value(db: Any) -> None:
    found = statements.rule_statements(
        [{"role": "user", "content": "I mostly use mia.chen@gmail.com these days"}]
    )
    assert [(s.text, s.slot) for s in found] == [("The user uses mia.chen@gmail.com", "email")]


@pytest.mark.parametrize(
    "said",
    [
        "Book me a flight there on Friday, window seat.",
        "Can you reschedule my dentist appointment to next Tuesday?",
        "please find me a train tomorrow morning",
        "Buch mir bitte einen Flug am Freitag.",
        "Забронируй мне приём у врача на вторник.",
        "帮我预约周二的牙医",
        "明日の歯医者の予約をしてください。",
    ],
)
def test_a_request_to_the_assistant_with_a_date_is_no_plan(db: Any, said: str) -> None:
    assert chat(said) == []
