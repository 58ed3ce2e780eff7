"""Precision and recall of fact extraction on the labelled set, offline rules and the LLM path.

``python bench/manage.py ttmemory_bench_extraction`` reports the held-out ``test`` split;
``--split dev --errors`` lists what goes wrong on the dev split (the one to tune on);
``--sweep`` measures ``DEDUPE_SIMILARITY`` thresholds on the dev split only.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench import extraction
from ttmemory.services import learning

SWEEP = (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 1.01)


class Command(BaseCommand):
    help = (
        "Score fact extraction (precision, recall per category) on bench/extraction_set.jsonl: "
        "the offline rules and the LLM path through the strict fake OpenAI server. Reports the "
        "held-out test split unless --split says otherwise. Every write is rolled back."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--split", choices=["dev", "test", "all"], default="test")
        parser.add_argument("--path", choices=["rules", "llm", "both"], default="both")
        parser.add_argument(
            "--errors", action="store_true", help="list each wrong item (dev split only)"
        )
        parser.add_argument(
            "--sweep",
            action="store_true",
            help="offline precision/recall per DEDUPE_SIMILARITY threshold (dev split only)",
        )
        parser.add_argument("--json", action="store_true", help="print the totals as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("ttmemory.services.learning").setLevel(logging.WARNING)
        split = options["split"]
        if (options["errors"] or options["sweep"]) and split != "dev":
            raise CommandError("--errors and --sweep look at the dev split only: add --split dev")
        items = extraction.load(split=split)
        if options["sweep"]:
            self._sweep(items)
            return
        results: dict[str, Any] = {}
        if options["path"] in {"rules", "both"}:
            results["rules"] = extraction.run(items)
        if options["path"] in {"llm", "both"}:
            from tests.fakes.openai_server import FakeOpenAI

            with FakeOpenAI() as fake, extraction.fake_llm(fake) as queue:
                results["llm"] = extraction.run(items, before_item=queue)
        if options["json"]:
            totals = {
                path: {
                    "precision": round(report.total.precision, 4),
                    "recall": round(report.total.recall, 4),
                    "utterances": report.total.items,
                    "rejected": report.rejected,
                }
                for path, report in results.items()
            }
            self.stdout.write(json.dumps({"split": split, **totals}))
            return
        titles = {"rules": "offline rules", "llm": "LLM path (strict fake, simulated answers)"}
        for path, report in results.items():
            self.stdout.write(extraction.format_report(f"{titles[path]}, {split}", report) + "\n")
            if options["errors"]:
                for item_id, wrong, missed in report.errors:
                    self.stdout.write(f"  {item_id}: wrong {wrong} missed {missed}")

    def _sweep(self, items: list[dict[str, Any]]) -> None:
        saved = learning.DEDUPE_SIMILARITY
        dedupe = [item for item in items if item.get("history")]
        self.stdout.write(f"{len(dedupe)} dev items with stored facts before the utterance")
        self.stdout.write("| threshold | precision | recall | exactly right |\n|---|---|---|---|")
        try:
            for threshold in SWEEP:
                learning.DEDUPE_SIMILARITY = threshold
                report = extraction.run(dedupe)
                self.stdout.write(
                    f"| {threshold:.2f} | {report.total.precision:.3f} "
                    f"| {report.total.recall:.3f} | {report.total.exact} |"
                )
        finally:
            learning.DEDUPE_SIMILARITY = saved
