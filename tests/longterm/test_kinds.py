# ruff: noqa: RUF001  (Cyrillic is the point of a case here)
"""A fact is found by the kind of thing it names ("which instrument" -> "plays the cello"): the
rule files' ``[[kind]]`` words are indexed with the fact (``blind.fact_terms``)."""

from __future__ import annotations

from typing import Any

import pytest

from ttmemory import memory
from ttmemory.longterm import blind
from ttmemory.models import Fact
from ttmemory.services import reindex

pytestmark = pytest.mark.contract

OTHERS = [
    "The user lives in Leeds",
    "The user works as a nurse",
    "The user is allergic to peanuts",
    "The user likes hiking in the hills",
    "The user's sister is called Lena",
]


@pytest.mark.parametrize(
    ("namespace", "facts", "question", "found"),
    [
        ("kinds-en", [*OTHERS, "The user plays chess"], "which instrument does the user play",
         "The user plays the cello in a community orchestra"),
        ("kinds-en2", [*OTHERS, "The user wears a suit"], "the user's eyesight",
         "The user wears glasses for reading"),
        ("kinds-de", ["Der Nutzer wohnt in Köln", "Der Nutzer spielt Schach"],
         "welche Instrumente spielt der Nutzer", "Der Nutzer spielt abends gern Gitarre"),
        ("kinds-zh", ["用户住在北京", "用户会说英语"], "用户会什么乐器", "用户周末会弹钢琴"),
        ("kinds-ru", ["Пользователь живёт в Казани", "Пользователь носит бороду"],
         "у пользователя хорошее зрение", "Пользователь носит очки для чтения"),
    ],
)  # fmt: skip
def test_a_question_naming_the_kind_finds_the_fact_naming_a_member(
    db: Any, namespace: str, facts: list[str], question: str, found: str
) -> None:
    for text in [found, *(t for t in facts if t != found)]:  # the fact first: never the newest
        memory.fact_remember(namespace=namespace, text=text)

    recalled = memory.fact_recall(namespace=namespace, query=question, k=3).facts

    assert recalled[0].text == found


def test_the_kinds_words_count_once_and_not_in_the_facts_length(db: Any) -> None:
    said, added = blind.fact_terms("The user plays the cello and the piano", namespace="n")

    assert "instrument" in added and added.count("instrument") == 1
    fact = memory.fact_remember(namespace="n", text="The user plays the cello and the piano")
    assert fact.term_count == len(said)


def test_a_fact_indexed_before_the_kinds_changed_is_stale_until_reindexed(db: Any) -> None:
    fact = memory.fact_remember(namespace="kinds-old", text="The user plays the cello")
    Fact.objects.filter(pk=fact.pk).update(index_version=blind.index_version("kinds-old"))

    assert list(reindex.stale_facts()) == [fact]
    reindex.facts_reindex(batch_size=10)
    assert not reindex.stale_facts().exists()
    assert Fact.objects.get(pk=fact.pk).index_version == blind.fact_index_version("kinds-old")
