"""Plain first-person statements no rule reads ("I play the cello in a community orchestra"):
kept in their own words in third person, found again by a question, replaced when the user says
otherwise, while chit-chat, wishes and passing states stay unstored, in every language of the
offline rules (``[plain]`` in each rule file)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.chat import Talk
from ttmemory import memory
from ttmemory.longterm import statements

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-plain"

talk = Talk(NS)
chat, current = talk.chat, talk.current


@pytest.mark.parametrize(
    ("said", "fact", "question"),
    [
        (
            "I work night shifts at the hospital, so mornings are rough",
            "The user works night shifts at the hospital",
            "when does the user work",
        ),
        ("I'm left-handed, by the way", "The user is left-handed", "is the user left-handed"),
        ("Я ношу контактные линзы", "Пользователь носит контактные линзы", "линзы"),
        ("Ich fahre einen alten Passat", "Der Nutzer fährt einen alten Passat", "Passat"),
        ("Катаюсь на сноуборде", "Пользователь катается на сноуборде", "сноуборде"),
        (
            "Jeden Morgen schwimme ich im See",
            "Der Nutzer schwimmt jeden Morgen im See",
            "See",
        ),
        ("Je joue du violon le soir", "L'utilisateur joue du violon le soir", "violon"),
        (
            "Ich wohne mit meiner Freundin in einer WG",
            "Der Nutzer wohnt mit seiner Freundin in einer WG",
            "WG",
        ),
        ("Toco el saxofón en una banda", "El usuario toca el saxofón en una banda", "saxofón"),
        ("我在大连长大", "用户在大连长大", "大连"),
        ("私はバイオリンを弾きます", "ユーザーはバイオリンを弾きます", "バイオリン"),
        ("孫が三人います", "ユーザーは孫が三人います", "孫"),
    ],
)
def test_a_plain_statement_is_kept_in_its_own_words_and_recalled(
    db: Any, said: str, fact: str, question: str
) -> None:
    chat(said)

    assert current() == [fact]
    recalled = memory.fact_recall(namespace=NS, query=question, k=5).facts
    assert [f.text for f in recalled][:1] == [fact]


@pytest.mark.parametrize(
    "said",
    [
        ["I'm fine, thanks for asking", "I think so", "I'm back", "I was just wondering"],
        ["I guess", "haha ok", "I'm so tired", "I'd love to visit Peru someday"],
        ["I want to learn the banjo", "I'm thinking of getting a parrot", "I have a question"],
        ["I'm at the airport", "I have a headache today", "I basically live at the gym lol"],
        ["I'm impressed", "I'm all set", "I give up", "I do think so", "I have lost interest"],
        ["Я думаю, да", "Я вернулся", "Я хочу побывать в Перу"],
        ["Ich glaube schon", "Ich bin wieder da", "Ich möchte irgendwann nach Peru"],
        ["Je pense que oui", "Je suis de retour", "J'aimerais visiter le Pérou"],
        ["Creo que sí", "Estoy bien, gracias", "Me gustaría ir a Perú"],
        ["我觉得是吧", "我回来了", "我想去秘鲁旅游", "我同意", "我在看电视"],
        ["そう思います", "いつかペルーに行きたいです"],
    ],
)
def test_chit_chat_wishes_and_passing_states_are_not_stored(db: Any, said: list[str]) -> None:
    chat(*said)

    assert current() == []


def test_a_move_from_one_city_to_another_leaves_only_the_new_one_current(db: Any) -> None:
    chat("I moved from Paris to Berlin last year")

    assert current() == ["The user lives in Berlin"]


@pytest.mark.parametrize(
    ("said", "now"),
    [
        (["I commute by bus", "these days I commute by bike"], "The user commutes by bike"),
        (
            ["I drink coffee every morning", "actually I drink green tea every morning now"],
            "The user drinks green tea every morning",
        ),
    ],
)
def test_a_new_plain_value_said_as_a_change_replaces_the_old_one(
    db: Any, said: list[str], now: str
) -> None:
    chat(*said)

    assert current() == [now]


def test_a_plain_clause_beside_a_correction_is_its_aside_not_a_fact(db: Any) -> None:
    chat("I speak German", "same for Dutch, I grew up near the border")

    assert current() == ["The user speaks Dutch", "The user speaks German"]


def test_a_plain_statement_takes_the_slot_its_words_name() -> None:
    found = statements.rule_statements(
        [{"role": "user", "content": "I play the bassoon in a brass band"}]
    )

    assert [(s.text, s.slot) for s in found] == [
        ("The user plays the bassoon in a brass band", "hobby")
    ]


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("my daughter plays the violin", "The user's daughter plays the violin"),
        ("Моя дочь играет на скрипке", "Дочь пользователя играет на скрипке"),
        ("Ma fille joue du violon", "Fille de l'utilisateur joue du violon"),
        ("我女儿弹钢琴", "用户的女儿弹钢琴"),
    ],
)
def test_a_habit_of_someone_of_the_users_is_theirs_never_the_users(
    db: Any, said: str, fact: str
) -> None:
    chat(said)

    assert current() == [fact]
    assert [s.slot for s in statements.rule_statements([{"role": "user", "content": said}])] == [""]


@pytest.mark.parametrize(
    ("said", "now"),
    [
        (
            ["I drive a Ford Focus", "I sold the Focus last month and bought a Tesla"],
            [],
        ),
        (
            ["I play badminton on Tuesdays", "I gave up badminton, now I do yoga"],
            ["The user does yoga"],
        ),
        (["Я езжу на старой машине", "Я продал машину"], []),
        (["Ich fahre einen alten Opel", "Ich habe den Opel verkauft"], []),
        (["Je joue au tennis le samedi", "J'ai arrêté le tennis"], []),
        (["我开一辆旧车", "我把车卖了"], []),
    ],
)
def test_something_given_up_ends_the_plain_fact_naming_it(
    db: Any, said: list[str], now: list[str]
) -> None:
    chat(*said)

    assert current() == now


def test_what_the_user_used_to_do_ends_the_fact_and_the_new_habit_is_kept(db: Any) -> None:
    chat("I drink coffee every morning", "I used to drink coffee, now I drink tea")

    assert current() == ["The user drinks tea"]


def test_with_plain_statements_off_only_what_a_rule_reads_is_stored(db: Any, settings: Any) -> None:
    """``LEARN_PLAIN_STATEMENTS = False``: the plain statement is not kept, a rule's fact is."""
    settings.TTMEMORY = {**settings.TTMEMORY, "LEARN_PLAIN_STATEMENTS": False}
    chat("I commute by bike. I'm allergic to peanuts.")

    assert current() == ["The user is allergic to peanuts"]
    settings.TTMEMORY = {**settings.TTMEMORY, "LEARN_PLAIN_STATEMENTS": True}
    chat("I commute by bike.")

    assert current() == ["The user commutes by bike", "The user is allergic to peanuts"]
