"""ttmemory_reembed: every fact ends on the configured embedder, resumably, recall never mixes."""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from tests.conftest import raw_rows
from ttmemory import memory
from ttmemory.backends.embedders import HashEmbedder
from ttmemory.exceptions import EmbeddingError
from ttmemory.longterm import candidates
from ttmemory.longterm.embedding import reset_health
from ttmemory.models import Fact

NS = "user-re"
TEXTS = [
    "Ada is allergic to peanuts",
    "Ada prefers window seats on flights",
    "Ada's cat is called Pixel",
    "Ada lives in Oslo near the harbour",
    "Ada drinks her coffee black",
    "Ada plays the cello on Sundays",
    "Ada works as a structural engineer",
]


class FailingEmbedder(HashEmbedder):
    """A HashEmbedder whose service goes down after ``fail_after`` calls."""

    def __init__(self, *, fail_after: int, **options: Any) -> None:
        super().__init__(**options)
        self.fail_after = fail_after
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls > self.fail_after:
            raise EmbeddingError("embedding service unavailable (HTTP 503)")
        return super().embed(texts)


@pytest.fixture(autouse=True)
def _fresh_embedder_health() -> Iterator[None]:
    reset_health()
    yield
    reset_health()


def use_embedder(settings: Any, backend: str = "HashEmbedder", **options: Any) -> None:
    path = backend if "." in backend else f"ttmemory.backends.embedders.{backend}"
    settings.TTMEMORY = {**settings.TTMEMORY, "EMBEDDER": {"BACKEND": path, "OPTIONS": options}}


@pytest.fixture
def old_facts(db: Any, settings: Any) -> list[Fact]:
    """Seven facts embedded by HashEmbedder(64), then the settings switched to "hash-b" (32)."""
    use_embedder(settings, dimensions=64, model="hash-64")
    facts = [memory.fact_remember(namespace=NS, text=text) for text in TEXTS]
    use_embedder(settings, dimensions=32, model="hash-b")
    return facts


def vector_models() -> dict[int, tuple[str, int | None]]:
    return {
        pk: (model, dim)
        for pk, model, dim in Fact.objects.values_list("pk", "embedding_model", "embedding_dim")
    }


def reembed(*args: str) -> str:
    out = io.StringIO()
    call_command("ttmemory_reembed", *args, stdout=out)
    return out.getvalue()


def test_reembedding_moves_every_fact_to_the_new_model_and_a_rerun_does_nothing(
    old_facts: list[Fact],
) -> None:
    assert set(vector_models().values()) == {("hash-64", 64)}
    # Before: recall still works, by keyword (no vector of "hash-b" exists yet).
    before = memory.fact_recall(namespace=NS, query="peanuts allergy", k=1)
    assert before.hits[0][0].text == "Ada is allergic to peanuts"

    out = reembed("--batch-size", "3")

    assert "100%" in out and "7/7" in out
    assert "done: 7 facts re-embedded with 'hash-b' in 3 batches" in out
    assert set(vector_models().values()) == {("hash-b", 32)}
    expected = HashEmbedder(dimensions=32, model="hash-b")
    for fact in Fact.objects.all():
        assert fact.embedding is not None
        want = expected.embed_one(fact.text)
        assert all(
            math.isclose(a, b, abs_tol=1e-6) for a, b in zip(fact.embedding, want, strict=True)
        )
    assert "done: 0 facts re-embedded" in reembed("--batch-size", "3")
    after = memory.fact_recall(namespace=NS, query="peanuts allergy", k=1)
    assert after.mode == "hybrid" and after.hits[0][0].text == "Ada is allergic to peanuts"


def test_facts_without_a_vector_are_embedded_too(old_facts: list[Fact]) -> None:
    Fact.objects.filter(pk=old_facts[2].pk).update(
        embedding=None, embedding_model="", embedding_dim=None
    )

    out = reembed()

    assert "no vector: 1 facts, to re-embed" in out
    assert "done: 7 facts re-embedded" in out
    assert vector_models()[old_facts[2].pk] == ("hash-b", 32)


def test_dry_run_prints_counts_per_model_and_changes_nothing(
    old_facts: list[Fact], settings: Any
) -> None:
    Fact.objects.filter(pk=old_facts[0].pk).update(
        embedding=None, embedding_model="", embedding_dim=None
    )
    Fact.objects.filter(pk=old_facts[1].pk).update(
        embedding=[1.0] + [0.0] * 31, embedding_model="hash-b", embedding_dim=32
    )
    models_before = vector_models()

    out = reembed("--dry-run")

    assert "embedder: 'hash-b', 32 dimensions" in out
    assert "'hash-64' (64 dimensions): 5 facts, to re-embed" in out
    assert "'hash-b' (32 dimensions): 1 facts, current" in out
    assert "no vector: 1 facts, to re-embed" in out
    assert "dry run: 6 facts would be re-embedded" in out
    assert vector_models() == models_before


def test_an_interrupted_run_keeps_its_batches_and_a_rerun_finishes(
    old_facts: list[Fact], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_embedder(
        settings,
        "tests.management.test_reembed.FailingEmbedder",
        dimensions=32,
        model="hash-b",
        fail_after=1,
    )

    with pytest.raises(CommandError) as caught:
        reembed("--batch-size", "3")

    assert caught.value.returncode == 1
    assert "embedding service unavailable" in str(caught.value)
    assert "after 3 facts in 1 batches (kept; run again to resume)" in str(caught.value)
    done = {pk for pk, model in vector_models().items() if model == ("hash-b", 32)}
    assert done == {fact.pk for fact in old_facts[:3]}

    # Mixed population: vectors are only ever compared within the configured model.
    use_embedder(settings, dimensions=32, model="hash-b")
    seen: list[dict[int, float]] = []
    real_candidates = candidates.candidates

    def spy(*args: Any, **kwargs: Any) -> candidates.Candidates:
        found = real_candidates(*args, **kwargs)
        seen.append(found.vector)
        return found

    monkeypatch.setattr(candidates, "candidates", spy)
    result = memory.fact_recall(namespace=NS, query="Ada cello Sundays peanuts", k=7)

    assert result.mode == "hybrid"
    assert seen and set(seen[0]) <= done and seen[0]
    hit_texts = {fact.text for fact, _ in result.hits}
    assert "Ada plays the cello on Sundays" in hit_texts  # old model: found by keyword
    monkeypatch.undo()

    out = reembed("--batch-size", "3")

    assert "done: 4 facts re-embedded" in out
    assert set(vector_models().values()) == {("hash-b", 32)}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="HNSW indexes are PostgreSQL's")
def test_on_postgresql_the_hnsw_index_of_the_new_dimension_is_created(
    old_facts: list[Fact],
) -> None:
    out = reembed()

    assert "created the HNSW index ttm_fact_hnsw_32" in out
    assert raw_rows("SELECT 1 FROM pg_indexes WHERE indexname = 'ttm_fact_hnsw_32'") == [(1,)]


def test_a_bad_batch_size_is_a_usage_error(db: Any) -> None:
    with pytest.raises(CommandError, match="--batch-size must be positive") as caught:
        reembed("--batch-size", "-1")

    assert caught.value.returncode == 2
