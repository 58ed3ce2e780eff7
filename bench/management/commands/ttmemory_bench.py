"""Benchmark session memory against raw SQL on PostgreSQL and SQLite; write docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from bench import command, session_memory
from bench.command import BenchCommand

START = "<!-- ttmemory_bench:session-memory:start -->"
END = "<!-- ttmemory_bench:session-memory:end -->"
# The origin article's figures on PostgreSQL (microseconds), and the 3x target derived from them.
ORIGIN_US = {"add one message": 1584.0, "recent 1,000 (decrypted)": 3857.0}
RATIO_TARGETS = {"add one message": 1.5, "recent 1,000 (decrypted)": 2.0}


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Time add/recent/context_window/trim against raw SQL doing the same work, on "
        "PostgreSQL (DATABASE_URL or the embedded server) and SQLite, and write the table "
        "into docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--runs", type=int, default=200, help="repetitions of one-message operations"
        )
        self.add_report_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        self.require_runs(options)
        runs = options["runs"]

        def measure() -> dict[str, Any]:
            # The benchmark writes ttmemory rows (in a namespace of its own, removed after).
            rows = session_memory.run(runs=runs, progress=self.progress)
            return {"environment": session_memory.environment(), "rows": [vars(r) for r in rows]}

        self.report(options, measure=measure, argv=["--runs", str(runs)], render=render)


def render(results: list[dict[str, Any]]) -> str:
    lines = [START, "## Session memory: ttmemory vs raw SQL", ""]
    lines.append(
        "Command: `python bench/manage.py ttmemory_bench` (medians; raw SQL = the same statements "
        "through psycopg / sqlite3 with plain-JSON content, same process, same run). "
        "ttmemory's side includes validation, token counting, AES-256-GCM and the ORM."
    )
    lines.append("")
    for result in results:
        env = result["environment"]
        lines.append(f"### {env['database']}")
        lines.append("")
        lines.append(
            f"Python {env['python']}, tokenizer {env['tokenizer']}, measured {env['when']}."
        )
        lines.append("")
        lines.append("| operation | ttmemory (us) | raw SQL (us) | ratio | target | runs |")
        lines.append("|---|---:|---:|---:|---|---:|")
        postgres = env["database"].startswith("PostgreSQL")
        for row in result["rows"]:
            ratio = row["ours_us"] / row["raw_us"]
            targets = []
            if row["operation"] in RATIO_TARGETS:
                limit = RATIO_TARGETS[row["operation"]]
                targets.append(f"ratio <= {limit} {'met' if ratio <= limit else 'MISSED'}")
            if postgres and row["operation"] in ORIGIN_US:
                goal = ORIGIN_US[row["operation"]] / 3
                status = "met" if row["ours_us"] <= goal else "MISSED"
                targets.append(
                    f"<= {goal:,.0f} us (origin {ORIGIN_US[row['operation']]:,.0f} / 3) {status}"
                )
            lines.append(
                f"| {row['operation']} | {row['ours_us']:,.0f} | {row['raw_us']:,.0f} | "
                f"{ratio:.2f}x | {'; '.join(targets)} | {row['runs']} |"
            )
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def write_section(path: Path, section: str, *, start: str = START, end: str = END) -> None:
    """``bench.command.write_section``, aimed at this benchmark's markers unless told."""
    command.write_section(path, section, start=start, end=end)
