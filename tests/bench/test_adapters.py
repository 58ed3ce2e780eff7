"""ttmemory_bench_adapters pairs each adapter with the core call it wraps and renders a table."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from django.core.management import call_command

from bench.management.commands.ttmemory_bench_adapters import END, START, render
from ttmemory.models import MemorySession


def test_the_benchmark_measures_each_adapter_and_cleans_up(
    transactional_db: Any, tmp_path: Path
) -> None:
    out = tmp_path / "result.json"

    call_command(
        "ttmemory_bench_adapters", "--current", "--runs", "3", "--facts", "10", "--json", str(out),
        stderr=io.StringIO(),
    )  # fmt: skip

    result = json.loads(out.read_text())
    rows = {row["core"]: row for row in result["rows"]}
    assert [core.split(" ")[0] for core in rows] == [
        "the", "message_add", "fact_recall", "message_add_many", "context_window(max_tokens=4000)"
    ]  # fmt: skip
    assert all(row["adapter_us"] > 0 and row["core_us"] > 0 for row in result["rows"])
    assert not MemorySession.objects.filter(namespace__startswith="bench-").exists()
    table = render([result])
    assert table.startswith(START) and table.endswith(END)
    assert "| amessage_add (one message) | message_add |" in table
