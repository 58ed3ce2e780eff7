"""Each fact posting carries its fact's length (``FactTerm.length`` = ``Fact.term_count``): recall
ranks BM25 from the postings index alone, so a wrong length is a wrong ranking. Every path that
writes postings keeps it, and migration 0026 fills it for the postings written before it."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from ttmemory import memory
from ttmemory.longterm import recall
from ttmemory.models import Fact, FactTerm

NS = "user-len"
TEXTS = [
    "Ada is allergic to peanuts and carries an epipen",
    "Ada prefers window seats",
    "Ada's sister Lena teaches maths in Porto and plays the cello on weekends",
]


def mismatched() -> list[tuple[int, int, int]]:
    """(fact, posting length, term_count) of every posting whose length is not its fact's."""
    return [
        (fact_id, length, term_count)
        for fact_id, length, term_count in FactTerm.objects.values_list(
            "fact_id", "length", "fact__term_count"
        )
        if length != term_count
    ]


def test_every_write_keeps_the_postings_length_of_their_fact(db: Any, settings: Any) -> None:
    first = memory.fact_remember(namespace=NS, text=TEXTS[0])
    memory.fact_remember(namespace=NS, text=TEXTS[1], kind="preference")
    memory.fact_remember(namespace=NS, text=TEXTS[0], metadata={"source": "again"})  # rewritten
    memory.fact_supersede(
        namespace=NS, fact_id=first.pk, text="Ada is no longer allergic to peanuts"
    )
    assert FactTerm.objects.count() > 10 and mismatched() == []
    assert len(set(FactTerm.objects.values_list("length", flat=True))) > 1

    settings.TTMEMORY = {**settings.TTMEMORY, "STEMMER_LANGUAGE": None}  # every fact stale
    call_command("ttmemory_reindex", stdout=io.StringIO())

    assert mismatched() == []


def _migrate(target: list[tuple[str, str]]) -> None:
    MigrationExecutor(connection).migrate(target)


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_lengths_of_postings_written_before_it() -> None:
    for text in TEXTS:
        memory.fact_remember(namespace=NS, text=text)
    ranked = recall.keyword_scores(NS, "who plays the cello in Porto, Ada or Lena?", 5)
    assert len(ranked) == 3
    try:
        _migrate([("ttmemory", "0025_message_term_newest_first")])  # no length column
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    assert mismatched() == [] and Fact.objects.filter(namespace=NS, term_count=0).count() == 0
    assert recall.keyword_scores(NS, "who plays the cello in Porto, Ada or Lena?", 5) == ranked
