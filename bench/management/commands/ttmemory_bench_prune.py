"""Benchmark the prune job (``ttmemory.prune_expired``): cost per thousand rows deleted."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from bench import retention
from bench.command import BenchCommand

START = "<!-- ttmemory_bench:prune:start -->"
END = "<!-- ttmemory_bench:prune:end -->"


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Time prune_expired on the configured database (DATABASE_URL, or the embedded "
        "PostgreSQL): idle sessions expiring, archived messages aging out, a run with nothing "
        "due. Prints JSON; --write adds the table to docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sessions", type=int, default=200)
        parser.add_argument("--messages", type=int, default=50, help="per session")
        parser.add_argument("--batch-size", type=int, default=None)
        self.add_result_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        if self.write_results(options, render):
            return
        self.migrate_if_asked(options)
        result = retention.run(
            sessions=options["sessions"],
            messages=options["messages"],
            batch_size=options["batch_size"],
            progress=self.progress,
        )
        self.print_result(result, options)


def render(results: list[dict[str, Any]]) -> str:
    lines = [
        START,
        "## Data lifecycle: the prune job's cost",
        "",
        "Command: `python bench/manage.py ttmemory_bench_prune --json OUT` on each database, "
        "then `--write OUT...` (one process, the machine shared with other work). Each session "
        "has its messages, one snapshot and one learned fact (kept, its source marked expired); "
        "rows counted are sessions + messages + snapshots. 200 sessions of 50 messages, "
        "BATCH_SIZE 500; the run with nothing due is what an hourly beat costs when there is "
        "nothing to delete.",
        "",
        "| database | operation | rows | batches | total ms | ms per 1,000 rows |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for result in results:
        env = result["environment"]
        server = env["server"]
        if isinstance(server, int):  # PostgreSQL's server_version_num: 180006 is 18.6
            server = f"{server // 10000}.{server % 100}"
        name = f"{'PostgreSQL' if env['database'] == 'postgresql' else 'SQLite'} {server}"
        for row in result["rows"]:
            per = row["ms_per_1000_rows"]
            lines.append(
                f"| {name} | {row['operation']} | {row['rows']:,} | {row['batches']} | "
                f"{row['ms']:,.1f} | {per if per is not None else '-'} |"
            )
    lines.append(END)
    return "\n".join(lines)
