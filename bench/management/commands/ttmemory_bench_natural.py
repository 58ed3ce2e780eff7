"""Score memory on the natural-conversation set: current facts served, stale ones not, precision.

``python bench/manage.py ttmemory_bench_natural`` runs ``bench/natural/conversations.jsonl`` on
PostgreSQL and SQLite (a process each), prints the tables per category and per language and
writes them into docs/benchmarks.md unless ``--no-write``. ``--errors`` lists what went wrong.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from bench import natural
from bench.command import BenchCommand

START = "<!-- ttmemory_bench:natural:start -->"
END = "<!-- ttmemory_bench:natural:end -->"
COMMAND = "python bench/manage.py ttmemory_bench_natural"


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Feed each conversation of bench/natural/conversations.jsonl through turn_add (fresh "
        "namespace, offline learner, default embedder), ask its questions from another session "
        "(fact_recall top 5 and prompt_build) and score current facts served, stale values not "
        "served, never-facts not stored, invented facts and extraction precision, per category "
        "and per language. Runs each database in its own process; writes docs/benchmarks.md "
        "unless --no-write."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", default=str(natural.DATA), help="the JSONL set to run")
        parser.add_argument("--ids", default="", help="comma-separated conversation ids")
        parser.add_argument("--languages", default="", help="comma-separated: en,ru,de,zh,...")
        parser.add_argument("--categories", default="", help="comma-separated categories")
        parser.add_argument(
            "--limit", type=int, default=None, help="at most this many conversations per language"
        )
        parser.add_argument(
            "--errors", action="store_true", help="list each failed check and invented fact"
        )
        parser.add_argument(
            "--keep", action="store_true", help="keep the namespaces (bench-natural-<id>)"
        )
        parser.add_argument(
            "--save-json", default="", help="also write every database's result to this file"
        )
        parser.add_argument(
            "--facts-from",
            choices=natural.FACTS_FROM,
            default="learner",
            help="learner: what turn_add learns (the measurement); turns: every user message "
            "remembered verbatim, nothing learned (a reference for recall; needs --no-write)",
        )
        parser.add_argument(
            "--render",
            default="",
            help="render a --save-json file instead of running (writes unless --no-write)",
        )
        self.add_report_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("ttmemory").setLevel(logging.WARNING)
        if options["render"]:
            import json

            saved = json.loads(Path(options["render"]).read_text())
            self.publish(render(saved, command=_command_line(options)), options)
            return
        selection = self._selection(options)
        if options["current"]:
            self.migrate_if_asked(options)
            results = natural.run(
                selection,
                keep=options["keep"],
                facts_from=options["facts_from"],
                progress=self.progress,
            )
            payload = {
                "environment": _environment(),
                "conversations": len(results),
                **natural.summarise(results),
                "results": [result.as_dict() for result in results],
            }
            self.emit(payload, options)
            return
        partial = len(selection) != len(natural.load(Path(options["set"])))
        if options["facts_from"] != "learner" and not options["no_write"]:
            raise CommandError("--facts-from turns is a reference, not written: add --no-write")
        if partial and not options["no_write"]:
            raise CommandError(
                "a slice of the set is not written to docs/benchmarks.md: add --no-write"
            )
        argv = [f"--set={options['set']}"]
        for name in ("ids", "languages", "categories"):
            if options[name]:
                argv.append(f"--{name}={options[name]}")
        if options["limit"] is not None:
            argv.append(f"--limit={options['limit']}")
        if options["keep"]:
            argv.append("--keep")
        argv.append(f"--facts-from={options['facts_from']}")
        runs = self.measure_per_database(options, *argv, "--migrate")
        if options["save_json"]:
            import json

            Path(options["save_json"]).write_text(json.dumps(runs, indent=2, ensure_ascii=False))
        if options["errors"]:
            for run in runs:
                self.stdout.write(f"== failures on {run['environment']['database']}")
                for result in run["results"]:
                    for failure in result["failures"]:
                        self.stdout.write(f"  {result['id']}: {failure}")
        self.publish(render(runs, command=_command_line(options), partial=partial), options)

    @staticmethod
    def _selection(options: dict[str, Any]) -> list[dict[str, Any]]:
        def listed(name: str) -> list[str]:
            return [part.strip() for part in options[name].split(",") if part.strip()]

        try:
            return natural.load(
                Path(options["set"]),
                ids=listed("ids"),
                languages=listed("languages"),
                categories=listed("categories"),
                limit=options["limit"],
            )
        except (OSError, natural.SetError) as error:
            raise CommandError(str(error)) from error


def _command_line(options: dict[str, Any]) -> str:
    extra = (
        ""
        if options["databases"] == "postgresql,sqlite"
        else f" --databases {options['databases']}"
    )
    return COMMAND + extra


def _environment() -> dict[str, Any]:
    from django.db import connection

    from ttmemory.conf import app_settings

    connection.ensure_connection()
    if connection.vendor == "postgresql":
        server: Any = connection.connection.info.server_version
    else:
        import sqlite3

        server = sqlite3.sqlite_version
    embedder = app_settings.EMBEDDER
    backend = embedder.get("BACKEND", "") if isinstance(embedder, dict) else str(embedder)
    return {"database": connection.vendor, "server": server, "embedder": backend}


def _database_name(environment: dict[str, Any]) -> str:
    server = environment["server"]
    if environment["database"] == "postgresql":
        if isinstance(server, int):  # server_version_num: 180006 is 18.6
            server = f"{server // 10000}.{server % 100}"
        return f"PostgreSQL {server}"
    return f"SQLite {server}"


def render(runs: list[dict[str, Any]], *, command: str = COMMAND, partial: bool = False) -> str:
    """The docs/benchmarks.md section: one table per database, the targets, what is counted."""
    languages = sorted({r["lang"] for run in runs for r in run["results"]})
    lines = [
        START,
        "## Natural conversations: current facts served, stale ones not (issue 35)",
        "",
        f"Command: `{command}` (each database in its own process; deterministic: the set, the "
        "default embedder and the offline learner have no randomness). "
        f"Set: `bench/natural/conversations.jsonl`, {runs[0]['conversations'] if runs else 0} "
        f"conversations of 2-8 turns written by hand in {', '.join(languages)}; schema and "
        "scoring in bench/README.md. Each conversation goes through `turn_add` (one user "
        "message and its reply per call) into a fresh namespace with the offline learner "
        "(no LLM) and the default embedder; its questions, worded unlike what was said and in "
        "the conversation's language, are asked later from another session: `fact_recall` "
        "(top 5) and `prompt_build` (its memories section).",
        "",
        "- **current**: a fact holding every answer term is in the top 5 *and* in the prompt "
        "(target >= 0.9);",
        "- **stale not served**: no fact recalled or rendered for the question states an old "
        "value as current (one in the supersede chain, or saying it is past, is fine; target "
        ">= 0.95);",
        "- **old value superseded / still active**: old values found in the supersede chain / "
        "in an active fact stating them as current; **change followed**: the new value served "
        "and the old one not (a learner that stores nothing serves no stale value but follows "
        "no change);",
        "- **never stored ok**: hypotheticals, questions, quoted speech, jokes and other "
        "people's facts were not stored as facts (current or superseded);",
        "- **invented**: active facts matching nothing said (target <= 2% of active facts); "
        "**precision**: active facts true of the user, or of the person named, now / active "
        "facts (target >= 0.9).",
        "",
    ]
    if partial:
        lines += ["A slice of the set, not the whole.", ""]
    for run in runs:
        env = run["environment"]
        met = natural.meets_targets(run["overall"])
        missed = [name for name, ok in met.items() if not ok]
        lines += [
            f"### {_database_name(env)}, embedder `{env['embedder']}`",
            "",
            natural.table(run, label="category / language"),
            "",
            "Targets met: "
            + (", ".join(name for name, ok in met.items() if ok) or "none")
            + (f"; missed: {', '.join(missed)}." if missed else "."),
            "",
        ]
    lines.append(END)
    return "\n".join(lines)
