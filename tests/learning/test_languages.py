"""The offline rules in Russian, German and Chinese: learned through ``turn_add``, changes
supersede or retract, others' facts stay theirs, non-facts are refused; the rule files are data
shipped in the package, and each language's patterns only read its own text."""

# Russian and Chinese text on purpose: their letters and punctuation are not look-alikes here.
# ruff: noqa: RUF001

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import user
from tests.learning.chat import Talk
from ttmemory import memory
from ttmemory.longterm import rulebook, statements
from ttmemory.models import Fact

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-lang"


talk = Talk(NS, reply="ok")
chat, current = talk.chat, talk.current


def history() -> list[str]:
    return sorted(f.text for f in Fact.objects.filter(namespace=NS) if f.valid_to is not None)


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("Я работаю медсестрой.", ["Пользователь работает медсестрой"]),
        ("У меня аллергия на арахис.", ["У пользователя аллергия на арахис"]),
        ("Я живу в Москве, так что пишите по-русски.", ["Пользователь живёт в Москве"]),
        ("Меня зовут Анна.", ["Имя пользователя — Анна"]),
        ("Мне 34 года.", ["Возраст пользователя — 34"]),
        ("Моя сестра Лена — учительница.", ["Сестра пользователя Лена — учительница"]),
        ("Ich wohne jetzt in Berlin.", ["Der Nutzer wohnt in Berlin"]),
        ("Ich arbeite als Krankenschwester.", ["Der Nutzer arbeitet als Krankenschwester"]),
        ("Ich bin allergisch gegen Erdnüsse.", ["Der Nutzer ist allergisch gegen Erdnüsse"]),
        ("Ich bin Vegetarierin.", ["Der Nutzer ist Vegetarierin"]),
        ("Meine Schwester Lena ist Lehrerin.", ["Schwester des Nutzers Lena ist Lehrerin"]),
        ("我住在北京。", ["用户住在北京"]),
        ("我对花生过敏。", ["用户对花生过敏"]),
        ("我是护士。", ["用户是护士"]),
        ("我对花生过敏，我喜欢靠窗的座位", ["用户喜欢靠窗的座位", "用户对花生过敏"]),
        ("我姐姐是老师。", ["用户的姐姐是老师"]),
    ],
)
def test_plain_statements_are_learned_in_the_users_language(
    db: Any, said: str, stored: list[str]
) -> None:
    chat(said)

    assert current() == sorted(stored)


@pytest.mark.parametrize(
    ("first", "then", "now", "old"),
    [
        (
            "Я живу в Москве.",
            "Я переехал из Москвы в Казань.",
            "Пользователь переехал в Казань",
            "Пользователь живёт в Москве",
        ),
        (
            "Ich wohne in München.",
            "Ich bin letzten Monat von München nach Berlin gezogen.",
            "Der Nutzer wohnt in Berlin",
            "Der Nutzer wohnt in München",
        ),
        ("我住在北京。", "我搬到上海了。", "用户住在上海", "用户住在北京"),
        (
            "Ich arbeite bei Siemens.",
            "Ich arbeite jetzt bei Zalando, die gleiche Rolle.",
            "Der Nutzer arbeitet bei Zalando",
            "Der Nutzer arbeitet bei Siemens",
        ),
        (
            "Я работаю учителем.",
            "Я теперь работаю медсестрой.",
            "Пользователь работает медсестрой",
            "Пользователь работает учителем",
        ),
    ],
)
def test_a_change_supersedes_the_old_value_in_every_language(
    db: Any, first: str, then: str, now: str, old: str
) -> None:
    chat(first)
    chat(then)

    assert current() == [now]
    assert old in history()


