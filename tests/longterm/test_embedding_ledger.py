"""Embedding calls in the cost ledger (tokens, model, latency, status) and the daily token
budget shared by LLM and embedding calls, against the strict fake OpenAI server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import TestCase

from tests.backends.test_embedders import MODEL, use_fake_embedder
from tests.conftest import user
from tests.fakes.openai_server import FakeOpenAI
from ttmemory import memory
from ttmemory.backends.llm import ScriptedLLM
from ttmemory.jobs import ledger_calls
from ttmemory.longterm.embedding import reset_health
from ttmemory.models import Fact, LedgerEntry
from ttmemory.services.ledger import tokens_spent_today

NS = "ledger-user"
SECRET_TEXT = "Ada keeps her spare key under the blue flowerpot"


@pytest.fixture
def fake(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    reset_health()
    with FakeOpenAI() as server:
        use_fake_embedder(settings, server, monkeypatch)
        yield server
    reset_health()


def rows(**filters: Any) -> list[tuple[Any, ...]]:
    return list(
        LedgerEntry.objects.filter(namespace=NS, **filters)
        .order_by("pk")
        .values_list("purpose", "model", "prompt_tokens", "completion_tokens", "status")
    )


def recall(query: str) -> Any:
    """A recall, then the buffered ledger rows handed over (what the background does)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        result = memory.fact_recall(namespace=NS, query=query)
        ledger_calls.flush(inline=False)
    return result


def test_remember_and_recall_record_their_embedding_calls(db: Any, fake: FakeOpenAI) -> None:
    memory.fact_remember(namespace=NS, text=SECRET_TEXT)
    result = recall("where is the spare key?")

    assert result.mode == "hybrid"
    assert len(fake.requests_to("/v1/embeddings")) == 2  # one call each
    # Tokens as the server reported them, per call.
    remembered = len(SECRET_TEXT.split())
    assert rows() == [
        ("embed", MODEL, remembered, 0, "ok"),
        ("embed_query", MODEL, 6, 0, "ok"),  # where is the spare key ?
    ]
    assert all(entry.latency_ms > 0 for entry in LedgerEntry.objects.filter(namespace=NS))
    assert tokens_spent_today(namespace=NS) == remembered + 6
    # Counts and timings only.
    for entry in LedgerEntry.objects.filter(namespace=NS).values():
        assert not any("flowerpot" in str(value) for value in entry.values())


def test_a_failed_embedding_call_is_recorded_as_an_error(db: Any, fake: FakeOpenAI) -> None:
    fake.fail_next(400)
    memory.fact_remember(namespace=NS, text=SECRET_TEXT)

    assert rows() == [("embed", MODEL, 0, 0, "error")]
    assert Fact.objects.get(namespace=NS).embedding is None  # stored, found by keyword
    assert recall("spare key").hits[0][0].text == SECRET_TEXT  # the breaker: no new call
    assert len(rows()) == 1


def test_the_daily_budget_covers_embeddings_and_the_llm(
    db: Any, fake: FakeOpenAI, settings: Any
) -> None:
    ScriptedLLM.reset('{"facts": []}')
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "DAILY_TOKEN_BUDGET": 11,
        "LLM": {"BACKEND": "ttmemory.backends.llm.ScriptedLLM", "OPTIONS": {"model": "gpt-test"}},
    }
    memory.fact_remember(namespace=NS, text=SECRET_TEXT)  # 9 tokens: under the budget
    assert recall("spare key").mode == "hybrid"  # 2 more: the budget of 11 is spent
    requests = len(fake.requests)

    memory.fact_remember(namespace=NS, text="Ada's cat is called Pixel")
    result = recall("the cat")
    assert memory.facts_learn(namespace=NS, messages=[user("I love jazz")]) == []

    assert len(fake.requests) == requests  # nothing more was sent to the embedder
    assert ScriptedLLM.requests == []  # nor to the LLM: embedding tokens count for it too
    assert Fact.objects.get(namespace=NS, text_hash__isnull=False, embedding__isnull=True)
    assert result.mode == "keyword" and "budget" in result.fallback_reason
    assert result.hits[0][0].text == "Ada's cat is called Pixel"
    assert [(purpose, status) for purpose, _m, _p, _c, status in rows()] == [
        ("embed", "ok"),
        ("embed_query", "ok"),
        ("embed", "skipped"),
        ("embed_query", "skipped"),
        ("extract", "skipped"),
    ]
    # Another namespace still has its own budget.
    memory.fact_remember(namespace="other-user", text="Bob likes tea")
    assert Fact.objects.get(namespace="other-user").embedding is not None


def test_a_local_embedder_costs_nothing_and_records_nothing(db: Any) -> None:
    memory.fact_remember(namespace=NS, text=SECRET_TEXT)
    recall("spare key")

    assert rows() == []
