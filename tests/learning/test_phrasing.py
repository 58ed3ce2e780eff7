# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of these tests)
"""Round 6's general mechanisms, each in several languages: a lead-in before a colon, a subject
dropped after "and", corrections naming the old value or said after a sentence that only
announces them, corrections in languages written without spaces, languages spoken (and added),
a diet given up in Chinese. Each case also says what must not happen."""

from __future__ import annotations

import pytest

from tests.learning.chat import Talk

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-phrasing"

talk = Talk(NS)
chat, current = talk.chat, talk.current


@pytest.mark.parametrize(
    ("said", "learned"),
    [
        ("Коротко о себе: меня зовут Олег", "Имя пользователя — Олег"),
        ("简单介绍一下：我叫李娜", "用户的名字是李娜"),
        ("Pour info : je m'appelle Claire", "Le prénom de l'utilisateur est Claire"),
        ("Te cuento: me llamo Diego", "El nombre del usuario es Diego"),
        ("for the meal plan: I'm vegan", "The user is vegan"),
    ],
)
def test_a_lead_in_before_a_colon_does_not_hide_the_statement_after_it(
    db: None, said: str, learned: str
) -> None:
    chat(said)
    assert learned in current()


def test_a_subject_dropped_after_and_is_the_users_but_never_after_someone_elses(
    db: None,
) -> None:
    chat("I'm vegan and allergic to sesame", "my sister is a nurse and allergic to nuts")
    facts = current()
    assert "The user is vegan" in facts
    assert "The user is allergic to sesame" in facts
    assert not any("nuts" in fact and fact.startswith("The user is") for fact in facts)


@pytest.mark.parametrize(
    ("said", "now", "old"),
    [
        (["my name is Lina", "no wait, it's Lena not Lina, typo"], "Lena", "Lina"),
        (["I live in Lisbon", "oops, not Lisbon, Porto. brain fog"], "Porto", "Lisbon"),
        (["Я живу в Туле", "не в Туле, а в Твери, опечатка"], "Твери", "Туле"),
        (["Ich heiße Jonas", "Sorry, Jonah, nicht Jonas"], "Jonah", "Jonas"),
        (["Ich wohne in Münster", "Quatsch, ich meinte Mannheim"], "Mannheim", "Münster"),
        (["J'habite à Lyon", "pas Lyon, Lille"], "Lille", "Lyon"),
        (["Vivo en Cádiz", "no en Cádiz, en Cuenca"], "Cuenca", "Cádiz"),
        (["我住在苏州", "打错了，是杭州"], "杭州", "苏州"),
        (["名古屋に住んでいます", "すみません、間違えました。京都です"], "京都", "名古屋"),
        (["I live in Leeds", "Sorry, my mistake. It's York."], "York", "Leeds"),
    ],
)
def test_a_correction_of_an_undated_value_supersedes_it(
    db: None, said: list[str], now: str, old: str
) -> None:
    chat(*said)
    facts = current()
    assert any(now in fact for fact in facts), facts
    assert not any(old in fact for fact in facts), facts


@pytest.mark.parametrize(
    ("said", "first", "second"),
    [
        (["I speak French", "same for Dutch, I grew up near the border"], "French", "Dutch"),
        (["Я говорю по-английски", "Ещё я говорю по-испански"], "английски", "испански"),
        (["Ich spreche Englisch", "Ich spreche auch Italienisch"], "Englisch", "Italienisch"),
        (["我会说英语", "我也会说日语"], "英语", "日语"),
        (["Je parle anglais", "Je parle aussi allemand"], "anglais", "allemand"),
        (["Hablo inglés", "También hablo portugués"], "inglés", "portugués"),
        (["我对花生过敏", "对虾也过敏"], "花生", "虾"),
    ],
)
def test_an_added_value_is_stored_beside_the_first(
    db: None, said: list[str], first: str, second: str
) -> None:
    chat(*said)
    facts = current()
    assert any(first in fact for fact in facts), facts
    assert any(second in fact for fact in facts), facts


@pytest.mark.parametrize(
    "said",
    ["je parle trop", "Hablo mucho", "Ich spreche Klartext", "I'm allergic to cats. Same for me"],
)
def test_talking_is_not_a_language_and_same_for_me_adds_nothing(db: None, said: str) -> None:
    chat(said)
    assert not any(
        word in fact for fact in current() for word in ("trop", "mucho", "Klartext", " me")
    )


def test_a_chinese_diet_given_up_supersedes_the_old_one(db: None) -> None:
    chat("我是素食者", "我现在不吃素了")
    assert current() == ["用户不吃素"]


def test_starting_to_eat_meat_again_is_not_stored_as_its_opposite(db: None) -> None:
    chat("我又开始吃肉了")
    assert current() == ["用户吃肉"]