@pytest.mark.parametrize(
    ("said", "old_value_kept"),
    [
        ("Я переехал из Москвы в Казань.", "Пользователь переехал из Москвы"),
        ("Ich bin von München nach Berlin gezogen.", "Der Nutzer wohnt in München"),
        ("我从北京搬到了上海。", "用户住在北京"),
    ],
)
def test_a_move_keeps_the_old_city_in_the_chain(db: Any, said: str, old_value_kept: str) -> None:
    chat(said)

    [old] = [f for f in Fact.objects.filter(namespace=NS) if f.text == old_value_kept]
    assert old.superseded_by is not None and old.superseded_by.valid_to is None


@pytest.mark.parametrize(
    ("fact_said", "retraction"),
    [
        ("У меня аллергия на арахис.", "У меня больше нет аллергии на арахис."),
        ("Я работаю в Яндексе.", "Я ушла из Яндекса."),
        ("Ich bin allergisch gegen Erdnüsse.", "Ich bin nicht mehr allergisch gegen Erdnüsse."),
        ("Ich wohne in Köln.", "Ich wohne nicht mehr in Köln."),
        ("我对花生过敏。", "我不再对花生过敏了。"),
        ("我在阿里巴巴工作。", "我离开了阿里巴巴。"),
    ],
)
def test_a_retraction_ends_the_fact_in_every_language(
    db: Any, fact_said: str, retraction: str
) -> None:
    chat(fact_said)
    [fact] = current()

    chat(retraction)

    assert current() == []
    assert history() == [fact]


@pytest.mark.parametrize(
    "said",
    [
        "Если бы я жил в Париже, я бы ел круассаны.",
        "Может быть, я перееду в Берлин.",
        "Где я живу?",
        "Моя сестра говорит, что я вегетарианка.",
        "Я миллиардер, шучу.",
        "Wenn ich reich wäre, würde ich in Paris wohnen.",
        "Wohne ich in Berlin?",
        "Meine Mutter sagt, ich bin allergisch gegen Katzen.",
        "Vielleicht ziehe ich nach Hamburg.",
        "如果我是有钱人，我会住在巴黎。",
        "我住在哪里？",
        "我妈妈说我对猫过敏。",
        "我是亿万富翁，开玩笑的。",
    ],
)
def test_hypotheticals_questions_reported_speech_and_jokes_store_nothing(
    db: Any, said: str
) -> None:
    chat(said)

    assert current() == []


def test_the_profiles_name_is_the_subject_in_every_language(db: Any) -> None:
    memory.profile_update(namespace=NS, kind="user", data={"name": "Anna"})

    chat("Я живу в Москве.", "Ich arbeite als Lehrerin.", "我对花生过敏。")

    assert current() == [
        "Anna arbeitet als Lehrerin",
        "Anna живёт в Москве",
        "Anna对花生过敏",
    ]


def test_a_russian_and_a_german_conversation_recall_their_facts_by_keyword(db: Any) -> None:
    chat("Я живу в Казани. У меня аллергия на арахис.", "Ich arbeite bei Siemens.")
    later = memory.session_open(namespace=NS, key="later")

    recalled = [f.text for f in memory.fact_recall(namespace=NS, query="арахис", k=3).facts]
    prompt = memory.prompt_build(session=later, query="Siemens", max_tokens=2000)

    assert recalled[0] == "У пользователя аллергия на арахис"
    assert "Der Nutzer arbeitet bei Siemens" in prompt.sections["memories"]


def test_the_rules_are_data_files_shipped_in_the_package_one_per_language() -> None:
    assert {"en", "ru", "de", "zh"} <= set(rulebook.available())
    # Each language's patterns read only its own text: English rules alone learn nothing
    # from a Russian sentence, and Russian rules alone nothing from an English one.
    russian = [user("Я живу в Москве.")]
    english = [user("I live in Moscow.")]
    assert statements.rule_statements(russian, languages=["en"]) == []
    assert statements.rule_statements(english, languages=["ru", "de", "zh"]) == []
    assert [s.text for s in statements.rule_statements(russian, languages=["ru"])] == [
        "Пользователь живёт в Москве"
    ]
    with pytest.raises(ValueError, match="xx"):
        statements.rule_statements(english, languages=["xx"])
