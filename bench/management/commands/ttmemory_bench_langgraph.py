"""Overhead of the LangGraph store and checkpointer against the core and raw SQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench import BENCHMARKS_MD, ROOT, graph_adapters, session_memory
from bench.management.commands.ttmemory_bench import write_section

START = "<!-- ttmemory_bench:langgraph:start -->"
END = "<!-- ttmemory_bench:langgraph:end -->"
ARG_HIDDEN = "internal: measure the configured database only"
NOTE = (
    "The store's put is `fact_remember` plus its own row (the encrypted value, upsert"
    "ed under a row lock); its search is `fact_recall` plus the items' lookup and dec"
    "ryption. The saver's `get_tuple` is two ORM queries (the checkpoint, its pending"
    " writes) and two AES-GCM decryptions where raw SQL runs one statement; in a cPro"
    "file of `get_tuple` on SQLite most of the time is the ORM building, compiling an"
    "d running those two queries."
)


class Command(BaseCommand):
    help = (
        "Time TTMemoryStore put/search against fact_remember/fact_recall and TTMemorySaver "
        "put/get_tuple against raw SQL and InMemorySaver, on PostgreSQL (DATABASE_URL or the "
        "embedded server) and SQLite; write the table into docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--runs", type=int, default=100, help="repetitions per operation")
        parser.add_argument("--items", type=int, default=200, help="store items searched")
        parser.add_argument("--databases", default="postgresql,sqlite")
        parser.add_argument("--output", default=str(BENCHMARKS_MD), help="markdown file to update")
        parser.add_argument("--no-write", action="store_true", help="print only")
        parser.add_argument("--current", action="store_true", help=ARG_HIDDEN)
        parser.add_argument("--json", default="", help=ARG_HIDDEN)
        parser.add_argument("--migrate", action="store_true", help=ARG_HIDDEN)

    def handle(self, *args: Any, **options: Any) -> None:
        runs = options["runs"]
        if runs < 3:
            raise CommandError("--runs must be at least 3")
        if options["current"]:
            if options["migrate"]:
                call_command("migrate", verbosity=0)
            rows = graph_adapters.run(
                runs=runs,
                items=options["items"],
                progress=lambda m: self.stderr.write(f"  {m}"),
            )
            payload = {
                "environment": session_memory.environment(),
                "rows": [
                    {
                        "operation": r.operation,
                        "ours_us": r.ours_us,
                        "raw_us": r.raw_us,
                        "runs": r.runs,
                    }
                    for r in rows
                ],
            }
            if options["json"]:
                Path(options["json"]).write_text(json.dumps(payload))
            else:
                self.stdout.write(json.dumps(payload, indent=2))
            return
        results = []
        for vendor in [v.strip() for v in options["databases"].split(",") if v.strip()]:
            if vendor not in {"postgresql", "sqlite"}:
                raise CommandError(f"unknown database {vendor!r}; use postgresql or sqlite")
            self.stdout.write(f"== {vendor}")
            results.append(_measure_in_subprocess(vendor, runs, options["items"]))
        markdown = render(results)
        self.stdout.write(markdown)
        if not options["no_write"]:
            write_section(Path(options["output"]), markdown, start=START, end=END)
            self.stdout.write(self.style.SUCCESS(f"wrote {options['output']}"))


def _measure_in_subprocess(vendor: str, runs: int, items: int) -> dict[str, Any]:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        if vendor == "sqlite":
            env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
        elif env.get("DATABASE_URL", "").startswith("sqlite"):
            env.pop("DATABASE_URL")  # PostgreSQL: the embedded server
        out = Path(tmp) / "result.json"
        command = [sys.executable, "-m", "django", "ttmemory_bench_langgraph", "--current"]
        command += ["--runs", str(runs), "--items", str(items), "--json", str(out), "--migrate"]
        done = subprocess.run(command, env=env, cwd=ROOT, check=False)
        if done.returncode != 0:
            raise CommandError(f"benchmark on {vendor} failed (exit {done.returncode})")
        result: dict[str, Any] = json.loads(out.read_text())
        return result


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
