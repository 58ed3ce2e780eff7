"""Time the adapters (async twins, Agents SDK session) against the core; write benchmarks.md."""

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

from bench import BENCHMARKS_MD, ROOT, adapters
from bench.management.commands.ttmemory_bench import write_section
from bench.session_memory import environment

START = "<!-- ttmemory_bench:adapters:start -->"
END = "<!-- ttmemory_bench:adapters:end -->"


class Command(BaseCommand):
    help = (
        "Time amessage_add, afact_recall and TTMemorySession.add_items/get_items against the "
        "sync core calls they wrap, on PostgreSQL and SQLite, and write the table into "
        "docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--runs", type=int, default=200, help="repetitions per pair")
        parser.add_argument("--facts", type=int, default=200, help="facts stored for recall")
        parser.add_argument(
            "--databases",
            default="postgresql,sqlite",
            help="comma-separated: postgresql, sqlite (each runs in its own process)",
        )
        parser.add_argument("--output", default=str(BENCHMARKS_MD), help="markdown file to update")
        parser.add_argument("--no-write", action="store_true", help="print only")
        parser.add_argument("--current", action="store_true", help=HIDDEN)
        parser.add_argument("--json", default="", help=HIDDEN)
        parser.add_argument("--migrate", action="store_true", help=HIDDEN)

    def handle(self, *args: Any, **options: Any) -> None:
        runs = options["runs"]
        if runs < 3:
            raise CommandError("--runs must be at least 3")
        if options["current"]:
            if options["migrate"]:
                call_command("migrate", verbosity=0)
            rows = adapters.run(
                runs=runs, facts=options["facts"], progress=lambda m: self.stderr.write(f"  {m}")
            )
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            payload = {"environment": environment(), "load": load, "rows": [vars(r) for r in rows]}
            text = json.dumps(payload, indent=2)
            if options["json"]:
                Path(options["json"]).write_text(text)
            else:
                self.stdout.write(text)
            return
        results = []
        for vendor in [v.strip() for v in options["databases"].split(",") if v.strip()]:
            if vendor not in {"postgresql", "sqlite"}:
                raise CommandError(f"unknown database {vendor!r}; use postgresql or sqlite")
            self.stdout.write(f"== {vendor}")
            results.append(self._measure_in_subprocess(vendor, runs, options["facts"]))
        markdown = render(results)
        self.stdout.write(markdown)
        if not options["no_write"]:
            write_section(Path(options["output"]), markdown, start=START, end=END)
            self.stdout.write(self.style.SUCCESS(f"wrote {options['output']}"))

    def _measure_in_subprocess(self, vendor: str, runs: int, facts: int) -> dict[str, Any]:
        env = dict(os.environ)
        with tempfile.TemporaryDirectory() as tmp:
            if vendor == "sqlite":
                env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
            elif env.get("DATABASE_URL", "").startswith("sqlite"):
                env.pop("DATABASE_URL")  # PostgreSQL: the embedded server
            out = Path(tmp) / "result.json"
            command = [sys.executable, "-m", "django", "ttmemory_bench_adapters", "--current"]
            command += ["--runs", str(runs), "--facts", str(facts), "--json", str(out), "--migrate"]
            done = subprocess.run(command, env=env, cwd=ROOT, check=False)
            if done.returncode != 0:
                raise CommandError(f"benchmark on {vendor} failed (exit {done.returncode})")
            result: dict[str, Any] = json.loads(out.read_text())
            return result


HIDDEN = "internal: measure the configured database only"


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
