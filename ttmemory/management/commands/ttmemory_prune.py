"""Apply every data lifetime now: expired sessions, old archives, snapshots, ledger, audit,
facts and profiles past ``expires_at``, old Idempotency-Key answers (docs/retention.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ttmemory.management import batches
from ttmemory.services.prune import prune_expired

# Report lines, in the order they are printed: (count key, label).
LINES = (
    ("memory_session", "expired sessions deleted"),
    ("message", "messages of expired sessions deleted"),
    ("snapshot", "snapshots deleted (of expired sessions, or past SNAPSHOT_TTL)"),
    ("session_archived", "expired sessions archived"),
    ("message_archived", "messages of expired sessions archived"),
    ("fact_source_expired", "facts kept with their source marked expired"),
    ("archived_message", "archived messages deleted"),
    ("fact", "expired facts deleted"),
    ("profile", "expired profiles deleted"),
    ("idempotency_record", "idempotency answers deleted"),
    ("ledger_entry", "ledger entries deleted"),
    ("audit_entry", "audit entries deleted"),
    ("fact_usage_orphan", "recall statistics of deleted facts removed"),
)


class Command(BaseCommand):
    help = (
        "Apply every lifetime once (TTMEMORY SESSION_TTL, ARCHIVED_MESSAGE_TTL, SNAPSHOT_TTL, "
        "LEDGER_TTL, AUDIT_TTL, per-namespace retention policies; facts and profiles past "
        "expires_at; Idempotency-Key answers older than API_IDEMPOTENCY_SECONDS), skipping "
        "everything under legal hold. Batched and resumable: stop it at any time and run it "
        "again. The periodic Celery task ttmemory.prune_expired does the same."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        batches.add_batch_size(parser, unit="rows")

    def handle(self, *args: Any, **options: Any) -> None:
        verbosity = options["verbosity"]
        last: dict[str, int] = {}

        def progress(kind: str, done: int) -> None:
            if verbosity >= 1 and last.get(kind) != done:
                last[kind] = done
                self.stderr.write(f"  ... {kind}: {done}")

        report = prune_expired(batch_size=batches.batch_size(options), progress=progress)
        for key, label in LINES:
            self.stdout.write(f"{label}: {report.counts.get(key, 0)}")
        self.stdout.write(
            f"total: {report.total} rows in {report.batches} batches, "
            f"{len(report.by_namespace)} namespaces, {report.seconds:.2f}s"
        )
        if report.skipped:
            self.stdout.write(
                f"skipped: {report.skipped} rows whose session lock stayed busy; run again"
            )
