"""ttmemory_bench_langgraph times each adapter beside the direct call and cleans up."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from django.core.management import call_command

from bench.management.commands.ttmemory_bench_langgraph import END, START, render
from ttmemory.models import Fact, GraphCheckpoint, GraphStoreItem


def test_the_benchmark_measures_each_adapter_and_cleans_up(
    transactional_db: Any, tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    call_command(
        "ttmemory_bench_langgraph", "--current", "--runs", "3", "--items", "10",
        "--json", str(out), stderr=io.StringIO(),
    )  # fmt: skip
    result = json.loads(out.read_text())
    operations = [row["operation"] for row in result["rows"]]
    assert operations[:4] == [
        "store put vs fact_remember (new text)",
        "store search vs fact_recall (k=10, 10 items)",
        "saver put, one checkpoint vs raw SQL insert",
        "saver get_tuple (latest) vs raw SQL select",
    ]
    assert all(row["ours_us"] > 0 and row["raw_us"] > 0 for row in result["rows"])
    assert not GraphStoreItem.objects.exists() and not GraphCheckpoint.objects.exists()
    assert not Fact.objects.filter(namespace__startswith="bench-lg-").exists()
    table = render([result])
    assert table.startswith(START) and table.endswith(END)
