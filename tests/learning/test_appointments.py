"""Appointments and the corrections that follow them: a dated appointment is a fact with its
own slot ("dentist appointment"), and "sorry, I meant Friday" said in a later turn supersedes it,
in every language of the offline rules."""

# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point)

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.chat import Talk
from ttmemory.longterm import statements
from ttmemory.models import Fact

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-appointments"


talk = Talk(NS)
chat, current = talk.chat, talk.current


def ended() -> list[str]:
    return sorted(f.text for f in Fact.objects.filter(namespace=NS) if f.valid_to is not None)


@pytest.mark.parametrize(
    ("said", "now", "before"),
    [
        (
            ["I have a dentist appointment on Thursday", "sorry, I meant Friday"],
            "The user has a dentist appointment on Friday",
            "The user has a dentist appointment on Thursday",
        ),
        (
            ["my haircut is booked for Wednesday at 5", "oops, Thursday at 5"],
            "The user's haircut is booked for Thursday at 5",
            "The user's haircut is booked for Wednesday at 5",
        ),
        (
            ["my dentist appointment is on Monday", "I'm vegetarian", "sorry, I meant Tuesday"],
            "The user's dentist appointment is on Tuesday",
            "The user's dentist appointment is on Monday",
        ),
        (
            ["у меня запись к врачу в понедельник", "ой, перепутала, во вторник"],
            # The preposition is the one said with the old day (known limit, docs/memory.md).
            "У пользователя запись к врачу в вторник",
            "У пользователя запись к врачу в понедельник",
        ),
        (
            ["Mein Zahnarzttermin ist am Mittwoch", "Sorry, ich meinte Donnerstag"],
            "Zahnarzttermin des Nutzers ist am Donnerstag",
            "Zahnarzttermin des Nutzers ist am Mittwoch",
        ),
        (
            ["我周三要去看牙医", "不好意思，说错了，是周四"],
            "用户周四要去看牙医",
            "用户周三要去看牙医",
        ),
        (
            ["tengo cita con el médico el lunes", "perdón, quise decir el martes"],
            "El usuario tiene cita con el médico el martes",
            "El usuario tiene cita con el médico el lunes",
        ),
        (
            ["j'ai rendez-vous chez le coiffeur jeudi", "pardon, vendredi"],
            "L'utilisateur a rendez-vous chez le coiffeur vendredi",
            "L'utilisateur a rendez-vous chez le coiffeur jeudi",
        ),
        (
            ["月曜日に歯医者の予約があります", "すみません、火曜日でした"],
            "ユーザーは火曜日に歯医者の予約がある",
            "ユーザーは月曜日に歯医者の予約がある",
        ),
    ],
)
def test_a_later_correction_supersedes_the_appointment_it_corrects(
    db: Any, said: list[str], now: str, before: str
) -> None:
    chat(*said)

    assert now in current()
    assert before in ended()
    [fact] = [f for f in Fact.objects.filter(namespace=NS) if f.text == before]
    assert fact.superseded_by is not None and fact.superseded_by.text == now


def test_an_appointment_has_its_own_slot_so_two_appointments_stay_apart(db: Any) -> None:
    chat(
        "I have a dentist appointment on Thursday",
        "my haircut is booked for Saturday at 10",
        "I have a dentist appointment on Friday now",
    )

    assert current() == [
        "The user has a dentist appointment on Friday",
        "The user's haircut is booked for Saturday at 10",
    ]


def test_an_appointment_without_a_date_and_other_passing_things_are_not_facts(db: Any) -> None:
    chat(
        "I have an appointment with my dentist",
        "my flight was delayed",
        "I have a question about my order",
    )

    assert current() == []


def test_a_dated_correction_replaces_the_word_of_its_class() -> None:
    fact = "The user has a dentist appointment on Thursday"
    assert statements.correct_value(fact, "Friday") == (
        "The user has a dentist appointment on Friday"
    )
    assert statements.correct_value(fact, "el viernes", by_class_only=True) == fact
    assert statements.correct_value(fact, "on Friday", by_class_only=True) == (
        "The user has a dentist appointment on Friday"
    )
    assert statements.correct_value("The user is vegetarian", "Friday", by_class_only=True) == (
        "The user is vegetarian"
    )
    assert statements.correct_value("The user is 34 years old", "43") == "The user is 43 years old"
