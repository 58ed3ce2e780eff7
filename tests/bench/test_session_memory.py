"""ttmemory_bench measures every operation on the configured database and renders a table."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from django.core.management import call_command

from bench.management.commands.ttmemory_bench import END, START, render, write_section
from ttmemory.models import MemorySession


def test_the_benchmark_measures_each_operation_and_cleans_up(
    transactional_db: Any, tmp_path: Path
) -> None:
    out = tmp_path / "result.json"

    call_command(
        "ttmemory_bench", "--current", "--runs", "3", "--json", str(out), stderr=io.StringIO()
    )

    result = json.loads(out.read_text())
    operations = [row["operation"] for row in result["rows"]]
    assert operations[0] == "add one message"
    assert "recent 1,000 (decrypted)" in operations
    assert len(operations) >= 8  # + a RedisLock row when a local Redis answers
    assert "rollback of 1,000 messages (safe)" in operations
    assert all(row["ours_us"] > 0 and row["raw_us"] > 0 for row in result["rows"])
    assert not MemorySession.objects.filter(namespace__startswith="bench-").exists()

    table = render([result])
    assert table.startswith(START) and table.endswith(END)
    assert "| add one message |" in table


def test_writing_the_section_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text(f"# Benchmarks\n\nintro\n\n{START}\nold\n{END}\n\n## Other section\nkept\n")

    write_section(doc, f"{START}\nnew\n{END}")

    text = doc.read_text()
    assert "new" in text and "old" not in text
    assert "## Other section\nkept" in text and "intro" in text
