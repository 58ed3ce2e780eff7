# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of several cases)
"""Memory follows change: a new value supersedes the old one, "not anymore" retracts it, others'
facts stay theirs, and what is not a fact is never stored (learned through ``turn_add``, asked
in a later session through ``fact_recall`` and ``prompt_build``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import assistant, user
from tests.learning.chat import Talk
from tests.learning.chat import served as served_in
from ttmemory import memory
from ttmemory.models import Fact

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]
NS = "user-change"


talk = Talk(NS)
chat, current = talk.chat, talk.current


def served(query: str) -> str:
    return served_in(NS, query)


def stored(text: str) -> Fact:
    """The one fact, current or not, whose text is ``text`` (text is encrypted: no lookup)."""
    [fact] = [f for f in Fact.objects.filter(namespace=NS) if f.text == text]
    return fact


def chain(text: str) -> list[str]:
    """The fact ``text`` and the facts that superseded it, oldest first (its history)."""
    return history(stored(text))


def history(fact: Fact | None) -> list[str]:
    """``fact`` and the facts that superseded it, oldest first."""
    found = []
    while fact is not None:
        found.append(fact.text)
        fact = fact.superseded_by
    return found


def ended(text: str) -> bool:
    return stored(text).valid_to is not None


# -- relocation -------------------------------------------------------------------------------


def test_a_move_supersedes_the_old_city_and_the_chain_answers_where_the_user_lived_before(
    db: Any,
) -> None:
    chat("I live in Paris.", "I moved from Paris to Berlin last month")

    assert current() == ["The user lives in Berlin"]
    assert chain("The user lives in Paris") == [
        "The user lives in Paris",
        "The user lives in Berlin",
    ]
    told = served("Where does the user live?")
    assert "Berlin" in told and "Paris" not in told


def test_a_move_names_the_old_city_even_when_it_was_never_said_before(db: Any) -> None:
    chat("I moved from Paris to Berlin last month")

    assert current() == ["The user lives in Berlin"]
    # "Where did the user live before?": the superseded fact before the current one.
    before = memory.fact_list(namespace=NS, include_superseded=True)
    assert [f.text for f in before if f.superseded_by_id] == ["The user lives in Paris"]


# -- job changes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "then", "now"),
    [
        ("I work at Siemens.", "I work at Zalando now", "The user works at Zalando"),
        ("I work for Siemens.", "I started at Zalando last week", "The user works at Zalando"),
        ("I work at Siemens.", "I just joined Zalando", "The user works at Zalando"),
        (
            "I work as a teacher.",
            "I changed jobs: I now work as a nurse",
            "The user works as a nurse",
        ),
        ("I'm a teacher.", "Now I work as a nurse", "The user works as a nurse"),
        ("I work at Siemens.", "Just started at Zalando!", "The user works at Zalando"),
        ("I work at Siemens.", "My new job is at Zalando", "The user works at Zalando"),
        (
            "I work as an engineer.",
            "I got promoted to senior engineer",
            "The user works as a senior engineer",
        ),
        ("I work as an engineer.", "I retired last year", "The user is retired"),
    ],
)
def test_a_new_job_or_employer_supersedes_the_old_one(
    db: Any, first: str, then: str, now: str
) -> None:
    chat(first)
    [old] = current()

    chat(then)

    assert now in current() and old not in current()
    assert chain(old)[-1] == now
    told = served("Where does the user work and what is their job?")
    assert old not in told


def test_a_job_and_employer_said_together_are_both_kept_and_both_change(db: Any) -> None:
    chat("I work at SAP as a developer.")
    assert current() == ["The user works as a developer", "The user works at SAP"]

    chat("I'm a nurse at St Mary's now")

    assert current() == ["The user is a nurse", "The user works at St Mary's"]


@pytest.mark.parametrize("said", ["I left Siemens", "I quit my job", "I've left Siemens."])
def test_leaving_an_employer_ends_it_without_a_successor(db: Any, said: str) -> None:
    chat("I work at Siemens. I'm allergic to cats.")

    chat(said)

    assert current() == ["The user is allergic to cats"]
    assert ended("The user works at Siemens")
    assert "Siemens" not in served("Where does the user work?")


@pytest.mark.parametrize(
    "said",
    [
        "I don't live in Paris anymore, I moved to Berlin",
        "We moved to Berlin last month",
        "Just moved to Berlin!",
        "We live in Berlin now",
    ],
)
def test_other_ways_of_saying_a_move_supersede_and_keep_the_chain(db: Any, said: str) -> None:
    chat("I live in Paris.")

    chat(said)

    assert current() == ["The user lives in Berlin"]
    assert chain("The user lives in Paris") == [
        "The user lives in Paris",
        "The user lives in Berlin",
    ]


def test_changing_jobs_with_a_new_employer_keeps_the_chain(db: Any) -> None:
    chat("I work at Siemens.")

    chat("I changed jobs: I now work at Zalando, same kind of role")

    assert current() == ["The user works at Zalando"]
    assert chain("The user works at Siemens") == [
        "The user works at Siemens",
        "The user works at Zalando",
    ]


# -- contact details ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "then", "now"),
    [
        (
            "My address is 1 Old Road, Leeds.",
            "My new address is 12 Main Street, Springfield",
            "The user's address is 12 Main Street, Springfield",
        ),
        (
            "My phone number is 555 0100.",
            "My new number is 555 0199",
            "The user's number is 555 0199",
        ),
        (
            "My phone number is 555 0100.",
            "I changed my phone number to 555 0199",
            "The user's phone number is 555 0199",
        ),
        (
            "My email is ada@old.example.",
            "My new email is ada@new.example",
            "The user's email is ada@new.example",
        ),
    ],
)
def test_new_contact_details_supersede_the_old_ones_in_the_same_slot(
    db: Any, first: str, then: str, now: str
) -> None:
    chat(first)
    [old] = current()

    chat(then)

    assert current() == [now]
    assert chain(old) == [old, now]


# -- reversals, negations, corrections --------------------------------------------------------


def test_actually_now_reverses_a_preference(db: Any) -> None:
    chat("I prefer window seats.")

    chat("Actually I prefer aisle seats now")

    assert current() == ["The user prefers aisle seats"]
    assert chain("The user prefers window seats")[-1] == "The user prefers aisle seats"
    assert "window" not in served("Which seat does the user like?")


def test_a_reversal_of_one_preference_leaves_the_others(db: Any) -> None:
    chat("I prefer window seats. I prefer tea.")

    chat("Actually I prefer aisle seats now")

    assert current() == ["The user prefers aisle seats", "The user prefers tea"]


@pytest.mark.parametrize(
    ("fact_said", "retraction", "gone"),
    [
        (
            "I'm allergic to peanuts.",
            "I'm not allergic to peanuts anymore",
            "The user is allergic to peanuts",
        ),
        (
            "I'm allergic to peanuts.",
            "I'm no longer allergic to peanuts",
            "The user is allergic to peanuts",
        ),
        ("I live in Paris.", "I don't live in Paris anymore", "The user lives in Paris"),
        ("I play tennis.", "I don't play tennis anymore", "The user plays tennis"),
        ("I eat meat.", "I stopped eating meat", "The user eats meat"),
        ("I'm vegetarian.", "I'm not vegetarian anymore", "The user is vegetarian"),
        ("I love jazz.", "I don't like jazz anymore", "The user loves jazz"),
        ("I drink coffee.", "I gave up coffee", "The user drinks coffee"),
        ("I have a car.", "I sold my car", "The user has a car"),
        ("I smoke.", "I quit smoking", "The user smokes"),
    ],
)
def test_not_anymore_no_longer_and_stopped_retract_the_fact(
    db: Any, fact_said: str, retraction: str, gone: str
) -> None:
    chat(fact_said + " My cat is called Miso.")

    chat(retraction)

    assert gone not in current()
    assert ended(gone)  # kept as history, no longer served
    assert "The user's cat is called Miso" in current()  # only what was retracted
    assert gone not in served(gone)


@pytest.mark.parametrize(
    ("question", "gone"),
    [
        ("Noted. Do you still live in Paris?", "The user lives in Paris"),
        ("Are you still vegetarian?", "The user is vegetarian"),
    ],
)
def test_a_bare_not_anymore_takes_back_what_the_assistant_asked_about(
    db: Any, question: str, gone: str
) -> None:
    session = memory.session_open(namespace=NS, key="chat-1")
    memory.turn_add(
        session=session,
        messages=[user("I live in Paris. I'm vegetarian."), assistant(question)],
    )

    memory.turn_add(session=session, messages=[user("Not anymore."), assistant("Noted.")])

    assert gone not in current() and ended(gone)
    assert len(current()) == 1  # the other fact stays


def test_a_bare_yes_to_do_you_still_changes_nothing(db: Any) -> None:
    session = memory.session_open(namespace=NS, key="chat-1")
    memory.turn_add(
        session=session,
        messages=[user("I live in Paris."), assistant("Do you still live in Paris?")],
    )

    memory.turn_add(session=session, messages=[user("Yes, I do."), assistant("Noted.")])

    assert current() == ["The user lives in Paris"]


def test_i_am_43_not_34_corrects_the_age(db: Any) -> None:
    chat("I'm 34.")

    chat("I'm 43, not 34")

    assert current() == ["The user is 43 years old"]
    assert chain("The user is 34 years old")[-1] == "The user is 43 years old"


def test_sorry_i_meant_corrects_the_value_said_just_before(db: Any) -> None:
    chat("My yoga class is on Monday.")

    chat("Sorry, I meant Tuesday.")

    assert current() == ["The user's yoga class is on Tuesday"]
    assert chain("The user's yoga class is on Monday")[-1] == "The user's yoga class is on Tuesday"


def test_i_meant_tuesday_not_monday_corrects_too(db: Any) -> None:
    chat("My yoga class is on Monday.")

    chat("I meant Tuesday, not Monday.")

    assert current() == ["The user's yoga class is on Tuesday"]


def test_a_correction_in_the_same_message_never_stores_the_wrong_value(db: Any) -> None:
    chat("My yoga class is on Monday. Sorry, I meant Tuesday.")

    assert [f.text for f in memory.fact_list(namespace=NS, include_superseded=True)] == [
        "The user's yoga class is on Tuesday"
    ]


@pytest.mark.parametrize(
    ("said", "correction", "old", "new", "query"),
    [
        ("my dentist appointment is on monday", "no wait, it's tuesday not monday",
         "The user's dentist appointment is on monday",
         "The user's dentist appointment is on tuesday", "When is the dentist?"),
        ("i live in bristol", "oops, bath not bristol, typo", "The user lives in bristol",
         "The user lives in bath", "Which town does the user live in?"),
        ("My cat is called Mochi", "sorry, autocorrect - Miso, not Mochi",
         "The user's cat is called Mochi", "The user's cat is called Miso",
         "What is the cat's name?"),
        ("Я живу в Казани", "ой, не в Казани, а в Самаре", "Пользователь живёт в Казани",
         "Пользователь живёт в Самаре", "Где живёт пользователь?"),
        ("Мою собаку зовут Рекс", "ой, не Рекс, а Рич, перепутал",
         "Собаку пользователя зовут Рекс", "Собаку пользователя зовут Рич", "Как зовут собаку?"),
        ("我住在北京", "不对，是上海，不是北京", "用户住在北京", "用户住在上海",
         "用户住在哪个城市"),
        ("Ich habe zwei Katzen", "ähm, drei Katzen, nicht zwei", "Der Nutzer hat zwei Katzen",
         "Der Nutzer hat drei Katzen", "Wie viele Katzen hat der Nutzer?"),
        ("J'ai 30 ans", "pardon, 31 ans, pas 30", "L'utilisateur a 30 ans",
         "L'utilisateur a 31 ans", "Quel âge a l'utilisateur ?"),
        ("I drive a Honda Civic", "whoops, a Honda Jazz, not a Civic",
         "The user drives a Honda Civic", "The user drives a Honda Jazz", "Which car?"),
        ("我有一只猫", "不对，是两只猫，不是一只", "用户养了一只猫", "用户养了两只猫",
         "用户养了几只猫"),
        ("I live in Linz", "sorry, Graz instead of Linz", "The user lives in Linz",
         "The user lives in Graz", "Where is home?"),
        ("Ich wohne in Mannheim", "Verschrieben: Mainz statt Mannheim",
         "Der Nutzer wohnt in Mannheim", "Der Nutzer wohnt in Mainz", "Wo wohnt der Nutzer?"),
        ("J'habite à Lyon", "je me suis trompé, c'est Lille et pas Lyon",
         "L'utilisateur habite à Lyon", "L'utilisateur habite à Lille", "Où habite-t-il ?"),
        ("我住在苏州", "我说错了，我在南京，不在苏州", "用户住在苏州", "用户住在南京",
         "用户在哪个城市"),
        ("我在华为上班", "不好意思，是小米，不是华为", "用户在华为工作", "用户在小米工作",
         "用户在哪家公司"),
        ("my haircut is booked for thursday", "btw it's friday not thursday, they moved it",
         "The user's haircut is booked for thursday", "The user's haircut is booked for friday",
         "When is the haircut?"),
        ("I have 4 grandchildren", "oh 5 actually, forgot the newest one!",
         "The user has 4 grandchildren", "The user has 5 grandchildren",
         "How many grandchildren?"),
        ("Mi cumpleaños es el 3 de mayo", "perdón, el 4 de mayo, no el 3",
         "El cumpleaños del usuario es el 3 de mayo", "El cumpleaños del usuario es el 4 de mayo",
         "¿Cuándo es su cumpleaños?"),
    ],
)  # fmt: skip
def test_a_correction_naming_the_old_value_supersedes_it_in_every_language(
    db: Any, said: str, correction: str, old: str, new: str, query: str
) -> None:
    chat(said, correction)

    assert current() == [new]
    assert chain(old) == [old, new]
    assert new in served(query)


@pytest.mark.parametrize(
    ("said", "then", "now", "old"),
    [
        ("我是老师", "我现在不当老师了，改行做销售", ["用户是销售"], "用户是老师"),
        ("我住在成都", "我已经不在成都住了，搬回重庆了", ["用户住在重庆"], "用户住在成都"),
        ("我开车上班", "现在我骑车上班", ["用户骑车上班"], "用户开车上班"),
        ("我的狗叫旺财", "打错了，它叫来福", ["用户的狗叫来福"], "用户的狗叫旺财"),
        ("Я пью кофе каждый день", "Кофе я больше не пью", [],
         "Пользователь пьёт кофе каждый день"),
        ("我是单身", "我已经结婚了", ["用户已经结婚"], "用户是单身"),
        ("我每天喝咖啡", "我改喝茶了", ["用户喝茶"], "用户每天喝咖啡"),
        ("我是护士", "我离职了，现在在家带孩子", [], "用户是护士"),
        ("I'm a nurse", "I quit my job last month", [], "The user is a nurse"),
        ("我开的是丰田", "我换车了，现在开特斯拉", ["用户开特斯拉"], "用户开的是丰田"),
        ("我喜欢打篮球", "现在不打篮球了，改打羽毛球了", ["用户打羽毛球"], "用户喜欢打篮球"),
        ("我是单身", "我有女朋友了", ["用户有女朋友"], "用户是单身"),
        ("我是学生", "我毕业了，现在在银行上班", ["用户在银行工作"], "用户是学生"),
        ("I'm a student", "I graduated last summer", [], "The user is a student"),
        ("我不吃辣", "最近开始吃辣了", ["用户吃辣"], "用户不吃辣"),
        ("我住在广州", "我们全家移民到加拿大了", ["用户住在加拿大"], "用户住在广州"),
        ("Я работаю в банке", "Ушёл из банка, теперь фрилансер", ["Пользователь — фрилансер"],
         "Пользователь работает в банке"),
    ],
)  # fmt: skip
def test_a_chinese_or_russian_change_said_in_everyday_words_replaces_the_old_fact(
    db: Any, said: str, then: str, now: list[str], old: str
) -> None:
    chat(said, then)

    assert current() == now
    assert stored(old).valid_to is not None or stored(old).superseded_by_id is not None


@pytest.mark.parametrize(
    ("said", "correction", "old", "new"),
    [
        ("Ich bin 52 Jahre alt", "Moment, ich bin 53, nicht 52", "Der Nutzer ist 52 Jahre alt",
         "Der Nutzer ist 53 Jahre alt"),
        ("Mein Termin beim Zahnarzt ist am Dienstag", "der ist am Mittwoch, nicht am Dienstag",
         "Termin des Nutzers: Termin beim Zahnarzt ist am Dienstag",
         "Termin des Nutzers: Termin beim Zahnarzt ist am Mittwoch"),
        ("Mein Sohn heißt Paul und ist 4", "ach, er ist schon 5, nicht 4, er hatte Geburtstag",
         "Sohn des Nutzers heißt Paul und ist 4", "Sohn des Nutzers heißt Paul und ist 5"),
        ("Tengo 41 años", "perdón, tengo 42, no 41", "El usuario tiene 41 años",
         "El usuario tiene 42 años"),
        ("У меня 3 кошки", "ой, их 4, а не 3", "У пользователя 3 кошки", "У пользователя 4 кошки"),
        ("我家有2只猫", "是3只，不是2只", "用户家有2只猫", "用户家有3只猫"),
    ],
)  # fmt: skip
def test_new_comma_not_old_said_anywhere_in_the_sentence_corrects_the_value(
    db: Any, said: str, correction: str, old: str, new: str
) -> None:
    # "NEW, not OLD" ([text] contrast_value) wherever it stands, with words before it ("ich bin
    # 53", "der ist am Mittwoch", "er ist schon 5"): the old value the user just said, of the
    # same party, is replaced by the new one.
    chat(said, correction)

    assert current() == [new]
    assert chain(old) == [old, new]


@pytest.mark.parametrize(
    ("said", "then", "now"),
    [
        # About someone else: the user's city stays.
        ("I live in Leeds", "My brother lives in York, not Leeds",
         ["The user lives in Leeds", "The user's brother lives in York"]),
        # The two numbers are not side by side: no pair, nothing corrected.
        ("I am 30", "I have 2 kids, not 30", ["The user has 2 kids", "The user is 30 years old"]),
        # Nothing the user said holds the old value.
        ("I live in Leeds", "I'm flying to Rome, not Paris", ["The user lives in Leeds"]),
    ],
)  # fmt: skip
def test_a_contrast_that_is_no_correction_of_the_users_value_changes_nothing(
    db: Any, said: str, then: str, now: list[str]
) -> None:
    chat(said, then)

    assert sorted(current()) == now


def test_a_correction_naming_a_value_nothing_holds_changes_nothing(db: Any) -> None:
    chat("I live in Leeds", "sorry, bath not bristol")

    assert [f.text for f in memory.fact_list(namespace=NS, include_superseded=True)] == [
        "The user lives in Leeds"
    ]


# -- additions, clause tails, time words -------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("I'm vegetarian too", "The user is vegetarian"),
        ("I also play chess", "The user plays chess"),
        ("I'm vegetarian too, so careful with the dessert recipes", "The user is vegetarian"),
        (
            "I'm allergic to peanuts, so careful with the dessert recipes",
            "The user is allergic to peanuts",
        ),
        ("I work at Zalando now, same kind of role", "The user works at Zalando"),
        ("I moved to Berlin last month", "The user lives in Berlin"),
        ("These days I live in Porto", "The user lives in Porto"),
    ],
)
def test_additions_are_stored_without_too_clause_tails_or_time_words(
    db: Any, said: str, stored: str
) -> None:
    chat(said)

    assert current() == [stored]


def test_an_addition_keeps_what_was_there(db: Any) -> None:
    chat("I'm allergic to peanuts.")

    chat("I'm also allergic to shellfish")

    assert current() == ["The user is allergic to peanuts", "The user is allergic to shellfish"]


# -- people close to the user ------------------------------------------------------------------


def test_facts_about_people_close_to_the_user_stay_theirs(db: Any) -> None:
    chat("I work as a nurse.", "My sister Lena is a teacher", "My husband, Tom, lives in Rome")

    assert current() == [
        "The user works as a nurse",
        "The user's husband Tom lives in Rome",
        "The user's sister Lena is a teacher",
    ]
    told = served("What is the user's job?")
    assert "The user works as a nurse" in told
    assert "The user is a teacher" not in told and "The user lives in Rome" not in told

    chat("My sister Lena is a doctor now")

    # The sister's job changed, the user's did not.
    assert current() == [
        "The user works as a nurse",
        "The user's husband Tom lives in Rome",
        "The user's sister Lena is a doctor",
    ]


# -- what never becomes a fact -----------------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "If I moved to Tokyo I would learn Japanese.",
        "I might move to Berlin next year.",
        "I'm thinking about becoming a nurse.",
        "Should I move to Berlin?",
        "Do you think I'm allergic to peanuts?",
        '"I live in Paris," my friend said.',
        "My sister says I'm allergic to cats.",
        "My boss told me I work too much.",
        "I'm a billionaire, just kidding!",
        "I live in Atlantis. Just kidding.",
        "Imagine I was a pilot.",
    ],
)
def test_hypotheticals_questions_quotes_reported_speech_and_jokes_store_nothing(
    db: Any, said: str
) -> None:
    chat("I live in Lisbon.")

    chat(said)

    assert current() == ["The user lives in Lisbon"]


def test_a_joke_takes_back_only_what_it_marks(db: Any) -> None:
    chat("I live in Lisbon. I'm a billionaire, lol jk. I prefer tea.")

    assert current() == ["The user lives in Lisbon", "The user prefers tea"]


# -- the result type ----------------------------------------------------------------------------


def test_facts_learn_returns_fact_changes_with_retractions_and_the_rejected_count(db: Any) -> None:
    memory.facts_learn(namespace=NS, messages=[user("I'm allergic to peanuts.")])

    changes = memory.facts_learn(
        namespace=NS, messages=[user("I'm not allergic to peanuts anymore. I live in Porto.")]
    )

    assert isinstance(changes, memory.FactChanges) and changes.rejected == 0
    assert [(c.action, c.fact.text) for c in changes] == [
        ("RETRACT", "The user is allergic to peanuts"),
        ("ADD", "The user lives in Porto"),
    ]


@pytest.mark.parametrize(
    ("before", "after", "now"),
    [
        (
            "I drive to work every day.",
            "These days I take the bike to work.",
            ["The user takes the bike to work"],
        ),
        (
            "I drink coffee every morning.",
            "Nowadays I have green tea in the morning instead.",
            ["The user has green tea in the morning"],
        ),
        (
            "Я езжу на работу на машине.",
            "Теперь я езжу на работу на велосипеде.",
            ["Пользователь ездит на работу на велосипеде"],
        ),
    ],
)
def test_a_change_said_with_another_verb_supersedes_the_old_statement(
    db: Any, before: str, after: str, now: list[str]
) -> None:
    chat(before)
    chat(after)

    assert current() == now


def test_a_statement_that_adds_with_also_replaces_nothing(db: Any) -> None:
    chat("I work night shifts at the hospital.")
    chat("These days I also volunteer at the hospital on Sundays.")

    assert current() == [
        "The user volunteers at the hospital on Sundays",
        "The user works night shifts at the hospital",
    ]


@pytest.mark.parametrize(
    ("theirs", "mine", "now"),
    [
        (
            "My sister works night shifts at the hospital.",
            "These days I volunteer at the hospital.",
            [
                "The user volunteers at the hospital",
                "The user's sister works night shifts at the hospital",
            ],
        ),
        (
            "My daughter plays the violin every day.",
            "Nowadays I play the violin in a band.",
            [
                "The user plays the violin in a band",
                "The user's daughter plays the violin every day",
            ],
        ),
    ],
)
def test_a_change_of_the_users_never_replaces_someone_elses_fact(
    db: Any, theirs: str, mine: str, now: list[str]
) -> None:
    chat(theirs)
    chat(mine)

    assert current() == now


# -- the same words around another value ------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "old", "new"),
    [
        ("I have three cats.", "I have two cats.", "The user has three cats",
         "The user has two cats"),
        ("我有两个孩子", "说错了，我有三个孩子", "用户有两个孩子", "用户有三个孩子"),
        ("J'ai deux chiens.", "pardon, j'ai trois chiens", "L'utilisateur a deux chiens",
         "L'utilisateur a trois chiens"),
    ],
)  # fmt: skip
def test_a_count_said_again_supersedes_the_old_count(
    db: Any, before: str, after: str, old: str, new: str
) -> None:
    chat(before)
    chat(after)

    assert current() == [new]
    assert chain(old) == [old, new]


def test_another_thing_said_in_the_same_words_stands_beside_the_first(db: Any) -> None:
    chat("I have a dog.")
    chat("I have a cat.")
    chat("I have two kids.")

    assert current() == ["The user has a cat", "The user has a dog", "The user has two kids"]


def test_a_correction_in_the_words_of_the_fact_replaces_the_value(db: Any) -> None:
    chat("I take the train to the office.")
    chat("Sorry, I take the bus to the office.")

    assert current() == ["The user takes the bus to the office"]
    assert chain("The user takes the train to the office")[-1] == (
        "The user takes the bus to the office"
    )


@pytest.mark.parametrize(
    ("before", "after", "now"),
    [
        ("I drink coffee every morning.", "I don't drink coffee.",
         ["The user does not drink coffee"]),
        ("我喜欢喝咖啡", "我不喝咖啡了", ["用户不喝咖啡"]),
    ],
)  # fmt: skip
def test_the_opposite_of_a_value_supersedes_it(
    db: Any, before: str, after: str, now: list[str]
) -> None:
    chat(before)
    chat(after)

    assert current() == now


def test_quitting_what_the_user_does_ends_it_whatever_else_the_fact_says(db: Any) -> None:
    chat("I smoke about ten a day.")
    chat("quick update: I quit smoking three weeks ago!")

    assert current() == []
    assert ended("The user smokes about ten a day")


def test_getting_engaged_to_someone_supersedes_single(db: Any) -> None:
    chat("I'm single.")
    chat("big news, I got engaged to Marco last weekend")

    assert current() == ["The user is engaged to Marco"]


def test_a_bare_russian_verb_is_no_one_word_predicate(db: Any) -> None:
    chat("Я курю")
    chat("Я левша")

    assert current() == ["Пользователь — левша"]


def test_a_count_corrected_in_passing_replaces_the_count_of_that_thing(db: Any) -> None:
    chat("I have three cats.")
    chat("I work as a nurse.")
    chat("wait, two cats, not three. the third one is my neighbour's")

    assert current() == ["The user has two cats", "The user works as a nurse"]


def test_a_russian_count_corrected_in_passing_keeps_the_rest_of_the_statement(db: Any) -> None:
    chat("У меня две собаки")
    chat("нет, три собаки, забыл про щенка")

    assert current() == ["У пользователя три собаки"]


def test_an_addition_with_an_aside_after_it_copies_the_statement_before(db: Any) -> None:
    chat("I'm allergic to peanuts")
    chat("and to kiwi too, forgot to mention")

    assert current() == ["The user is allergic to kiwi", "The user is allergic to peanuts"]


@pytest.mark.parametrize(
    ("before", "after", "now"),
    [
        ("我每天跑步", "我膝盖受伤了，不跑步了", []),
        ("Ich trinke jeden Tag Kaffee", "Ich trinke keinen Kaffee mehr, nur noch Tee", []),
        ("我在广州生活", "工作调动，我已经搬到武汉了", ["用户住在武汉"]),
        ("我的生日是五月三号", "不好意思，我的生日是五月八号", ["用户的生日是五月八号"]),
        ("Моего кота зовут Барсик", "ой, не Барсик, а Мурзик", ["Кота пользователя зовут Мурзик"]),
    ],
)  # fmt: skip
def test_changes_said_in_everyday_chinese_german_and_russian(
    db: Any, before: str, after: str, now: list[str]
) -> None:
    chat(before)
    chat(after)

    assert current() == now


@pytest.mark.parametrize(
    ("before", "after", "now"),
    [
        ("I'm from Dublin originally", "Sorry, Cork, not Dublin. Dublin is where I studied",
         ["The user is from Cork originally"]),
        ("My favourite colour is green", "hmm, make that blue actually",
         ["The user's favourite colour is blue"]),
        ("my wife's name is Anna", "*Ana, one n", ["The user's wife's name is Ana"]),
        ("I drive a Toyota Corolla", "sorry, a Toyota Yaris, the Corolla was my old car",
         ["The user drives a Toyota Yaris"]),
    ],
)  # fmt: skip
def test_corrections_said_the_ways_people_correct_themselves_in_chat(
    db: Any, before: str, after: str, now: list[str]
) -> None:
    chat(before)
    chat(after)

    assert current() == now
    assert len(Fact.objects.filter(namespace=NS)) == 2  # the old value kept in the chain


@pytest.mark.parametrize(
    ("said", "now"),
    [
        (["my mom just turned 70, we had a party"], ["The user's mom is 70 years old"]),
        (["I have a sister in Leeds", "and a brother in Hull"],
         ["The user has a brother in Hull", "The user has a sister in Leeds"]),
        (["I play guitar", "oh and I've started learning the piano as well"],
         ["The user is learning the piano", "The user plays guitar"]),
        (["Телеграм у меня @olga_k"], ["Телеграм пользователя: @olga_k"]),
        (["Meine E-Mail ist jan.b@web.de",
          "Die alte Adresse gilt nicht mehr, neu: jan.b@posteo.de"],
         ["E-Mail des Nutzers: jan.b@posteo.de"]),
        (["Soy alérgico al polen", "y también a los gatos"],
         ["El usuario es alérgico a gatos", "El usuario es alérgico a polen"]),
    ],
)  # fmt: skip
def test_others_contacts_and_additions_said_in_passing(
    db: Any, said: list[str], now: list[str]
) -> None:
    for text in said:
        chat(text)

    assert current() == now


@pytest.mark.parametrize(
    ("before", "after", "ended_fact"),
    [
        ("我喜欢打篮球", "我以前喜欢打篮球，现在更喜欢羽毛球", "用户喜欢打篮球"),
        ("Я играю в футбол", "Раньше я играл в футбол, а теперь играю в теннис",
         "Пользователь играет в футбол"),
        ("Ich spiele Fußball", "Früher habe ich Fußball gespielt, jetzt spiele ich Tennis",
         "Der Nutzer spielt Fußball"),
    ],
)  # fmt: skip
def test_what_the_user_used_to_do_is_no_longer_current(
    db: Any, before: str, after: str, ended_fact: str
) -> None:
    chat(before)
    chat(after)

    assert ended_fact not in current()
    assert ended(ended_fact)


def test_a_religion_is_no_name(db: Any) -> None:
    chat("I'm Muslim, so I only eat halal")

    assert not [text for text in current() if "name" in text]
