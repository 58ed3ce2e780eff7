"""Every keyword ranking scores BM25 as rank-bm25 does, on both databases.

The reference is rank-bm25's ``BM25Okapi`` (its term-frequency saturation, length
normalisation and summation) with Lucene's idf, ln(1 + (N - n + 0.5) / (n + 0.5)), the one
``ttmemory.longterm.bm25`` defines: Okapi's own idf goes negative for a word in more than half
the documents, which a blind index that cannot see stop words must not allow. The corpus is
tokenised by the one tokenizer (``blind.terms`` -> ``text.normalise_terms``), so the comparison
checks the scoring and the statistics each path reads, not the analysis.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.test import TestCase
from rank_bm25 import BM25Okapi

from tests.conftest import user
from ttmemory import memory
from ttmemory.longterm import blind, bm25, candidates, episodes, fusion, recall

pytestmark = pytest.mark.contract

NS = "user-bm25"
TEXTS = [
    "Ada is allergic to peanuts and carries an epipen everywhere",
    "Ada prefers window seats on long flights to Tokyo",
    "Ada's cat Pixel is allergic to fish and to dust",
    "Ada lives in Lisbon near the river with her cat",
    "Ada plays the cello on Sundays with friends from Lisbon",
    "Tom, Ada's brother, lives in Porto and plays the cello too",
    "Peanut butter is Tom's favourite snack on long flights",
    "Ada flies to Tokyo in March for work and to see friends",
]
QUESTIONS = [
    "what is Ada allergic to and what does she carry",
    "where does her brother Tom live",
    "long flights to Tokyo",
    "cello with friends on Sundays",
]


class LuceneIdfBM25(BM25Okapi):
    """rank-bm25's Okapi BM25 with Lucene's idf (never negative, no epsilon floor)."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {
            word: math.log(1.0 + (self.corpus_size - freq + 0.5) / (freq + 0.5))
            for word, freq in nd.items()
        }


def reference(texts: list[str], query: str | list[str], *, facts: bool = True) -> list[float]:
    """rank-bm25's scores of ``texts`` for ``query`` (a text, or its terms). A fact is indexed
    by its words and, once each, the words naming its slot and its kinds (``blind.fact_terms``),
    its length its own words: the reference's documents hold both, its lengths only the first."""
    indexed = [
        blind.fact_terms(text, namespace=NS) if facts else (blind.terms(text, namespace=NS), [])
        for text in texts
    ]
    model = LuceneIdfBM25([said + added for said, added in indexed], k1=bm25.K1, b=bm25.B)
    model.doc_len = [len(said) for said, _ in indexed]
    model.avgdl = sum(model.doc_len) / len(model.doc_len)
    asked = blind.terms(query, namespace=NS) if isinstance(query, str) else query
    return [float(s) for s in model.get_scores(list(dict.fromkeys(asked)))]


@pytest.fixture
def facts(db: Any) -> list[int]:
    return [memory.fact_remember(namespace=NS, text=text).pk for text in TEXTS]


def expected(ids: list[int], query: str | list[str]) -> dict[int, float]:
    return {pk: s for pk, s in zip(ids, reference(TEXTS, query), strict=True) if s > 0}


def assert_scores(got: dict[Any, float], want: dict[Any, float]) -> None:
    assert set(got) == set(want)
    for key, score in want.items():
        assert got[key] == pytest.approx(score, rel=1e-9), key


def test_the_candidate_statement_scores_as_rank_bm25(facts: list[int]) -> None:
    """The SQL of recall's one statement (``candidates``), keyword only and hybrid."""
    for question in QUESTIONS:
        terms = blind.query_hashes(question, namespace=NS)
        for vector in (None, [1.0] + [0.0] * 383):
            found = candidates.candidates(
                NS, terms=terms, vector=vector, model="m", limit=50, kinds=None
            )
            assert_scores(found.keyword, expected(facts, question))


def test_the_orm_ranking_scores_as_rank_bm25(facts: list[int]) -> None:
    """``recall.keyword_scores``: the path of a metadata filter (Django expressions)."""
    for question in QUESTIONS:
        got = recall.keyword_scores(NS, question, 50)
        assert_scores(got, expected(facts, question))


def test_feedback_scores_as_rank_bm25(facts: list[int]) -> None:
    """``fusion.fact_related``: a seed fact's words asked of the other facts (Python)."""
    seed = facts[3]  # "Ada lives in Lisbon near the river with her cat"
    got = fusion.fact_related(NS, [seed], exclude=[], among=facts)
    said, added = blind.fact_terms(TEXTS[3], namespace=NS)  # "cat" adds "pet", "animal", ...
    assert added
    want = expected(facts, said + added)
    want.pop(seed)
    assert_scores(got, want)


def test_message_search_scores_as_rank_bm25(db: Any) -> None:
    """``episodes.keyword_scores`` without neighbours (window 0) is plain BM25 over messages."""
    session = memory.session_open(namespace=NS, key="chat")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=[user(text) for text in TEXTS])
    for question in QUESTIONS:
        got = episodes.keyword_scores(NS, question, window=0, limit=50)
        scores = reference(TEXTS, question, facts=False)
        want = {(session.pk, seq): s for seq, s in enumerate(scores, 1) if s}
        assert_scores(got, want)
