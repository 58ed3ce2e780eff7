"""Approximate recall: the HNSW index (iterative scan) finds what exact search finds.

PostgreSQL only: elsewhere vector search is exact, in numpy.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ttmemory import memory
from ttmemory.backends.embedders import Embedder
from ttmemory.longterm import recall
from ttmemory.longterm.vector_index import ensure_hnsw_index, index_name
from ttmemory.models import Fact

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="approximate search needs pgvector"
)

DIM = 64
CLUSTERS = 60
VECTORS = 20_000
QUERIES = 50
MODEL = "test-clusters-64"
NS = "ann-user"


class ClusterEmbedder(Embedder):
    """Returns the vector registered for each query text: the test controls the geometry."""

    model = MODEL
    dimensions = DIM
    vectors: dict[str, list[float]] = {}
    #: Every vector candidate counts as matching the query (the test's geometry is random
    #: clusters; it measures the search, not the evidence floor of fusion.unpadded).
    recall_evidence_similarity = -1.0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vectors[t] for t in texts]


def unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def load_clusters(namespace: str, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` facts around CLUSTERS centres, inserted with COPY; returns the centres."""
    centres = unit(rng.standard_normal((CLUSTERS, DIM)))
    points = unit(
        centres[rng.integers(0, CLUSTERS, count)] + 0.12 * rng.standard_normal((count, DIM))
    )
    field = Fact._meta.get_field("text")
    now = dt.datetime.now(dt.UTC)
    with connection.cursor() as cursor:
        with cursor.cursor.copy(
            "COPY ttmemory_fact (namespace, kind, text, text_hash, metadata, embedding, "
            "embedding_model, embedding_dim, term_count, source_seqs, valid_from, "
            "created_at, updated_at) FROM STDIN"
        ) as copy:
            for i, point in enumerate(points):
                vector = "[" + ",".join(f"{x:.6f}" for x in point) + "]"
                text_hash = f"{namespace}-{i}"  # each text is encrypted for its own row
                blob = field.get_db_prep_value(
                    field.seal("synthetic", (namespace, text_hash)), connection
                )
                copy.write_row(
                    (namespace, "fact", blob, text_hash, "{}", vector, MODEL, DIM, 1,
                     "[]", now, now, now)
                )  # fmt: skip
        cursor.execute("ANALYZE ttmemory_fact")
    return centres


def queries(centres: np.ndarray, rng: np.random.Generator) -> list[list[float]]:
    near = centres[rng.integers(0, CLUSTERS, QUERIES)] + 0.12 * rng.standard_normal((QUERIES, DIM))
    return [[float(x) for x in v] for v in unit(near)]


@pytest.fixture
def clustered(db: Any, settings: Any) -> list[list[float]]:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EMBEDDER": {"BACKEND": "tests.longterm.test_ann.ClusterEmbedder"},
        "RECALL_EXACT_LIMIT": 5000,
    }
    rng = np.random.default_rng(42)
    centres = load_clusters(NS, VECTORS, rng)
    assert ensure_hnsw_index(DIM)
    return queries(centres, rng)


def test_approximate_search_reaches_the_recall_of_exact_search(
    clustered: list[list[float]],
) -> None:
    facts = recall.filtered_facts(NS, kinds=None, metadata=None)
    overlap = []
    for vector in clustered:
        exact = recall.vector_scores(facts, vector, MODEL, 10, approximate=False)
        approximate = recall.vector_scores(facts, vector, MODEL, 10, approximate=True)
        assert len(approximate) == 10
        overlap.append(len(set(exact) & set(approximate)) / 10)

    assert sum(overlap) / len(overlap) >= 0.95


def test_recall_in_a_large_namespace_goes_through_the_hnsw_index(
    clustered: list[list[float]],
) -> None:
    ClusterEmbedder.vectors["what do I know about topic seven"] = clustered[7]

    with CaptureQueriesContext(connection) as captured:
        result = memory.fact_recall(namespace=NS, query="what do I know about topic seven", k=10)

    assert result.mode == "hybrid" and len(result.hits) == 10
    (search,) = [q["sql"] for q in captured.captured_queries if f"vector({DIM})" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {search}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert index_name(DIM) in plan, plan
    facts = recall.filtered_facts(NS, kinds=None, metadata=None)
    exact = recall.vector_scores(facts, clustered[7], MODEL, 10, approximate=False)
    assert len({fact.pk for fact, _ in result.hits} & set(exact)) >= 9


def test_recall_in_a_small_namespace_stays_exact(clustered: list[list[float]]) -> None:
    load_clusters("ann-small", 300, np.random.default_rng(7))
    ClusterEmbedder.vectors["small namespace query"] = clustered[0]

    with CaptureQueriesContext(connection) as captured:
        result = memory.fact_recall(namespace="ann-small", query="small namespace query", k=10)

    assert len(result.hits) == 10
    assert all(fact.namespace == "ann-small" for fact, _ in result.hits)
    assert not [q for q in captured.captured_queries if f"vector({DIM})" in q["sql"]]
