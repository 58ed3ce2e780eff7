"""How people actually write: e-mails kept verbatim, clause tails and fragments left out, diet
changes, new pets and new contact details followed, and Spanish, French and Japanese learned
(through ``turn_add``, read back as a later session would)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.chat import Talk
from ttmemory import memory
from ttmemory.longterm import rulebook
from ttmemory.longterm.statements import clean_value
from ttmemory.models import Fact

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-natural"


talk = Talk(NS, key="chat")
chat, current = talk.chat, talk.current


def everything() -> list[str]:
    return sorted(f.text for f in Fact.objects.filter(namespace=NS))


def recalled(query: str) -> list[str]:
    return [f.text for f in memory.fact_recall(namespace=NS, query=query, k=5).facts]


# -- never rewritten: e-mails, URLs, handles, numbers -----------------------------------------


def test_an_email_ending_in_me_is_stored_as_written(db: Any) -> None:
    chat("you can reach me at sam.r@proton.me")

    assert current() == ["The user's email is sam.r@proton.me"]
    assert "sam.r@proton.me" in " ".join(recalled("What is the user's e-mail address?"))


def test_first_person_is_rewritten_around_urls_and_handles_but_not_inside_them() -> None:
    value = clean_value("my notes at https://me.dev/my-notes and @me_too", rulebook.load("en"))

    assert value == "their notes at https://me.dev/my-notes and @me_too"


# -- clause tails and fragments ---------------------------------------------------------------


def test_a_clause_tail_is_not_stored_with_the_fact(db: Any) -> None:
    chat(
        "I live in Manchester, for context",
        "fwiw I'm allergic to shellfish, keep that in mind for the health questions",
    )

    assert current() == ["The user is allergic to shellfish", "The user lives in Manchester"]


def test_a_fragment_without_a_value_is_not_a_fact(db: Any) -> None:
    chat("I'm a developer now. I like it way more than accounting", "my job is here")

    assert current() == ["The user is a developer"]


def test_a_place_the_user_volunteers_at_is_not_their_job(db: Any) -> None:
    chat("I'm an accountant", "I volunteer at the children's hospital on weekends")

    slots = {f.text: (f.metadata or {}).get("slot") for f in memory.fact_list(namespace=NS)}
    assert slots["The user is an accountant"] == "job"
    assert [text for text, slot in slots.items() if slot in {"job", "employer"}] == [
        "The user is an accountant"
    ]


# -- changes: diet, pets, contact details -----------------------------------------------------


def test_going_vegetarian_supersedes_eating_meat(db: Any) -> None:
    chat("I eat meat, no restrictions", "update: I went vegetarian in March")

    assert current() == ["The user is vegetarian"]
    assert "The user eats meat" in everything()
    assert "meat" not in " ".join(recalled("What does the user eat?"))


def test_a_new_pet_is_added_beside_the_old_one(db: Any) -> None:
    chat("I have a cat named Miso", "oh and we also got a dog, Biscuit")

    assert current() == ["The user has a cat named Miso", "The user has a dog named Biscuit"]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (["我养了一只猫", "我们还养了一条狗"], ["用户养了一只猫", "用户养了一条狗"]),
        (
            ["猫を飼っています", "犬も飼っています"],
            ["ユーザーは犬を飼っている", "ユーザーは猫を飼っている"],
        ),
    ],
)
def test_a_second_pet_in_chinese_or_japanese_is_not_taken_for_the_first(
    db: Any, said: list[str], expected: list[str]
) -> None:
    # The subject written without a space ("用户...") and kana endings once made them alike.
    chat(*said)

    assert current() == sorted(expected)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "my address is 12 Elm Street, Leeds",
            "new address: 4 Harbour Road, Bristol",
            "The user's address is 4 Harbour Road, Bristol",
        ),
        (
            "my phone number is +44 7700 900123",
            "my new phone number is +44 7700 900456",
            "The user's phone number is +44 7700 900456",
        ),
        (
            "my telegram is @old_handle",
            "new telegram handle: @kat_writes",
            "The user's telegram handle is @kat_writes",
        ),
        (
            "my email is dana@example.com",
            "oh and my new email is dana.k@fastmail.com, the old one is dead",
            "The user's email is dana.k@fastmail.com",
        ),
    ],
)
def test_new_contact_details_supersede_the_old_ones(
    db: Any, old: str, new: str, expected: str
) -> None:
    chat(old, new)

    assert current() == [expected]
    assert len(everything()) == 2  # the old value stays in the chain


# -- Spanish, French, Japanese ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            [
                "hola! me llamo Lucía",
                "vivo en Madrid",
                "por cierto, me mudé a Valencia el mes pasado",
            ],
            ["El nombre del usuario es Lucía", "El usuario vive en Valencia"],
        ),
        (
            ["soy alérgica a los cacahuetes, así que cuidado con las recetas", "tengo un gato"],
            ["El usuario es alérgico a cacahuetes", "El usuario tiene un gato"],
        ),
        (
            ["j'habite à Paris", "au fait, j'ai déménagé à Bordeaux le mois dernier"],
            ["L'utilisateur habite à Bordeaux"],
        ),
        (
            ["je travaille chez Renault", "je travaille maintenant chez Decathlon"],
            ["L'utilisateur travaille chez Decathlon"],
        ),
        (["大阪に住んでいます", "先月、福岡に引っ越しました"], ["ユーザーは福岡に住んでいる"]),
    ],
)
def test_spanish_french_and_japanese_are_learned_and_changes_supersede(
    db: Any, said: list[str], expected: list[str]
) -> None:
    chat(*said)

    assert current() == sorted(expected)


@pytest.mark.parametrize(
    "said",
    [
        "si fuera rica viviría en Mónaco",
        "¿crees que debería mudarme a Bilbao?",
        "si j'étais riche, je vivrais à Monaco",
        "tu penses que je devrais déménager à Nice ?",
        "もし私が金持ちだったら、パリに住みたい",
        "京都に引っ越すべきですか？",  # noqa: RUF001
    ],
)
def test_hypotheticals_and_questions_are_never_facts_in_any_language(db: Any, said: str) -> None:
    chat(said)

    assert everything() == []


# -- asides after a value, dismissals, additions in Chinese (devset_natural2) -----------------


@pytest.mark.parametrize(
    ("said", "now"),
    [
        (
            ["I work at Lidl", "I quit Lidl last week, taking some time off"],
            [],
        ),
        (
            ["I'm a software engineer at IBM", "got laid off from IBM last month :("],
            ["The user is a software engineer"],
        ),
        (
            ["started a new job at Shopify last week, backend stuff mostly"],
            ["The user works at Shopify"],
        ),
        (
            ["я вегетарианка, мясо не ем уже два года"],
            ["Пользователь — вегетарианка"],
        ),
        (
            ["我养了一只狗", "最近又养了一只猫"],
            ["用户养了一只狗", "用户养了一只猫"],
        ),
    ],
)
def test_an_aside_after_a_value_is_no_part_of_it_and_two_pets_stay_two(
    db: Any, said: list[str], now: list[str]
) -> None:
    chat(*said)

    assert current() == now
