"""Recall on the conversational evaluation set, per category; writes docs/benchmarks.md."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandError, CommandParser

from bench import convset
from bench.command import BenchCommand, write_section

START = "<!-- ttmemory_bench:conversations:start -->"
END = "<!-- ttmemory_bench:conversations:end -->"
LATENCY_START = "<!-- ttmemory_bench:episodic-latency:start -->"
LATENCY_END = "<!-- ttmemory_bench:episodic-latency:end -->"
CURVE = "1000,10000,100000"
SENTENCE = "ttmemory.backends.embedders.sentence_transformers.SentenceTransformerEmbedder"
EMBEDDERS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "hash": ("HashEmbedder (default, no model)", None),
    "wordllama": (
        "WordLlamaEmbedder (l2_supercat, 256 dimensions; the wordllama extra, no torch)",
        {"BACKEND": "ttmemory.backends.embedders.wordllama.WordLlamaEmbedder"},
    ),
    "minilm": (
        "SentenceTransformerEmbedder (all-MiniLM-L6-v2, 384 dimensions; torch, run in .venv-embed)",
        {"BACKEND": SENTENCE},
    ),
}


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Recall@5/10/50, MRR and nDCG@10 per question category on the conversational "
        "evaluation set (bench/convset.py): BM25, vectors, fact_recall, message_search and "
        "fusions cross-validated on the tune half, reported on the held-out half; written "
        "into docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seed", type=int, default=21)
        parser.add_argument("--users", type=int, default=20, help="conversations")
        parser.add_argument("--sessions", type=int, default=12, help="sessions each")
        parser.add_argument("--embedders", default="hash", help="comma-separated: hash, wordllama")
        self.add_report_arguments(parser, databases=False, current=False, migrate=False)
        parser.add_argument("--json", default="", help="also write the raw results here")
        parser.add_argument(
            "--latency",
            action="store_true",
            help="instead of recall: message_search latency at the external benchmark's shape "
            "(10 conversations in one namespace), index current and lagging, beside raw SQL",
        )
        parser.add_argument("--databases", default="postgresql,sqlite", help="latency: where")
        parser.add_argument("--runs", type=int, default=300, help="latency: timed searches")
        parser.add_argument("--curve", default=CURVE, help="latency: sizes of the growing session")
        parser.add_argument("--current", action="store_true", help="internal: this database")
        parser.add_argument(
            "--from-json",
            nargs="*",
            default=None,
            help="latency: render these results of --current --json runs (one per database)",
        )
        parser.add_argument(
            "--load", default="", help="latency, --from-json: the load averages seen meanwhile"
        )
        parser.add_argument(
            "--merge-json",
            default="",
            help="comma-separated --json files of earlier runs (e.g. minilm from .venv-embed) "
            "rendered after this run's embedders",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["latency"]:
            self._latency(options)
            return
        from bench import conversations

        call_command("migrate", verbosity=0)
        data = convset.build(
            seed=options["seed"], users=options["users"], sessions=options["sessions"]
        )
        self.stdout.write(data.describe())
        results = []
        for name in [n.strip() for n in options["embedders"].split(",") if n.strip()]:
            if name not in EMBEDDERS:
                raise CommandError(f"unknown embedder {name!r}; known: {', '.join(EMBEDDERS)}")
            title, config = EMBEDDERS[name]
            self.stdout.write(f"== {title}")
            results.append(
                conversations.evaluate(
                    data,
                    embedder=config,
                    embedder_name=title,
                    progress=self.progress,
                )
            )
        for path in [p for p in options["merge_json"].split(",") if p]:
            results.extend(json.loads(Path(path).read_text()))
        if options["json"]:
            Path(options["json"]).write_text(json.dumps(results, indent=1, default=str))
        command = "python bench/manage.py ttmemory_bench_conversations" + (
            f" --embedders {options['embedders'] or chr(39) * 2}"
            if options["embedders"] != "hash"
            else ""
        )
        if options["merge_json"]:
            merged = ",".join(Path(p).stem for p in options["merge_json"].split(",") if p)
            command += (
                f" --merge-json {merged}` (each merged run from `python bench/manage.py "
                "ttmemory_bench_conversations --embedders NAME --no-write --json NAME.json`; "
                "wordllama with the `wordllama` extra installed, minilm from `.venv-embed"
            )
        markdown = (
            f"{START}\n## Recall on the conversational evaluation set\n\n"
            f"Generated by `{command}` (set: `bench/convset.py`, seed {options['seed']}).\n\n"
            + conversations.render(results)
            + f"\n{END}"
        )
        self.publish(markdown, options)

    def _latency(self, options: dict[str, Any]) -> None:
        from bench import episodic_latency

        self.require_runs(options)
        users = options["users"] if options["users"] != 20 else 10
        sessions = options["sessions"] if options["sessions"] != 12 else 26
        if options["current"]:
            call_command("migrate", verbosity=0)
            result = episodic_latency.run(
                users=users,
                sessions=sessions,
                runs=options["runs"],
                sizes=[int(n) for n in options["curve"].split(",") if n.strip()],
                progress=self.progress,
            )
            Path(options["json"]).write_text(json.dumps(result, indent=1, default=str))
            return
        results = [json.loads(Path(p).read_text()) for p in options["from_json"] or []]
        loads = [f"{os.getloadavg()[0]:.1f}"]
        for vendor in self.databases(options) if options["from_json"] is None else []:
            self.stdout.write(f"== message_search latency on {vendor}")
            results.append(
                self.measure_in_subprocess(
                    "--latency",
                    "--users",
                    str(users),
                    "--sessions",
                    str(sessions),
                    "--runs",
                    str(options["runs"]),
                    "--curve",
                    options["curve"],
                    vendor=vendor,
                    what=f"message_search latency on {vendor}",
                )
            )
            loads.append(f"{os.getloadavg()[0]:.1f}")
        command = "python bench/manage.py ttmemory_bench_conversations --latency"
        if options["curve"] != CURVE:
            command += f" --curve {options['curve']}"
        if options["runs"] != 300:
            command += f" --runs {options['runs']}"
        if options["from_json"] is not None:
            command += (
                "` (or, one process per database: `... --latency --current --json FILE` with "
                "`DATABASE_URL` set, then `... --latency --from-json FILE..."
            )
            loads = [options["load"] or " / ".join(str(r.get("load", "?")) for r in results)]
        markdown = (
            f"{LATENCY_START}\n"
            + episodic_latency.render(results, command=command, load=" / ".join(loads))
            + f"\n{LATENCY_END}"
        )
        self.stdout.write(markdown)
        if not options["no_write"]:
            write_section(Path(options["output"]), markdown, start=LATENCY_START, end=LATENCY_END)
            self.stdout.write(self.style.SUCCESS(f"wrote {options['output']}"))
