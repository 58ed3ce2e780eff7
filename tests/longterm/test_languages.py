"""Every language the users speak: stems, stop words and segmentation, per namespace."""

# ruff: noqa: RUF001 (the conversations are in Chinese and Russian)
from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.test import TestCase

from tests.conftest import assistant, user
from ttmemory import memory
from ttmemory.checks import check_derived_values
from ttmemory.longterm import blind
from ttmemory.models import FactTerm, MemorySession
from ttmemory.services import reindex
from ttmemory.text import namespace_language, normalise_terms

pytestmark = pytest.mark.contract

CHINESE = [
    user("你好，我想订一张去上海的机票"),
    assistant("好的，请问您有什么特别的要求吗？"),
    user("我对花生过敏，我喜欢靠窗的座位"),
    assistant("明白了，我会记住的。"),
    user("我住在北京，我养了一只猫"),
    assistant("好的。"),
]
RUSSIAN = [
    user("Привет! Помоги спланировать поездку."),
    assistant("Конечно. Есть ли пожелания?"),
    user("У меня аллергия на арахис, и я предпочитаю место у окна."),
    assistant("Поняла, запомню."),
    user("Я живу в Берлине, моя сестра Лена работает учителем."),
    assistant("Хорошо."),
]


def chat(namespace: str, messages: list[dict[str, Any]]) -> MemorySession:
    session = memory.session_open(namespace=namespace, key="chat")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=messages)
    return session


def top(namespace: str, query: str) -> str:
    hits = memory.fact_recall(namespace=namespace, query=query, k=3).hits
    assert hits, query
    return hits[0][0].text


def keyword_matches(namespace: str, query: str) -> set[str]:
    """Texts of the facts whose blind-index postings hold a term of ``query`` (the keyword
    half of recall alone: the HashEmbedder's vectors can meet by a hash collision)."""
    hashes = blind.query_hashes(query, namespace=namespace)
    postings = FactTerm.objects.filter(namespace=namespace, term__in=list(hashes))
    return {posting.fact.text for posting in postings.select_related("fact")}


def test_chinese_is_segmented_so_a_word_inside_a_clause_is_found(db: Any) -> None:
    terms = normalise_terms("我对花生过敏，我喜欢靠窗的座位")
    assert {"花生", "过敏", "靠窗", "座位"} <= set(terms)
    assert normalise_terms("花生") == ["花", "花生", "生"]
    # A one-character word is a term too; a lone particle is not.
    assert normalise_terms("猫") == ["猫"] and normalise_terms("的") == []


def test_a_chinese_conversation_recalls_its_facts_by_keyword(db: Any) -> None:
    ns = "zh-user"
    session = chat(ns, CHINESE)
    for text in ["我对花生过敏", "我喜欢靠窗的座位", "我住在北京", "我养了一只猫"]:
        memory.fact_remember(namespace=ns, text=text)

    assert top(ns, "花生") == "我对花生过敏"
    assert top(ns, "我对什么过敏？") == "我对花生过敏"
    assert top(ns, "座位") == "我喜欢靠窗的座位"
    assert top(ns, "猫") == "我养了一只猫"
    assert top(ns, "住在哪里") == "我住在北京"

    hits = memory.message_search(namespace=ns, query="花生", k=3, window=0)
    assert hits[0].session == session and hits[0].seq == 3
    hits = memory.message_search(namespace=ns, query="北京", k=3, window=0)
    assert hits[0].seq == 5


def test_a_russian_conversation_recalls_its_facts_by_keyword(db: Any) -> None:
    ns = "ru-user"
    session = chat(ns, RUSSIAN)
    for text in [
        "У меня аллергия на арахис",
        "Предпочитаю место у окна",
        "Живу в Берлине",
        "Сестра Лена работает учителем",
    ]:
        memory.fact_remember(namespace=ns, text=text)

    # Other word forms than the stored ones: stems meet, stop words do not count.
    assert top(ns, "Какие у меня аллергии?") == "У меня аллергия на арахис"
    assert top(ns, "арахисом") == "У меня аллергия на арахис"
    assert top(ns, "В каком городе я живу?") == "Живу в Берлине"
    assert top(ns, "Кем работает сестра?") == "Сестра Лена работает учителем"
    assert top(ns, "окно") == "Предпочитаю место у окна"

    hits = memory.message_search(namespace=ns, query="аллергии на арахис", k=3, window=0)
    assert hits[0].session == session and hits[0].seq == 3
    hits = memory.message_search(namespace=ns, query="сестры учительница", k=3, window=0)
    assert hits[0].seq == 5


