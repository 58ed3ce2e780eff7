"""ttmemory_bench_recall measures quality and latency at tiny sizes and renders its section."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from bench import evalset
from bench.management.commands.ttmemory_bench_recall import END, START, render, write_section
from ttmemory.models import Fact, FactTerm


def run_part(tmp_path: Path, part: str, *args: str) -> dict[str, Any]:
    out = tmp_path / f"{part}.json"
    call_command(
        "ttmemory_bench_recall", "--current", "--part", part, "--json", str(out), *args,
        stderr=io.StringIO(),
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def test_the_evaluation_set_is_deterministic_and_grounded() -> None:
    first = evalset.build(seed=3, users=2, sessions=3, turns=20)
    again = evalset.build(seed=3, users=2, sessions=3, turns=20)

    assert first == again
    turns = {t.id: t for u in first.users for t in u.turns}
    assert len(turns) == 2 * 3 * 20
    questions = [q for u in first.users for q in u.questions]
    assert questions and all(q.evidence and set(q.evidence) <= set(turns) for q in questions)
    assert all(turns[t].id.startswith(q.user) for q in questions for t in q.evidence)


def test_quality_and_latency_run_at_tiny_sizes_and_clean_up(
    transactional_db: Any, tmp_path: Path
) -> None:
    quality = run_part(tmp_path, "quality", "--users", "2", "--sessions", "2", "--turns", "20")
    latency = run_part(
        tmp_path, "latency", "--sizes", "20,40", "--runs", "3", "--sets", "evalset,repetitive"
    )

    modes = [row["mode"] for row in quality["rows"]]
    assert modes == ["keyword (BM25 only)", "vector only", "hybrid: fact_recall", "RRF (k=60)"]
    assert all(0.0 <= row["r5"] <= row["r10"] <= row["r50"] <= 1.0 for row in quality["rows"])
    assert quality["best"]["normalisation"] and quality["sweep"]
    assert [(row["set"], row["mode"], row["facts"]) for row in latency["rows"]] == [
        (name, mode, size)
        for name in ("evalset", "repetitive")
        for size in (20, 40)
        for mode in ("hybrid", "keyword")
    ]
    assert all(row["ours_p50"] > 0 and row["raw_p50"] > 0 for row in latency["rows"])
    # The repetitive set's hybrid rows carry evidence recall, capped and uncapped, and the share
    # of the uncapped top 10 kept.
    scored = [row for row in latency["rows"] if "kept_of_uncapped" in row]
    assert [(row["set"], row["mode"]) for row in scored] == [("repetitive", "hybrid")] * 2
    assert all(0.0 < row["kept_of_uncapped"] <= 1.0 for row in scored)
    assert all(0.0 <= row["evidence_r10"] <= 1.0 for row in scored)
    assert not Fact.objects.filter(namespace__startswith="bench-recall-").exists()
    assert not FactTerm.objects.filter(namespace__startswith="bench-recall-").exists()

    table = render({"quality": [quality], "latency": [latency], "large": None})
    assert table.startswith(START) and table.endswith(END)
    assert "| evalset | hybrid | 40 |" in table and "| vector only |" in table
    assert "| repetitive | hybrid | 40 |" in table and "top 10 kept of uncapped" in table


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the large run needs pgvector")
def test_the_large_run_measures_approximate_search(transactional_db: Any, tmp_path: Path) -> None:
    large = run_part(
        tmp_path, "large", "--runs", "4", "--large-namespaces", "2", "--large-per-namespace",
        "100", "--large-big", "600", "--large-dimensions", "16", "--large-queries", "4",
    )  # fmt: skip

    hnsw, exact = large["rows"]
    assert hnsw["facts_per_namespace"] == 600 and exact["facts_per_namespace"] == 100
    assert 0.0 <= hnsw["recall_at_10"] <= 1.0 and exact["recall_at_10"] == 1.0
    assert not Fact.objects.filter(namespace__startswith="bench-recall-").exists()
    assert large["touch"]["batch"] == 300 and large["touch"]["median"] > 0
    assert large["memory"]["shared_buffers"] > 0 and large["memory"]["index"] > 0
    assert "Server memory: `shared_buffers`" in render({"large": large})
    assert "SCALED DOWN" in render({"large": large})
    assert "Recall counts: writing 300 facts' counts" in render({"large": large})


def test_writing_the_section_keeps_the_other_benchmarks(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    other = "<!-- ttmemory_bench:session-memory:start -->\nsession\n"
    other += "<!-- ttmemory_bench:session-memory:end -->"
    doc.write_text(f"# Benchmarks\n\n{other}\n\n{START}\nold\n{END}\n")

    write_section(doc, f"{START}\nnew\n{END}")

    text = doc.read_text()
    assert "new" in text and "old" not in text and other in text
