# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of these tests)
"""Slots decide what a new value does, in one place (``ttmemory.longterm.slots``): a single-valued
slot's new value supersedes the current one however it is said, many-valued slots add up, a
slot about someone close to the user is theirs; and a fact is found by the words naming its
slot ("Beruf" finds "Der Nutzer ist Lehrer")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import assistant, user
from ttmemory import memory
from ttmemory.longterm import slots, statements
from ttmemory.models import Fact

NS = "user-slots"


@pytest.mark.parametrize(
    ("given", "expected", "single"),
    [
        ("home_city", "location", True),
        ("Current City", "location", True),
        ("occupation", "job", True),
        ("company", "employer", True),
        ("mobile", "phone number", True),
        ("sister Lena occupation", "sister lena job", True),
        ("brother home city", "brother location", True),
        ("wechat handle", "wechat handle", True),
        ("favourite number", "favourite number", True),
        ("pets", "pet", False),
        ("allergies", "allergy", False),
        ("hobby", "hobby", False),
        ("sister lena pet", "sister lena pet", False),
        ("", "", False),
    ],
)
def test_the_registry_reads_any_name_of_a_slot_and_says_how_many_values_it_holds(
    given: str, expected: str, single: bool
) -> None:
    assert slots.canonical(given) == expected
    assert slots.is_single_valued(given) is single


def test_the_words_naming_a_slot_come_from_every_language() -> None:
    words = slots.words("location")
    for word in ("city", "город", "Wohnort", "城市", "ciudad", "ville", "住所"):
        assert word in words
    assert slots.words("sister lena job") == slots.words("job")


@pytest.fixture
def learn(db: Any, inline_learning: None) -> Any:

    def chat(*said: str) -> list[str]:
        session = memory.session_open(namespace=NS, key="chat")
        for text in said:
            memory.turn_add(session=session, messages=[user(text), assistant("Noted.")])
        return sorted(f.text for f in memory.fact_list(namespace=NS))

    return chat


def recalled(query: str) -> list[str]:
    return [fact.text for fact in memory.fact_recall(namespace=NS, query=query, k=5).facts]


@pytest.mark.parametrize(
    ("said", "question", "answer"),
    [
        ("ich bin Lehrer an einer Grundschule", "Beruf", "Der Nutzer ist Lehrer"),
        ("я живу в Казани", "город", "Пользователь живёт в Казани"),
        ("我在华为工作", "公司", "用户在华为工作"),
        ("i live in Manchester", "which city is home", "The user lives in Manchester"),
        ("I have a cat named Miso", "pets", "The user has a cat named Miso"),
    ],
)
def test_a_question_naming_the_attribute_finds_the_fact_that_never_says_the_word(
    learn: Any, said: str, question: str, answer: str
) -> None:
    assert learn(said) == [answer]
    assert recalled(question) == [answer]


def test_the_slot_words_do_not_lengthen_the_fact_for_bm25(learn: Any) -> None:
    learn("i live in Manchester")
    fact = Fact.objects.get(namespace=NS)
    assert fact.term_count == 3  # user, live, manchester: the text's terms only


@pytest.mark.parametrize(
    ("first", "then", "now", "old"),
    [
        ("I'm based in Denver", "we relocated to Austin over the summer", "Austin", "Denver"),
        ("I work for Oracle", "I accepted an offer from Stripe, start Monday", "Stripe", "Oracle"),
        ("I'm a paramedic", "I'm now working as a firefighter", "firefighter", "paramedic"),
        ("my number is 07700 111222", "new phone, the number is 07700 333444", "333444", "111222"),
        ("email me at jo.p@mail.com", "please use jo.parker@work.io from now on", "parker", "p@"),
        ("живу в Самаре", "мы перебрались в Новосибирск", "Новосибирск", "Самар"),
        ("моя почта ivan@mail.ru", "у меня новая почта ivan.petrov@yandex.ru", "petrov", "ivan@"),
        ("ich wohne in Hamburg", "wir sind jetzt nach Leipzig umgezogen", "Leipzig", "Hamburg"),
        ("我住在广州", "我们上个月搬到了深圳", "深圳", "广州"),
        ("我的手机号是13800138000", "我换了手机号，新号码是13900139000", "139001", "138001"),
        ("я работаю в Сбере", "я устроилась дизайнером в Авито", "Авито", "Сбер"),
        ("я учитель", "я устроилась дизайнером в Авито", "дизайнер", "учитель"),
        ("我在百度工作", "我去了美团上班", "用户在美团工作", "百度"),
        # A correction with a bare value, in a later turn.
        ("I'm 34 years old", "oops, 43", "43", "34"),
        ("my birthday is on March 14", "sorry, March 15", "March 15", "March 14"),
        ("я живу в Твери", "ой, точнее, в Ярославле", "Ярославле", "Твери"),
        ("ich arbeite bei Siemens", "Korrektur: bei Bosch", "Bosch", "Siemens"),
        ("我今年30岁", "说错了，应该是31岁", "31", "30"),
    ],
)
def test_a_new_value_said_loosely_supersedes_the_old_one(
    learn: Any, first: str, then: str, now: str, old: str
) -> None:
    learn(first)
    active = learn(then)
    assert any(now in text for text in active)
    assert not any(old in text for text in active)
    history = [f.text for f in Fact.objects.filter(namespace=NS) if f.superseded_by_id]
    assert any(old in text for text in history)


@pytest.mark.parametrize(
    "said",
    [
        "my mom just moved to Florida",
        "I moved my meeting to Friday",
        "I had lunch with Anna at work",
        "if I moved to Tokyo I would learn Japanese",
        "мой брат переехал в Самару",
        "meine Schwester ist nach Berlin gezogen",
        "我妈妈搬到了北京",
    ],
)
def test_a_cue_never_reads_someone_else_a_weekday_or_a_hypothetical_as_the_users(
    said: str,
) -> None:
    found = statements.rule_statements([{"role": "user", "content": said}])
    assert not [s for s in found if s.slot in {"location", "employer", "job"}]


def test_a_bare_correction_marker_before_a_sentence_corrects_nothing(learn: Any) -> None:
    learn("my birthday is on March 14")
    assert learn("sorry I was busy") == ["The user's birthday is on March 14"]


@pytest.mark.parametrize(
    ("first", "then", "old"),
    [
        ("I play the violin in an orchestra", "I don't play in the orchestra anymore", "violin"),
        ("обожаю играть в шахматы", "в шахматы я больше не играю, времени нет", "шахмат"),
        ("我喜欢打篮球", "我现在已经不打篮球了", "篮球"),
    ],
)
def test_a_clause_saying_something_stopped_ends_the_fact_it_names(
    learn: Any, first: str, then: str, old: str
) -> None:
    assert any(old in text for text in learn(first))
    assert not any(old in text for text in learn(then))
    assert [f.text for f in Fact.objects.filter(namespace=NS) if f.valid_to is not None]
