"""Time the adapters (async twins, Agents SDK session) against the core; write benchmarks.md."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import CommandParser

from bench import adapters
from bench.command import BenchCommand
from bench.session_memory import environment

START = "<!-- ttmemory_bench:adapters:start -->"
END = "<!-- ttmemory_bench:adapters:end -->"


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Time amessage_add, afact_recall and TTMemorySession.add_items/get_items against the "
        "sync core calls they wrap, on PostgreSQL and SQLite, and write the table into "
        "docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--runs", type=int, default=200, help="repetitions per pair")
        parser.add_argument("--facts", type=int, default=200, help="facts stored for recall")
        self.add_report_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        self.require_runs(options)
        runs, facts = options["runs"], options["facts"]

        def measure() -> dict[str, Any]:
            rows = adapters.run(runs=runs, facts=facts, progress=self.progress)
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            return {"environment": environment(), "load": load, "rows": [vars(r) for r in rows]}

        argv = ["--runs", str(runs), "--facts", str(facts)]
        self.report(options, measure=measure, argv=argv, render=render)


def render(results: list[dict[str, Any]]) -> str:
    lines = [START, "## Async twins and the Agents SDK session", ""]
    lines.append(
        "Command: `python bench/manage.py ttmemory_bench_adapters` (`bench/adapters.py`). Each "
        "adapter call is paired with the core call it wraps, alternately, in one process, one "
        "event loop and one database connection: the core side is the sync function timed in "
        "Django's thread-sensitive executor thread (where the twin runs it), the adapter side "
        "the awaited call timed in the event loop. Medians; the overhead is adapter minus core."
    )
    lines.append("")
    for result in results:
        env = result["environment"]
        lines.append(f"### {env['database']}")
        lines.append("")
        lines.append(
            f"Python {env['python']}, tokenizer {env['tokenizer']}, measured {env['when']}; "
            f"load average after the run {result.get('load', '?')} (1, 5, 15 min)."
        )
        lines.append("")
        lines.append("| adapter | core | adapter (us) | core (us) | ratio | overhead (us) | runs |")
        lines.append("|---|---|---:|---:|---:|---:|---:|")
        for row in result["rows"]:
            ratio = row["adapter_us"] / row["core_us"]
            lines.append(
                f"| {row['operation']} | {row['core']} | {row['adapter_us']:,.0f} | "
                f"{row['core_us']:,.0f} | {ratio:.2f}x | "
                f"{row['adapter_us'] - row['core_us']:,.0f} | {row['runs']} |"
            )
        lines.append("")
    lines.append(END)
    return "\n".join(lines)
