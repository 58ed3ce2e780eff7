"""Benchmark session memory against raw SQL on PostgreSQL and SQLite; write docs/benchmarks.md."""

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

from bench import BENCHMARKS_MD, ROOT, session_memory

START = "<!-- ttmemory_bench:session-memory:start -->"
END = "<!-- ttmemory_bench:session-memory:end -->"
# The origin article's figures on PostgreSQL (microseconds), and the 3x target derived from them.
ORIGIN_US = {"add one message": 1584.0, "recent 1,000 (decrypted)": 3857.0}
RATIO_TARGETS = {"add one message": 1.5, "recent 1,000 (decrypted)": 2.0}


class Command(BaseCommand):
    help = (
        "Time add/recent/context_window/trim against raw SQL doing the same work, on "
        "PostgreSQL (DATABASE_URL or the embedded server) and SQLite, and write the table "
        "into docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--runs", type=int, default=200, help="repetitions of one-message operations"
        )
        parser.add_argument(
            "--databases",
            default="postgresql,sqlite",
            help="comma-separated: postgresql, sqlite (each runs in its own process)",
        )
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
            self._measure_here(runs, options)
            return
        results = []
        for vendor in [v.strip() for v in options["databases"].split(",") if v.strip()]:
            if vendor not in {"postgresql", "sqlite"}:
                raise CommandError(f"unknown database {vendor!r}; use postgresql or sqlite")
            self.stdout.write(f"== {vendor}")
            results.append(self._measure_in_subprocess(vendor, runs))
        markdown = render(results)
        self.stdout.write(markdown)
        if not options["no_write"]:
            write_section(Path(options["output"]), markdown)
            self.stdout.write(self.style.SUCCESS(f"wrote {options['output']}"))

    def _measure_here(self, runs: int, options: dict[str, Any]) -> None:
        if options["migrate"]:
            call_command("migrate", verbosity=0)
        rows = session_memory.run(runs=runs, progress=lambda msg: self.stderr.write(f"  {msg}"))
        payload = {
            "environment": session_memory.environment(),
            "rows": [
                {"operation": r.operation, "ours_us": r.ours_us, "raw_us": r.raw_us, "runs": r.runs}
                for r in rows
            ],
        }
        if options["json"]:
            Path(options["json"]).write_text(json.dumps(payload))
        else:
            self.stdout.write(json.dumps(payload, indent=2))

    def _measure_in_subprocess(self, vendor: str, runs: int) -> dict[str, Any]:
        env = dict(os.environ)
        with tempfile.TemporaryDirectory() as tmp:
            # The benchmark writes ttmemory rows (in a namespace of its own, removed after).
            extra = ["--migrate"]
            if vendor == "sqlite":
                env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
            elif env.get("DATABASE_URL", "").startswith("sqlite"):
                env.pop("DATABASE_URL")  # PostgreSQL: the embedded server
            out = Path(tmp) / "result.json"
            command = [sys.executable, "-m", "django", "ttmemory_bench", "--current"]
            command += ["--runs", str(runs), "--json", str(out), *extra]
            done = subprocess.run(command, env=env, cwd=ROOT, check=False)
            if done.returncode != 0:
                raise CommandError(f"benchmark on {vendor} failed (exit {done.returncode})")
            result: dict[str, Any] = json.loads(out.read_text())
            return result


ARG_HIDDEN = "internal: measure the configured database only"


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
    """Replace the section between ``start`` and ``end`` markers of ``path`` (other sections
    stay), creating the file."""
    text = (
        path.read_text()
        if path.exists()
        else "# Benchmarks\n\nMeasured on the project's CI machine kind (2 cores, 24 GiB).\n\n"
    )
    if start in text and end in text:
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + section + after
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
