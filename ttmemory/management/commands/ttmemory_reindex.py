"""Rebuild the blind keyword index of rows written with another scheme, key, tokenizer, language."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ttmemory.conf import app_settings
from ttmemory.longterm import blind
from ttmemory.management import batches
from ttmemory.management.progress import ProgressBar
from ttmemory.services import episodes, reindex


class Command(BaseCommand):
    help = (
        "Rebuild the blind keyword index (postings and upsert key) of every fact written with "
        "another index than the current one: the first release's global key, another "
        "BLIND_INDEX_KEY, another tokenizer, or another language of its namespace "
        "(STEMMER_LANGUAGE, NAMESPACE_LANGUAGES), then the same for the episodic index of "
        "messages. One transaction per batch; safe to interrupt: "
        "run it again to resume. Recall keeps finding every fact meanwhile (queries also match "
        "the first release's postings until their fact is rebuilt)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        batches.add_batch_size(parser, unit="facts")
        parser.add_argument(
            "--dry-run", action="store_true", help="only print fact counts per index"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        batch_size = batches.batch_size(options)
        self.stdout.write(f"blind index: {blind.fact_index_version()!r}")
        for pattern, language in app_settings.NAMESPACE_LANGUAGES.items():
            marker = blind.fact_index_version(pattern)
            self.stdout.write(f"  namespaces {pattern!r} ({language}): {marker!r}")
        pending = 0
        for version, count, current in reindex.index_groups():
            label = repr(version) if version else "first release (one key for all namespaces)"
            self.stdout.write(f"  {label}: {count} facts, {'current' if current else 'stale'}")
            pending += 0 if current else count
        if options["dry_run"]:
            self.stdout.write(f"dry run: {pending} facts would be reindexed")
            return
        bar = ProgressBar("reindexing facts", pending, stream=self.stdout)
        stats = reindex.facts_reindex(batch_size=batch_size, on_batch=bar.advance)
        bar.finish()
        if stats.held:
            self.stdout.write(
                f"  {stats.held} facts under legal hold were left as they are: run this again "
                "once the holds are lifted"
            )
        if stats.skipped:
            self.stdout.write(
                f"  {stats.skipped} facts changed during the run and were rebuilt by that "
                "change; run again to check"
            )
        if stats.duplicates:
            self.stdout.write(
                f"  {stats.duplicates} facts have the same text as another fact of their "
                "namespace: both were kept and stay findable"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"done: {stats.reindexed} facts reindexed in {stats.batches} batches"
            )
        )
        # The episodic index of messages (message_search): stale, missing and orphaned rows.
        bar = ProgressBar(
            "reindexing messages", reindex.stale_message_entries(), stream=self.stdout
        )
        messages = episodes.messages_reindex(batch_size=batch_size, on_batch=bar.advance)
        bar.finish()
        self.stdout.write(
            self.style.SUCCESS(
                f"done: {messages.done} messages reindexed in {messages.sessions} sessions"
            )
        )
