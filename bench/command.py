"""The base of the benchmark commands: their shared options, runs and docs/benchmarks.md section.

Two shapes share it. A report command (``ttmemory_bench``, ``_adapters``, ``_langgraph``,
``_recall``, ``_write``) runs itself again with ``--current --json OUT`` in a process per database
or configuration, renders the results and writes its section unless ``--no-write``. A results
command (``_http``, ``_partition``, ``_prune``) measures the configured database and prints JSON
(``--json FILE`` keeps it); ``--write FILE...`` renders such files into its section.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench import BENCHMARKS_MD, ROOT

HIDDEN = "internal: measure the configured database only"
Render = Callable[[list[dict[str, Any]]], str]


def write_section(path: Path, section: str, *, start: str, end: str) -> None:
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


class BenchCommand(BaseCommand):
    """A benchmark command; ``start`` and ``end`` are its section's markers."""

    start = ""
    end = ""

    def progress(self, message: str) -> None:
        """What the benchmark modules' ``progress=`` callbacks print (to stderr)."""
        self.stderr.write(f"  {message}")

    def migrate_if_asked(self, options: dict[str, Any]) -> None:
        if options["migrate"]:
            call_command("migrate", verbosity=0)

    @staticmethod
    def require_runs(options: dict[str, Any]) -> None:
        if options["runs"] < 3:
            raise CommandError("--runs must be at least 3")

    # Report commands.

    def add_report_arguments(
        self,
        parser: CommandParser,
        *,
        databases: bool = True,
        current: bool = True,
        migrate: bool = True,
    ) -> None:
        """``--databases``, ``--output``, ``--no-write`` and the hidden ``--current``,
        ``--json``, ``--migrate`` of a run in its own process."""
        if databases:
            parser.add_argument(
                "--databases",
                default="postgresql,sqlite",
                help="comma-separated: postgresql, sqlite (each runs in its own process)",
            )
        parser.add_argument("--output", default=str(BENCHMARKS_MD), help="markdown file to update")
        parser.add_argument("--no-write", action="store_true", help="print only")
        if current:
            parser.add_argument("--current", action="store_true", help=HIDDEN)
            parser.add_argument("--json", default="", help=HIDDEN)
        if migrate:
            parser.add_argument("--migrate", action="store_true", help=HIDDEN)

    def databases(self, options: dict[str, Any]) -> Iterator[str]:
        """The ``--databases`` named, each checked as it comes."""
        for vendor in [v.strip() for v in options["databases"].split(",") if v.strip()]:
            if vendor not in {"postgresql", "sqlite"}:
                raise CommandError(f"unknown database {vendor!r}; use postgresql or sqlite")
            yield vendor

    def measure_in_subprocess(
        self,
        *args: str,
        vendor: str = "",
        env: dict[str, str] | None = None,
        python: str = "",
        what: str = "",
    ) -> dict[str, Any]:
        """Run this command with ``--current ARGS --json OUT`` in a new process; its result.

        ``vendor`` "sqlite" points it at a temporary SQLite file, "postgresql" at
        ``DATABASE_URL`` unless that is SQLite (then the embedded server); ``env`` adds
        variables; ``python`` runs it with another interpreter.
        """
        name = type(self).__module__.rpartition(".")[2]
        environ = {**os.environ, **(env or {})}
        with tempfile.TemporaryDirectory() as tmp:
            if vendor == "sqlite":
                environ["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
            elif vendor and environ.get("DATABASE_URL", "").startswith("sqlite"):
                environ.pop("DATABASE_URL")  # PostgreSQL: the embedded server
            out = Path(tmp) / "result.json"
            command = [python or sys.executable, "-m", "django", name, "--current", *args]
            command += ["--json", str(out)]
            done = subprocess.run(command, env=environ, cwd=ROOT, check=False)
            if done.returncode != 0:
                what = what or (f"benchmark on {vendor}" if vendor else "benchmark")
                raise CommandError(f"{what} failed (exit {done.returncode})")
            result: dict[str, Any] = json.loads(out.read_text())
            return result

    def measure_per_database(self, options: dict[str, Any], *args: str) -> list[dict[str, Any]]:
        """``measure_in_subprocess(*args)`` once per ``--databases`` entry, in order."""
        results = []
        for vendor in self.databases(options):
            self.stdout.write(f"== {vendor}")
            results.append(self.measure_in_subprocess(*args, vendor=vendor))
        return results

    def report(
        self,
        options: dict[str, Any],
        *,
        measure: Callable[[], Any],
        argv: list[str],
        render: Render,
    ) -> None:
        """A report's whole run. With ``--current``: ``measure()`` here (migrated first if
        asked) and emit it. Else: ``argv --migrate`` in a process per database, the results
        rendered and published."""
        if options["current"]:
            self.migrate_if_asked(options)
            self.emit(measure(), options)
            return
        self.publish(render(self.measure_per_database(options, *argv, "--migrate")), options)

    def emit(self, payload: Any, options: dict[str, Any], *, indent: int = 2) -> None:
        """A ``--current`` run's result: into the ``--json`` file if given, else printed."""
        text = json.dumps(payload, indent=indent)
        if options["json"]:
            Path(options["json"]).write_text(text)
        else:
            self.stdout.write(text)

    def publish(self, markdown: str, options: dict[str, Any]) -> None:
        """Print the rendered section and write it into ``--output`` unless ``--no-write``."""
        self.stdout.write(markdown)
        if not options["no_write"]:
            write_section(Path(options["output"]), markdown, start=self.start, end=self.end)
            self.stdout.write(self.style.SUCCESS(f"wrote {options['output']}"))

    # Results commands.

    def add_result_arguments(self, parser: CommandParser) -> None:
        """``--migrate``, ``--json FILE`` and ``--write FILE...``."""
        parser.add_argument("--migrate", action="store_true", help="migrate the database first")
        parser.add_argument("--json", default="", help="also write the result to this file")
        parser.add_argument(
            "--write",
            nargs="*",
            default=None,
            help="render these JSON results (from --json runs) into docs/benchmarks.md",
        )

    def write_results(self, options: dict[str, Any], render: Render) -> bool:
        """With ``--write FILE...``: render those results into the section; whether it did."""
        if options["write"] is None:
            return False
        results = [json.loads(Path(p).read_text()) for p in options["write"]]
        section = render(results)
        write_section(BENCHMARKS_MD, section, start=self.start, end=self.end)
        self.stdout.write(section)
        return True

    def print_result(self, result: dict[str, Any], options: dict[str, Any]) -> None:
        """Print the result as JSON, also into the ``--json`` file if given."""
        text = json.dumps(result, indent=2)
        if options["json"]:
            Path(options["json"]).write_text(text)
        self.stdout.write(text)
