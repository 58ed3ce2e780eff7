"""Keyword terms come from the Snowball stemmer: word forms meet, the language is a setting."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command

from ttmemory import memory
from ttmemory.checks import check_derived_values
from ttmemory.services import reindex
from ttmemory.text import normalise_terms

pytestmark = pytest.mark.contract


@pytest.mark.parametrize(
    "words",
    [
        "allergies allergic allergy",
        "speed speeds",
        "use used uses using",
        "note notes noted",
        "run running runs",
        "move moved moving",
    ],
)
def test_forms_of_a_word_are_one_term(words: str) -> None:
    assert len(set(normalise_terms(words))) == 1, normalise_terms(words)


def test_different_words_stay_apart() -> None:
    assert len(set(normalise_terms("note not speed spend used user"))) == 6


def test_any_allergies_finds_the_allergic_fact(db: Any) -> None:
    fact = memory.fact_remember(namespace="user-t", text="Ada is allergic to peanuts")
    memory.fact_remember(namespace="user-t", text="Ada prefers window seats")

    hits = memory.fact_recall(namespace="user-t", query="any allergies?", k=5).hits

    assert hits and hits[0][0].pk == fact.pk and hits[0][1] > 0


def test_another_language_makes_the_index_stale_until_reindexed(db: Any, settings: Any) -> None:
    fact = memory.fact_remember(namespace="user-t", text="Eu moro em Lisboa com gatos")
    settings.TTMEMORY = {**settings.TTMEMORY, "STEMMER_LANGUAGE": "portuguese"}

    assert normalise_terms("gatos gato") == ["gat", "gat"]
    assert [m.id for m in check_derived_values(databases=["default"])] == ["ttmemory.W040"]
    assert reindex.stale_facts().count() == 1

    call_command("ttmemory_reindex", stdout=io.StringIO())

    assert check_derived_values(databases=["default"]) == []
    hits = memory.fact_recall(namespace="user-t", query="gato", k=3).hits
    assert [f.pk for f, _ in hits] == [fact.pk]


def test_no_stemmer_keeps_whole_words(settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "STEMMER_LANGUAGE": None}

    assert normalise_terms("Allergies notes") == ["allergies", "notes"]