@pytest.mark.parametrize(
    ("language", "forms"),
    [
        ("german", "Allergien Allergie"),
        ("german", "Kinder Kind"),
        ("german", "wohne wohnst wohnen"),
        ("german", "arbeite arbeitet arbeiten"),
        ("spanish", "alergias alergia"),
        ("spanish", "trabajo trabajar trabaja"),
        ("spanish", "hermanas hermana"),
        ("french", "allergies allergie"),
        ("french", "enfants enfant"),
        ("french", "habite habiter"),
        ("russian", "аллергия аллергии аллергией"),
        ("russian", "сестра сестры сестрой"),
        ("english", "allergies allergic allergy"),
    ],
)
def test_word_forms_of_each_language_are_one_term(language: str, forms: str) -> None:
    terms = normalise_terms(forms, language=language)
    assert len(terms) == len(forms.split()) and len(set(terms)) == 1, terms


@pytest.mark.parametrize(
    ("language", "text", "kept"),
    [
        ("german", "Ich wohne mit der Familie in einer Wohnung", {"wohn", "famili", "wohnung"}),
        ("spanish", "Yo vivo con mi familia en una casa", {"viv", "famili", "cas"}),
        ("french", "Je vis avec ma famille dans une maison", {"vis", "famill", "maison"}),
        ("russian", "Я живу с моей семьей в этом доме", {"жив", "сем", "дом"}),
        ("english", "I live with my family in the house", {"live", "famil", "hous"}),
    ],
)
def test_stop_words_of_each_language_are_dropped(language: str, text: str, kept: set[str]) -> None:
    assert set(normalise_terms(text, language=language)) == kept


def test_negations_are_never_stop_words() -> None:
    for language, text in [
        ("german", "nicht kein"),
        ("spanish", "no nunca"),
        ("french", "ne pas"),
        ("russian", "не нет"),
        ("english", "not no"),
    ]:
        assert len(normalise_terms(text, language=language)) == 2, language
    assert normalise_terms("不") == ["不"]


def test_a_mixed_namespace_recalls_in_each_language(db: Any) -> None:
    """English, Russian, Chinese and Japanese in one namespace of the default language: each word is
    analysed by its script, so each fact meets a question in its own language."""
    ns = "mixed"
    memory.fact_remember(namespace=ns, text="I am allergic to peanuts")
    memory.fact_remember(namespace=ns, text="Моя сестра работает учителем")
    memory.fact_remember(namespace=ns, text="我喜欢靠窗的座位")
    memory.fact_remember(namespace=ns, text="Я переехал из Парижа в Берлин")
    memory.fact_remember(namespace=ns, text="私はピーナッツアレルギーです")

    assert top(ns, "any allergies?") == "I am allergic to peanuts"
    assert top(ns, "кем работает сестра") == "Моя сестра работает учителем"
    assert top(ns, "座位") == "我喜欢靠窗的座位"
    assert top(ns, "переехали в Берлин?") == "Я переехал из Парижа в Берлин"
    assert top(ns, "ピーナッツ") == "私はピーナッツアレルギーです"
    # One sentence in two scripts: each half keeps its own stems.
    assert normalise_terms("allergies и аллергии") == ["allerg", "аллерг"]


def test_a_namespace_language_decides_its_latin_words(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "NAMESPACE_LANGUAGES": {"de/*": "german"}}
    assert namespace_language("de/anna") == "german"
    assert namespace_language("user-1") == "english"
    for ns in ["de/anna", "user-1"]:
        memory.fact_remember(namespace=ns, text="Ich habe zwei Kinder")

    assert top("de/anna", "ein Kind?") == "Ich habe zwei Kinder"
    assert keyword_matches("de/anna", "ein Kind?") == {"Ich habe zwei Kinder"}
    # English stems leave "Kinder" and "Kind" apart: the override is what made them meet.
    assert keyword_matches("user-1", "ein Kind?") == set()


