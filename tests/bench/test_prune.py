"""ttmemory_bench_prune times the prune job per thousand rows and leaves nothing behind."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from django.core.management import call_command

from bench.management.commands.ttmemory_bench_prune import END, START, render
from ttmemory.models import MemorySession, RetentionPolicy


def test_the_prune_benchmark_measures_and_cleans_up(transactional_db: Any, tmp_path: Path) -> None:
    out = tmp_path / "prune.json"
    call_command(
        "ttmemory_bench_prune",
        "--sessions",
        "3",
        "--messages",
        "4",
        "--json",
        str(out),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    result = json.loads(out.read_text())
    rows = {row["operation"]: row for row in result["rows"]}
    assert rows["expire idle sessions"]["rows"] == 3 * (1 + 4 + 1)  # session, messages, snapshot
    assert rows["delete archived messages"]["rows"] == 3 * 4
    assert rows["a run with nothing due"]["rows"] == 0
    assert rows["expire idle sessions"]["ms_per_1000_rows"] > 0
    assert not MemorySession.objects.filter(namespace__startswith="bench-prune-").exists()
    assert not RetentionPolicy.objects.exists()
    table = render([result])
    assert table.startswith(START) and table.endswith(END)
    assert "| expire idle sessions | 18 |" in table and "Data lifecycle" in table
