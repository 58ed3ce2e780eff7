"""Benchmark the prune job (``ttmemory.prune_expired``): cost per thousand rows deleted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from bench import BENCHMARKS_MD, retention
from bench.management.commands.ttmemory_bench import write_section

START = "<!-- ttmemory_bench:prune:start -->"
END = "<!-- ttmemory_bench:prune:end -->"


class Command(BaseCommand):
    help = (
        "Time prune_expired on the configured database (DATABASE_URL, or the embedded "
        "PostgreSQL): idle sessions expiring, archived messages aging out, a run with nothing "
        "due. Prints JSON; --write adds the table to docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sessions", type=int, default=200)
        parser.add_argument("--messages", type=int, default=50, help="per session")
        parser.add_argument("--batch-size", type=int, default=None)
        parser.add_argument("--migrate", action="store_true", help="migrate the database first")
        parser.add_argument("--json", default="", help="also write the result to this file")
        parser.add_argument(
            "--write",
            nargs="*",
            default=None,
            help="render these JSON results (from --json runs) into docs/benchmarks.md",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["write"] is not None:
            results = [json.loads(Path(p).read_text()) for p in options["write"]]
            section = render(results)
            write_section(BENCHMARKS_MD, section, start=START, end=END)
            self.stdout.write(section)
            return
        if options["migrate"]:
            call_command("migrate", verbosity=0)
        result = retention.run(
            sessions=options["sessions"],
            messages=options["messages"],
            batch_size=options["batch_size"],
            progress=lambda message: self.stderr.write(f"  {message}"),
        )
        text = json.dumps(result, indent=2)
        if options["json"]:
            Path(options["json"]).write_text(text)
        self.stdout.write(text)


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
