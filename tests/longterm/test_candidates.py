"""Recall's one-statement candidate lists rank exactly as the ORM's keyword and vector queries.

The fast path (``longterm/candidates.py``) must not change what recall returns: same BM25
scores, same cosine similarities, same filters (kinds, superseded, expired), on every database.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ttmemory import memory
from ttmemory.backends.embedders import get_embedder
from ttmemory.longterm import blind, bm25, candidate_sql, candidates, fusion, recall, vector_cache
from ttmemory.longterm.vector_index import SHIPPED_DIMENSIONS, index_name
from ttmemory.models import Fact
from ttmemory.models.vectors import PGVECTOR, vector_storage

NS = "user-candidates"
TEXTS = [
    "Ada is allergic to peanuts and carries an epipen",
    "Ada prefers window seats on long flights",
    "Ada's cat Pixel is allergic to fish",
    "Ada lives in Lisbon near the river",
    "Ada plays the cello on Sundays with friends",
    "Ada's brother Tom lives in Porto",
    "Peanut butter is Tom's favourite snack",
    "Ada flies to Tokyo in March for work",
]
QUESTIONS = [
    "what is Ada allergic to and what does she carry",
    "where does her brother live these days",
    "which seat does she like on long flights",
    "does the cat have any allergies at all",
    "zebra quantum",
]


def ask(
    question: str,
    *,
    kinds: list[str] | None = None,
    with_vector: bool = True,
    context: candidates.Context | None = None,
) -> tuple[dict[int, int], list[float] | None, candidates.Candidates]:
    """``question``'s blind-index terms, its vector (None unless ``with_vector``) and the
    candidate lists for them (limit 5)."""
    embedder = get_embedder()
    terms = blind.query_hashes(question, namespace=NS)
    vector = embedder.embed([question])[0] if with_vector else None
    found = candidates.candidates(
        NS, terms=terms, vector=vector, model=embedder.model, limit=5, kinds=kinds,
        context=context,
    )  # fmt: skip
    return terms, vector, found


@pytest.fixture
def facts(db: Any) -> None:
    for i, text in enumerate(TEXTS):
        memory.fact_remember(namespace=NS, text=text, kind="note" if i % 3 == 0 else "fact")
    memory.fact_remember(namespace="someone-else", text="Ada is allergic to peanuts")
    expired = memory.fact_remember(namespace=NS, text="Ada is allergic to penicillin")
    Fact.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - dt.timedelta(days=1))
    old = memory.fact_remember(namespace=NS, text="Ada lives in Porto with Tom")
    Fact.objects.filter(pk=old.pk).update(valid_to=timezone.now())


@pytest.mark.parametrize("kinds", [None, ["fact"], ["note", "fact"]])
def test_both_lists_equal_the_orm_queries(facts: None, kinds: list[str] | None) -> None:
    embedder = get_embedder()
    for question in QUESTIONS:
        terms, vector, found = ask(question, kinds=kinds)

        keyword = recall.keyword_scores(NS, question, 5, kinds=kinds, terms=terms)
        facts = recall.filtered_facts(NS, kinds=kinds, metadata=None)
        assert vector is not None
        by_vector = recall.vector_scores(facts, vector, embedder.model, 5, approximate=False)
        assert list(found.keyword) == list(keyword), question
        assert list(found.keyword.values()) == pytest.approx(list(keyword.values()), rel=1e-9)
        # Equal similarities may be cut at the limit in another order (the HashEmbedder ties).
        for pk in set(found.vector) & set(by_vector):
            assert found.vector[pk] == pytest.approx(by_vector[pk], abs=1e-6)
        assert sorted(found.vector.values()) == pytest.approx(sorted(by_vector.values()), abs=1e-6)
        ended = Fact.objects.filter(namespace=NS).exclude(pk__in=facts.values("pk"))
        assert not set(found.keyword) & set(ended.values_list("pk", flat=True))
        assert found.facts == Fact.objects.filter(namespace=NS).count()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a binary query vector is pgvector's")
@pytest.mark.parametrize("cache_mb", [128, 0])
def test_the_binary_query_vector_ranks_as_its_text_form(
    facts: None, settings: Any, monkeypatch: Any, cache_mb: int
) -> None:
    """The query vector bound in pgvector's binary form (``binding.BinaryVector``) gives the
    distances its text form gives, to the bit (a dense vector: every float's digits count)."""
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_VECTOR_CACHE_MB": cache_mb}
    model = get_embedder().model
    for seed in range(3):
        vector = [float(x) for x in np.random.default_rng(seed).standard_normal(384)]

        def vector_list(vector: list[float] = vector) -> dict[int, float]:
            found = candidates.candidates(
                NS, terms={}, vector=vector, model=model, limit=50, kinds=None
            )
            return found.vector

        for _ in range(vector_cache.READ_AFTER_RECALLS + 1):  # from memory too, with 128 MB
            binary = vector_list()
        with monkeypatch.context() as patched:
            patched.setattr(candidate_sql.binding, "server_binds", lambda: False)
            text = vector_list()
        assert len(binary) > 5
        assert list(binary.items()) == list(text.items())


def test_without_a_vector_only_keywords_come_back(facts: None) -> None:
    terms = blind.query_hashes("peanuts", namespace=NS)

    found = candidates.candidates(NS, terms=terms, vector=None, model="", limit=5, kinds=None)

    assert found.vector == {}
    texts = {f.text for f in Fact.objects.filter(pk__in=found.keyword)}
    assert texts == {  # stemmed: "peanut" is "peanuts"; not the other namespace's, not expired
        "Ada is allergic to peanuts and carries an epipen",
        "Peanut butter is Tom's favourite snack",
    }


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement needs PostgreSQL")
@pytest.mark.parametrize("cache_mb", [128, 0])
def test_on_postgresql_recall_is_one_statement_and_one_read_of_the_hits(
    facts: None, settings: Any, cache_mb: int
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_VECTOR_CACHE_MB": cache_mb}
    memory.fact_recall(namespace=NS, query="peanuts", k=3)  # the namespace's size is known now
    # Unchanged since: its vectors are read into memory once (a third statement, this time
    # only; longterm/vector_cache.py), and the statement below ranks them.
    memory.fact_recall(namespace=NS, query="peanuts", k=3)

    with CaptureQueriesContext(connection) as queries:
        result = memory.fact_recall(
            namespace=NS, query="what is Ada allergic to", k=3, context=False
        )

    assert result.mode == "hybrid" and result.hits
    assert len(queries.captured_queries) == 2, [q["sql"][:80] for q in queries.captured_queries]
    hits = queries.captured_queries[1]["sql"]
    assert '"embedding"' not in hits.split("FROM")[0]  # the hits are read without their vectors

    # Neighbour context (on by default) is fetched by the same statement: still two.
    with CaptureQueriesContext(connection) as queries:
        memory.fact_recall(namespace=NS, query="what is Ada allergic to", k=3)
    assert len(queries.captured_queries) == 2, [q["sql"][:80] for q in queries.captured_queries]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="HNSW indexes are pgvector's")
def test_the_migrations_create_pgvectors_hnsw_index_per_shipped_dimension(db: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'ttmemory_fact' "
            "AND indexname LIKE 'ttm_fact_hnsw_%%'"
        )
        found = dict(cursor.fetchall())

    for dimensions in SHIPPED_DIMENSIONS:
        definition = found[index_name(dimensions)]
        assert "USING hnsw" in definition
        assert f"(embedding)::vector({dimensions})) vector_cosine_ops" in definition
        assert f"WHERE (embedding_dim = {dimensions})" in definition
        assert "m='16'" in definition and "ef_construction='64'" in definition


@pytest.mark.parametrize("kinds", [None, ["fact"]])
@pytest.mark.parametrize("with_vector", [True, False])
def test_the_neighbour_runs_fetched_with_the_candidates_equal_fact_runs(
    facts: None, kinds: list[str] | None, with_vector: bool
) -> None:
    for question in QUESTIONS:
        context = candidates.Context(seeds=4, reach=2, vector_weight=0.3)

        _, _, found = ask(question, kinds=kinds, with_vector=with_vector, context=context)

        weight = 0.3 if found.keyword and found.vector else 0.0
        scores = fusion.fuse(found.keyword, found.vector, vector_weight=weight)
        best = [pk for pk, _ in sorted(scores.items(), key=lambda i: (-i[1], i[0]))[:4]]
        expected = fusion.fact_runs(NS, best, reach=2, kinds=kinds, metadata=None)
        # The ORM's statement (used with a metadata filter) finds the same runs.
        assert fusion.orm_fact_runs(NS, best, reach=2, kinds=kinds, metadata=None) == expected
        if with_vector and vector_storage(connection) != PGVECTOR:
            assert found.runs is None  # vectors ranked in numpy: fetched by fact_runs instead
            continue
        assert found.runs is not None  # the statement's own, on every database
        assert {seed: found.runs[seed] for seed in best} == expected, question


@pytest.mark.skipif(connection.vendor != "postgresql", reason="HNSW search is pgvector's")
def test_in_a_large_namespace_keywords_rank_exactly_while_the_postings_fit_the_budget(
    facts: None, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_EXACT_LIMIT": 0}  # "large": HNSW
    for question in QUESTIONS:
        terms, _, found = ask(question)

        keyword = recall.keyword_scores(NS, question, 5, terms=terms)
        assert list(found.keyword) == list(keyword), question
        assert list(found.keyword.values()) == pytest.approx(list(keyword.values()), rel=1e-9)


def _large(settings: Any, large: bool) -> None:
    if large:
        if connection.vendor != "postgresql":
            pytest.skip("HNSW search is pgvector's")
        settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_EXACT_LIMIT": 0}  # "large": HNSW


def _budget(monkeypatch: pytest.MonkeyPatch, postings: int) -> None:
    """A postings budget of ``postings``, kept in a namespace of any size (these few facts)."""
    monkeypatch.setattr(bm25, "POSTINGS_BUDGET", postings)
    monkeypatch.setattr(bm25, "BUDGET_ABOVE_FACTS", 0)


@pytest.mark.parametrize("with_vector", [False, True])
def test_a_namespace_of_few_facts_reads_every_words_postings(
    facts: None, monkeypatch: pytest.MonkeyPatch, with_vector: bool
) -> None:
    """At or below BUDGET_ABOVE_FACTS facts no budget applies: a frequent word's facts are
    keyword candidates by themselves, ranked as uncapped BM25 ranks them."""
    monkeypatch.setattr(bm25, "POSTINGS_BUDGET", 1)  # would leave "ada" out in a large one
    assert Fact.objects.filter(namespace=NS).count() <= bm25.BUDGET_ABOVE_FACTS
    question = "does ada still play the cello"
    terms, _, found = ask(question, with_vector=with_vector)

    exact = recall.keyword_scores(NS, question, 5, terms=terms)
    assert len(exact) > 1
    assert list(found.keyword)[: len(exact)] == list(exact)
    for pk in exact:
        assert found.keyword[pk] == pytest.approx(exact[pk], rel=1e-9)


@pytest.mark.parametrize("large", [False, True])
def test_a_frequent_words_postings_only_score_the_candidates(
    facts: None, settings: Any, monkeypatch: pytest.MonkeyPatch, large: bool
) -> None:
    """In any namespace (issue 36: the cost of a repetitive vocabulary), exact vector search
    or HNSW: a word beyond the postings budget finds no candidates by itself."""
    _large(settings, large)
    _budget(monkeypatch, 1)  # "cello" (1 fact) fits, "ada" not
    cello = Fact.objects.get(namespace=NS, text_hash=blind.text_hash(TEXTS[4], namespace=NS))
    # The other facts are no vector candidates (as if embedded by another model).
    Fact.objects.filter(namespace=NS).exclude(pk=cello.pk).update(embedding_model="another")
    question = "does ada still play the cello"
    terms, _, found = ask(question)

    exact = recall.keyword_scores(NS, question, 5, terms=terms)
    assert len(exact) > 1  # uncapped, facts with only "ada" are keyword candidates too
    # Capped: the rare word's fact alone, scored by every query word ("ada" too).
    assert list(found.keyword) == [cello.pk] == list(exact)[:1]
    assert found.keyword[cello.pk] == pytest.approx(exact[cello.pk], rel=1e-9)
    with bm25.uncapped():  # the budget lifted: uncapped BM25's ranking
        _, _, everything = ask(question)
    assert list(everything.keyword) == list(exact)


def test_a_vector_candidate_is_scored_by_the_frequent_words_too(
    facts: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _budget(monkeypatch, 1)  # "cello" (1 fact) fits, "ada" not
    cello = Fact.objects.get(namespace=NS, text_hash=blind.text_hash(TEXTS[4], namespace=NS))
    lisbon = Fact.objects.get(namespace=NS, text_hash=blind.text_hash(TEXTS[3], namespace=NS))
    # Only "Ada lives in Lisbon" can be a vector candidate: it holds "ada", not "cello".
    Fact.objects.filter(namespace=NS).exclude(pk=lisbon.pk).update(embedding_model="another")
    question = "does ada still play the cello"
    terms, _, found = ask(question)

    exact = recall.keyword_scores(NS, question, 5, terms=terms)
    assert set(found.keyword) == {cello.pk, lisbon.pk}
    for pk in found.keyword:
        assert found.keyword[pk] == pytest.approx(exact[pk], rel=1e-9)


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("budget", [1, 0])
def test_keyword_only_recall_reads_the_rarest_words_postings_only(
    facts: None, settings: Any, monkeypatch: pytest.MonkeyPatch, budget: int, large: bool
) -> None:
    _large(settings, large)
    # 1: "cello" (1 fact) fits, "ada" not; 0: nothing fits, the rarest word is read anyway.
    _budget(monkeypatch, budget)
    cello = Fact.objects.get(namespace=NS, text_hash=blind.text_hash(TEXTS[4], namespace=NS))
    question = "does ada still play the cello"
    terms, _, found = ask(question, with_vector=False)

    exact = recall.keyword_scores(NS, question, 5, terms=terms)
    assert len(exact) > 1  # uncapped, facts with only "ada" are keyword candidates too
    assert found.vector == {}
    # Capped: the rare word's fact alone, scored by every query word ("ada" too).
    assert list(found.keyword) == [cello.pk] == list(exact)[:1]
    assert found.keyword[cello.pk] == pytest.approx(exact[cello.pk], rel=1e-9)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="HNSW search is pgvector's")
@pytest.mark.parametrize("in_transaction", [False, True])
def test_in_a_large_namespace_the_hnsw_settings_hold_for_the_statement_only(
    transactional_db: None, facts: None, settings: Any, in_transaction: bool
) -> None:
    # transactional_db: no test transaction around it, so recall runs in autocommit.
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_EXACT_LIMIT": 0}  # "large": HNSW
    memory.fact_recall(namespace=NS, query="peanuts", k=3)  # the namespace's size is known now
    with CaptureQueriesContext(connection) as queries:
        if in_transaction:
            with transaction.atomic():
                result = memory.fact_recall(namespace=NS, query="what is Ada allergic to", k=3)
                outside = _ef_search()
        else:
            result = memory.fact_recall(namespace=NS, query="what is Ada allergic to", k=3)
            outside = _ef_search()

    assert result.mode == "hybrid" and result.hits
    assert outside != "100"  # the settings ended with the statement (or its savepoint)
    sql = [q["sql"] for q in queries.captured_queries]
    assert sum("<=>" in s for s in sql) == 1 and any("hnsw.ef_search = 100" in s for s in sql)
    if not in_transaction:  # settings and statement in one round trip, then the hits
        assert "hnsw.ef_search = 100" in sql[0] and "<=>" in sql[0], [s[:60] for s in sql]
        assert sql[1].startswith('SELECT "ttmemory_fact"."id"'), [s[:60] for s in sql]


def _ef_search() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search', true)")
        return str(cursor.fetchone()[0] or "")


def test_ended_facts_ranked_first_leave_the_cut_to_current_ones(
    facts: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyword list is ranked from the postings alone, then the best ``limit`` x
    ``SCORED_AHEAD`` are checked against their fact rows: an expired or ended fact that
    outscores the current ones takes no place of theirs while the cut holds them."""
    monkeypatch.setattr(candidate_sql, "SCORED_AHEAD", 2)
    question = "is Ada allergic to penicillin or peanuts"  # the expired fact matches best
    terms = blind.query_hashes(question, namespace=NS)
    found = candidates.candidates(NS, terms=terms, vector=None, model="", limit=3, kinds=None)

    exact = recall.keyword_scores(NS, question, 3, terms=terms)
    assert len(exact) == 3
    assert list(found.keyword) == list(exact)
    expired = Fact.objects.get(namespace=NS, expires_at__isnull=False)
    assert expired.pk not in found.keyword


@pytest.mark.parametrize("ahead", [1, 4])
def test_a_kind_asked_for_is_found_below_any_number_of_other_kinds_matches(
    facts: None, monkeypatch: pytest.MonkeyPatch, ahead: int
) -> None:
    """With ``kinds`` every match is ranked before the fact rows are checked: the kind asked
    for may be rare among the best matches."""
    monkeypatch.setattr(candidate_sql, "SCORED_AHEAD", ahead)
    for i in range(6):  # six shorter "fact" facts that outscore the "note" on these words
        memory.fact_remember(namespace=NS, text=f"Ada lives by the river {i}", kind="fact")
    question = "does Ada live by the river"
    terms = blind.query_hashes(question, namespace=NS)
    note = Fact.objects.get(namespace=NS, text_hash=blind.text_hash(TEXTS[3], namespace=NS))
    assert note.kind == "note"
    ranked = recall.keyword_scores(NS, question, 10, kinds=None, terms=terms)
    assert list(ranked).index(note.pk) >= 6  # below every one of them

    found = candidates.candidates(
        NS, terms=terms, vector=None, model="", limit=1, kinds=[note.kind]
    )

    assert list(found.keyword) == [note.pk]
    assert list(found.keyword) == list(
        recall.keyword_scores(NS, question, 1, kinds=[note.kind], terms=terms)
    )
