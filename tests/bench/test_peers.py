"""The peers harness (bench/peers.py) measured on ttmemory's own store: every operation timed
beside the raw baseline, the checked concurrent round loses and reorders nothing, the cost curve
has its points, and the table renders. The peers themselves need .venv-peers (the command)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from bench import peers
from bench.management.commands.ttmemory_bench_peers import END, START, Command, TTMemoryStore
from bench.raw import RawFacts, RawSessions
from bench.write_path import raw_params
from ttmemory.models import Fact, MemorySession


def test_the_harness_measures_ttmemory_beside_raw_sql_and_cleans_up(
    transactional_db: Any,
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the raw baseline is PostgreSQL's (advisory locks)")
    store, raw = TTMemoryStore(), RawSessions(raw_params(), table="bench_peers_raw_test")
    raw_facts = RawFacts(raw_params(), table="bench_peers_rawfacts_test")
    try:
        # What a point's search finds, besides its timing: the namespace holds the facts.
        facts = [peers.fact_text(i) for i in range(50)]
        store.facts_load("probe", facts)
        found = store.facts_search("probe", "Does anyone close to me live in Lisbon?", 10)
        assert found and set(found) <= set(facts)
        raw_facts.load("probe", facts)
        query = peers.vector_literal(peers.fake_vector("Who lives in Lisbon?"))
        assert len(raw_facts.search("probe", query, 10)) == 10
        result = peers.measure(
            store,
            raw,
            runs=4,
            rounds=1,
            sizes=[60],
            progress=lambda m: None,
            namespace_sizes=[50],
            raw_facts=raw_facts,
        )
    finally:
        raw.close()
        raw_facts.close()
        store.close()
    assert list(result["rows"]) == peers.OPERATIONS
    assert all(ours["median"] > 0 and base["median"] > 0 for ours, base in result["rows"].values())
    checked = result["concurrency"]
    assert checked["acknowledged"] == checked["stored"] == 160
    assert (checked["lost"], checked["duplicated"], checked["reads not a prefix"]) == (0, 0, 0)
    assert checked["reads"] > 0
    assert [point["messages"] for point in result["curve"]] == [60]
    assert [point["facts"] for point in result["namespace_curve"]] == [50]
    assert all(side["median"] > 0 for side in result["namespace_curve"][0]["search k=10"])
    assert not MemorySession.objects.filter(namespace=store.namespace).exists()
    assert not Fact.objects.filter(namespace__startswith=store.namespace).exists()
    table = Command.render([result], "python bench/manage.py ttmemory_bench_peers", 1.0)
    assert table.startswith(START) and table.endswith(END)
    assert "| ttmemory | " in table and "0 / 0" in table
    assert "| ttmemory | 50 | " in table
