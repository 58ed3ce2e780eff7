"""Approximate recall's planner settings never outlive its query on a (pooled) connection."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from ttmemory import memory
from ttmemory.backends.embedders import get_embedder
from ttmemory.longterm import recall
from ttmemory.models import Fact

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="HNSW settings are pgvector's"
)
NS = "planner"


def setting(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        row = cursor.fetchone()
    assert row is not None
    return str(row[0])


def approximate_search() -> dict[int, float]:
    embedder = get_embedder()
    vector = embedder.embed(["window seats on long flights"])[0]
    facts = Fact.objects.filter(namespace=NS)
    return recall.vector_scores(facts, vector, embedder.model, 5, approximate=True)


@pytest.fixture
def facts(transactional_db: Any) -> None:
    for text in ["Ada prefers window seats", "Ada is allergic to peanuts", "Ada lives in Lisbon"]:
        memory.fact_remember(namespace=NS, text=text)


def test_the_search_settings_apply_to_the_query_and_then_are_gone(facts: None) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET hnsw.ef_search = 55")  # the connection's own (pool, role, server)
    try:
        with CaptureQueriesContext(connection) as queries:
            hits = approximate_search()
        assert len(hits) == 3
        sql = [q["sql"] for q in queries.captured_queries]
        select = next(i for i, s in enumerate(sql) if "<=>" in s)
        assert any("SET LOCAL hnsw.ef_search = 100" in s for s in sql[:select])
        assert setting("hnsw.ef_search") == "55"
        assert setting("hnsw.iterative_scan") == "off"
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET hnsw.ef_search")


def test_inside_a_callers_transaction_its_settings_are_left_as_they_were(facts: None) -> None:
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.ef_search = 77")
        hits = approximate_search()
        assert setting("hnsw.ef_search") == "77"
        assert setting("hnsw.iterative_scan") == "off"
        assert Fact.objects.filter(namespace=NS).count() == 3  # the transaction is usable
    assert len(hits) == 3
