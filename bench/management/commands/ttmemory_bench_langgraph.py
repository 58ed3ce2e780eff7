"""Overhead of the LangGraph store and checkpointer against the core and raw SQL."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from bench import graph_adapters, session_memory
from bench.command import BenchCommand

START = "<!-- ttmemory_bench:langgraph:start -->"
END = "<!-- ttmemory_bench:langgraph:end -->"
NOTE = (
    "The store's put is `fact_remember` plus its own row (the encrypted value, upsert"
    "ed under a row lock); its search is `fact_recall` plus the items' lookup and dec"
    "ryption. The saver's `get_tuple` is two ORM queries (the checkpoint, its pending"
    " writes) and two AES-GCM decryptions where raw SQL runs one statement; in a cPro"
    "file of `get_tuple` on SQLite most of the time is the ORM building, compiling an"
    "d running those two queries."
)


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Time TTMemoryStore put/search against fact_remember/fact_recall and TTMemorySaver "
        "put/get_tuple against raw SQL and InMemorySaver, on PostgreSQL (DATABASE_URL or the "
        "embedded server) and SQLite; write the table into docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--runs", type=int, default=100, help="repetitions per operation")
        parser.add_argument("--items", type=int, default=200, help="store items searched")
        self.add_report_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        self.require_runs(options)
        runs, items = options["runs"], options["items"]

        def measure() -> dict[str, Any]:
            rows = graph_adapters.run(runs=runs, items=items, progress=self.progress)
            return {"environment": session_memory.environment(), "rows": [vars(r) for r in rows]}

        argv = ["--runs", str(runs), "--items", str(items)]
        self.report(options, measure=measure, argv=argv, render=render)


def render(results: list[dict[str, Any]]) -> str:
    lines = [START, "## LangGraph adapters: overhead against the core and raw SQL", ""]
    lines.append(
        "Command: `python bench/manage.py ttmemory_bench_langgraph` (medians in microseconds; "
        "both sides alternate in one process, same run; `bench/graph_adapters.py` says what "
        "each pair compares). The checkpoint is a 20-message state serialised by LangGraph's "
        "`JsonPlusSerializer`; raw SQL stores the same bytes unencrypted in a plain table."
    )
    lines.append("")
    lines.append(NOTE)
    lines.append("")
    for result in results:
        env = result["environment"]
        lines += [
            f"### {env['database']}",
            "",
            f"Python {env['python']}, measured {env['when']}.",
            "",
        ]
        lines.append("| operation: adapter vs direct | adapter (us) | direct (us) | ratio | runs |")
        lines.append("|---|---:|---:|---:|---:|")
        for row in result["rows"]:
            ratio = row["ours_us"] / row["raw_us"] if row["raw_us"] else float("inf")
            lines.append(
                f"| {row['operation']} | {row['ours_us']:,.0f} | {row['raw_us']:,.1f} | "
                f"{ratio:.2f}x | {row['runs']} |"
            )
        lines.append("")
    lines.append(END)
    return "\n".join(lines)
