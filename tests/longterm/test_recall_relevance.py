"""Recall leaves out hits that matched nothing, so they never reach the prompt."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks

from tests.conftest import user
from tests.longterm.test_facts import use_broken_embedder
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError

NS = "user-relevance"


@pytest.fixture
def facts(db: Any) -> None:
    memory.fact_remember(namespace=NS, text="Ada is allergic to peanuts")
    memory.fact_remember(namespace=NS, text="Ada prefers window seats")
    memory.fact_remember(namespace=NS, text="Ada's cat is called Pixel")


# Keyword scores are 0 for a query sharing no word with any fact. The lexical HashEmbedder's
# keyed buckets can collide, so its cosine may be above 0 for unrelated words: these tests pin
# the keyword path (embedder down), where "matched nothing" is exact.


def test_a_query_about_nothing_stored_returns_no_hits(facts: None, settings: Any) -> None:
    use_broken_embedder(settings)
    result = memory.fact_recall(namespace=NS, query="zebra quantum", k=3)

    assert result.mode == "keyword"
    assert result.hits == []


def test_relevant_hits_stay_and_min_score_raises_the_bar(facts: None) -> None:
    result = memory.fact_recall(namespace=NS, query="peanuts allergy", k=3)
    assert result.facts[0].text == "Ada is allergic to peanuts"
    assert all(score > 0 for _, score in result.hits)

    top = result.hits[0][1]
    stricter = memory.fact_recall(namespace=NS, query="peanuts allergy", k=3, min_score=top)
    assert stricter.hits == []  # at or below the floor is left out

    with pytest.raises(MemoryValidationError) as error:
        memory.fact_recall(namespace=NS, query="peanuts", min_score=-1)
    assert error.value.field == "min_score"


def test_the_prompt_holds_no_memory_that_matched_nothing(facts: None, settings: Any) -> None:
    use_broken_embedder(settings)
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add(session=session, message=user("Tell me about zebras"))

    prompt = memory.prompt_build(session=session, query="zebra quantum", max_tokens=500)

    assert "Ada" not in prompt.system


def test_a_negative_floor_in_settings_is_a_check_error(settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_MIN_SCORE": -0.5}

    errors = [m for m in run_checks(tags=["ttmemory"]) if m.id == "ttmemory.E029"]

    assert errors and "RECALL_MIN_SCORE" in errors[0].msg