def test_changing_a_namespace_language_rebuilds_its_index(db: Any, settings: Any) -> None:
    german = "Meine Kinder gehen in Berlin zur Schule"
    memory.fact_remember(namespace="anna", text=german)
    other = memory.fact_remember(namespace="bob", text="Bob has two children")
    session = chat("anna", [user(german), assistant("Schön!")])
    assert keyword_matches("anna", "Kind") == set()
    assert memory.message_search(namespace="anna", query="Kind", k=3) == []

    settings.TTMEMORY = {**settings.TTMEMORY, "NAMESPACE_LANGUAGES": {"anna": "german"}}

    # Only anna's rows are stale: bob's language did not change.
    assert [f.namespace for f in reindex.stale_facts()] == ["anna"]
    assert reindex.stale_message_entries() == 2
    assert [m.id for m in check_derived_values(databases=["default"])] == ["ttmemory.W040"]

    out = io.StringIO()
    call_command("ttmemory_reindex", "--batch-size", "1", stdout=out)

    text = out.getvalue()
    assert "'anna' (german)" in text
    assert "reindexing facts [" in text and "1/1" in text
    assert "reindexing messages [" in text and "2/2" in text
    assert "done: 1 facts reindexed" in text
    assert reindex.stale_facts().count() == 0 and reindex.stale_message_entries() == 0
    assert check_derived_values(databases=["default"]) == []
    assert top("anna", "Kind") == german and keyword_matches("anna", "Kind") == {german}
    hits = memory.message_search(namespace="anna", query="Kind", k=3, window=0)
    assert [(h.session, h.seq) for h in hits] == [(session, 1)]
    assert top("bob", "children?") == other.text

    # Back to the default: anna is stale again, and a second run rebuilds it.
    settings.TTMEMORY = {**settings.TTMEMORY, "NAMESPACE_LANGUAGES": {}}
    assert reindex.stale_facts().count() == 1
    call_command("ttmemory_reindex", stdout=io.StringIO())
    assert reindex.stale_facts().count() == 0


def test_the_most_specific_key_decides_which_rows_are_stale(db: Any, settings: Any) -> None:
    namespaces = ["acme/a", "acme/fr-1", "acme/x", "other"]
    for ns in namespaces:
        memory.fact_remember(namespace=ns, text="Je travaille avec des chevaux")
    languages = {"acme/*": "german", "acme/fr*": "french", "acme/x": "spanish"}
    settings.TTMEMORY = {**settings.TTMEMORY, "NAMESPACE_LANGUAGES": languages}

    assert [namespace_language(ns) for ns in namespaces] == [
        "german",
        "french",
        "spanish",
        "english",
    ]
    assert sorted(f.namespace for f in reindex.stale_facts()) == namespaces[:3]
    memory.fact_remember(namespace="acme/x", text="Vivimos en Lyon")  # written current
    assert reindex.stale_facts().count() == 3

    call_command("ttmemory_reindex", stdout=io.StringIO())

    assert reindex.stale_facts().count() == 0
    assert keyword_matches("acme/fr-1", "cheval") == {"Je travaille avec des chevaux"}
    assert keyword_matches("other", "cheval") == set()


def test_rows_of_the_previous_normaliser_are_stale_until_rebuilt(db: Any) -> None:
    """NORMALISER_VERSION 3 (languages) makes the markers of version 2 stale."""
    fact = memory.fact_remember(namespace="zh-old", text="我对花生过敏")
    old = blind.fact_index_version().replace("-3-english.", "-2-english.")
    assert old != blind.fact_index_version()
    FactTerm.objects.filter(fact=fact).delete()  # version 2 indexed the clause as one word
    type(fact).objects.filter(pk=fact.pk).update(index_version=old)
    assert keyword_matches("zh-old", "花生") == set()
    assert [m.id for m in check_derived_values(databases=["default"])] == ["ttmemory.W040"]

    call_command("ttmemory_reindex", stdout=io.StringIO())

    assert reindex.stale_facts().count() == 0
    assert keyword_matches("zh-old", "花生") == {"我对花生过敏"}
