# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of several cases)
"""A close person referred to by a pronoun in a later message ("My sister Anna lives in Leeds."
... "She moved to York last year."): the fact changes for the person meant, never for the user,
and with no one (or two) the pronoun could mean nothing about the user is stored (learned
through ``turn_add``, one turn at a time, asked in a later session)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.chat import Talk
from ttmemory.models import Fact

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-pronouns"

talk = Talk(NS)
chat, current, served, chain = talk.chat, talk.current, talk.served, talk.chain


def every() -> list[str]:
    """Every fact stored in the namespace, current or not."""
    return sorted(f.text for f in Fact.objects.filter(namespace=NS))


def test_she_in_a_later_message_moves_the_sister_and_leaves_the_users_city(db: Any) -> None:
    chat("My sister Anna lives in Leeds. I live in Manchester.", "She moved to York last year.")

    assert current() == ["The user lives in Manchester", "The user's sister Anna lives in York"]
    assert chain("The user's sister Anna lives in Leeds") == [
        "The user's sister Anna lives in Leeds",
        "The user's sister Anna lives in York",
    ]
    told = served("Where does the user's sister live now?")
    assert "York" in told and "Leeds" not in told
    assert "The user lives in York" not in every()


@pytest.mark.parametrize(
    ("said", "now", "before"),
    [
        (
            ["my son is 7", "he turned 8 last week"],
            ["The user's son is 8 years old"],
            "The user's son is 7 years old",
        ),
        (
            ["My brother Tom works at Google", "I'm a teacher", "he just started at Amazon"],
            ["The user is a teacher", "The user's brother Tom works at Amazon"],
            "The user's brother Tom works at Google",
        ),
        (
            ["Моя сестра Аня живёт в Казани", "Она недавно переехала в Самару"],
            ["Сестра пользователя Аня переехала в Самару"],
            "Сестра пользователя Аня живёт в Казани",
        ),
        (["我姐姐住在北京", "她去年搬到了上海"], ["用户的姐姐住在上海"], "用户的姐姐住在北京"),
        (
            ["Mein Bruder Jonas wohnt in Hamburg", "Er ist letztes Jahr nach Bremen gezogen"],
            ["Bruder des Nutzers Jonas wohnt in Bremen"],
            "Bruder des Nutzers Jonas wohnt in Hamburg",
        ),
        (
            ["Mi hermana Lucía vive en Sevilla", "Ella se mudó a Valencia hace poco"],
            ["Hermana del usuario Lucía vive en Valencia"],
            "Hermana del usuario Lucía vive en Sevilla",
        ),
        (
            ["My sister Kate is a lawyer.", "Oh and she just became a judge"],
            ["The user's sister Kate is a judge"],
            "The user's sister Kate is a lawyer",
        ),
        (
            ["Ma fille a 10 ans", "Elle vient d'avoir 11 ans"],
            ["Fille de l'utilisateur a 11 ans"],
            "Fille de l'utilisateur a 10 ans",
        ),
    ],
)
def test_a_pronoun_changes_the_fact_of_the_close_person_it_means_in_every_language(
    db: Any, said: list[str], now: list[str], before: str
) -> None:
    chat(*said)

    assert current() == now
    assert chain(before)[-1] in now  # the old value stays in the supersede chain


def test_a_close_persons_second_allergy_said_with_a_pronoun_stands_beside_the_first(
    db: Any,
) -> None:
    chat("My daughter Lily is allergic to eggs", "she's also allergic to milk")

    told = served("What is Lily allergic to?")
    assert "eggs" in told and "milk" in told
    assert not any(text.startswith("The user is") for text in every())


def test_a_pronoun_with_no_close_person_named_before_stores_nothing(db: Any) -> None:
    chat("I live in Munich", "he moved to Berlin last year")

    assert every() == ["The user lives in Munich"]


def test_a_pronoun_means_the_last_close_person_whose_gender_fits(db: Any) -> None:
    chat("My brother Tom lives in Paris. My wife is a nurse.", "He moved to Lyon.")

    assert current() == ["The user's brother Tom lives in Lyon", "The user's wife is a nurse"]


def test_two_close_persons_a_pronoun_could_mean_leave_it_unread(db: Any) -> None:
    chat("My sister Eva lives in Rome. My mom lives in Oslo.", "She moved to Milan.")

    assert not any("Milan" in text for text in every())
    assert "The user's sister Eva lives in Rome" in current()


@pytest.mark.parametrize(
    ("said", "now"),
    [
        (
            ["My sister Anna lives in Leeds", "Last year she moved to York."],
            ["The user's sister Anna lives in York"],
        ),
        (
            ["Моя сестра Аня живёт в Казани", "В прошлом году она переехала в Самару"],
            ["Сестра пользователя Аня переехала в Самару"],
        ),
        (["我姐姐住在北京", "去年她搬到了上海"], ["用户的姐姐住在上海"]),
        (
            ["Mein Bruder Jonas wohnt in Hamburg", "Letztes Jahr ist er nach Bremen gezogen"],
            ["Bruder des Nutzers Jonas wohnt in Bremen"],
        ),
        (
            ["Ma sœur Claire habite à Lille", "L'année dernière, elle a déménagé à Nantes"],
            ["Sœur de l'utilisateur Claire habite à Nantes"],
        ),
    ],
)
def test_a_time_said_before_the_pronoun_still_means_the_close_person(
    db: Any, said: list[str], now: list[str]
) -> None:
    chat(*said)

    assert current() == now


@pytest.mark.parametrize(
    "said",
    [
        "Letztes Jahr ist er nach Bremen gezogen",
        "去年她搬到了上海",
        "В прошлом году она переехала в Самару",
        "L'année dernière, elle a déménagé à Nantes",
    ],
)
def test_a_pronoun_after_a_time_with_no_one_named_is_never_the_users_move(
    db: Any, said: str
) -> None:
    chat(said)

    assert every() == []
