"""Re-embed facts whose vector is missing or from another model than TTMEMORY["EMBEDDER"]."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from ttmemory.backends.embedders import get_embedder
from ttmemory.exceptions import EmbeddingError
from ttmemory.longterm.vector_index import index_name
from ttmemory.management import batches
from ttmemory.management.progress import ProgressBar
from ttmemory.models.vectors import BYTES, pgvector_installed, vector_storage
from ttmemory.services import episodes, reembed


class Command(BaseCommand):
    help = (
        "Re-embed every fact whose vector is missing or was made by another model or dimension "
        "than TTMEMORY['EMBEDDER'], one transaction per batch. Safe to interrupt: run it again "
        "to resume. Recall keeps working meanwhile: facts already re-embedded are found by "
        "meaning and by keyword, the others by keyword only (vectors of two models are never "
        "compared). On PostgreSQL the HNSW index of the new dimension is created at the end. "
        "On a PostgreSQL database migrated without pgvector, once the extension is installed "
        "(CREATE EXTENSION vector), it first moves the stored vectors to a pgvector column."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        batches.add_batch_size(parser, unit="facts (one embedder call each)")
        parser.add_argument(
            "--dry-run", action="store_true", help="only print fact counts per vector model"
        )

    def _upgrade_vector_column(self) -> None:
        if connection.vendor != "postgresql" or vector_storage(connection) != BYTES:
            return
        moved = reembed.vector_column_upgrade()
        if moved is None:
            self.stdout.write(
                "vectors are stored as float32 bytes and ranked in numpy: the database has no "
                "pgvector extension (install pgvector on the server, run CREATE EXTENSION "
                "vector; as a superuser, then this command again)"
            )
        else:
            self.stdout.write(f"moved {moved} stored vectors to a pgvector column")

    def handle(self, *args: Any, **options: Any) -> None:
        batch_size = batches.batch_size(options)
        embedder = get_embedder()
        if not options["dry_run"]:
            self._upgrade_vector_column()
        self.stdout.write(f"embedder: {embedder.model!r}, {embedder.dimensions} dimensions")
        pending = 0
        for group in reembed.vector_groups(embedder):
            if group.model or group.dimensions:
                label = f"{group.model!r} ({group.dimensions} dimensions)"
            else:
                label = "no vector"
            state = "current" if group.current else "to re-embed"
            self.stdout.write(f"  {label}: {group.count} facts, {state}")
            pending += 0 if group.current else group.count
        if options["dry_run"]:
            if vector_storage(connection) == BYTES and pgvector_installed(connection):
                self.stdout.write("dry run: the vector column would move to pgvector")
            self.stdout.write(f"dry run: {pending} facts would be re-embedded")
            return
        bar = ProgressBar("re-embedding facts", pending, stream=self.stdout)
        try:
            stats = reembed.facts_reembed(
                embedder=embedder, batch_size=batch_size, on_batch=bar.advance
            )
        except EmbeddingError as exc:
            self.stdout.write("")
            raise CommandError(str(exc)) from exc
        bar.finish()
        if stats.skipped:
            self.stdout.write(
                f"  {stats.skipped} facts changed during the run and were left alone; "
                "run again to check them"
            )
        if stats.index_created:
            self.stdout.write(f"  created the HNSW index {index_name(stats.dimensions)}")
        self.stdout.write(
            self.style.SUCCESS(
                f"done: {stats.embedded} facts re-embedded with {stats.model!r} "
                f"in {stats.batches} batches"
            )
        )
        try:  # the episodic index of messages (message_search)
            messages = episodes.messages_reembed(batch_size=batch_size)
        except EmbeddingError as exc:
            raise CommandError(f"re-embedding messages: {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"done: {messages.done} messages re-embedded in {messages.sessions} sessions"
            )
        )
