"""Re-encrypt every encrypted column with the first key of ENCRYPTION_KEYS."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ttmemory.crypto import get_keyring
from ttmemory.management import batches
from ttmemory.management.progress import ProgressBar
from ttmemory.services import rotation


class Command(BaseCommand):
    help = (
        "Re-encrypt all ttmemory data with the primary (first) key. Safe to interrupt: run it "
        "again to resume. Remove an old key from ENCRYPTION_KEYS only after a complete run. "
        "Values stored before row binding are bound to their row on the way (a complete run "
        "also finishes ttmemory_rebind's upgrade)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        batches.add_batch_size(parser, unit="rows")

    def handle(self, *args: Any, **options: Any) -> None:
        batch_size = batches.batch_size(options)
        primary = get_keyring().primary_key_id
        self.stdout.write(f"re-encrypting with key {primary!r}, {batch_size} rows per batch")
        upgrade = rotation.rebind_upgrade()
        rotated = held = 0
        for model, fields in rotation.encrypted_columns():
            bar = ProgressBar(model._meta.db_table, rotation.count_rows(model), stream=self.stdout)
            stats = rotation.rotate_model(
                model, fields, batch_size=batch_size, on_batch=bar.advance
            )
            bar.finish()
            rotated += stats.rotated
            held += stats.held
            self.stdout.write(
                f"  {stats.table}: {stats.scanned} rows, {stats.rotated} values re-encrypted, "
                f"{stats.current} already on {primary!r}"
                + (f", {stats.held} values under legal hold left as they are" if stats.held else "")
            )
        if held:
            # Held rows keep their old key (and format): keep the old key in ENCRYPTION_KEYS
            # and run this again once the holds are lifted.
            self.stdout.write(
                self.style.WARNING(
                    f"{held} values under legal hold were not re-encrypted: keep the old keys "
                    "until the holds are lifted, then run this command again"
                )
            )
        else:
            rotation.rebind_finish(upgrade)  # every value is now in the current format too
        self.stdout.write(self.style.SUCCESS(f"done: {rotated} values re-encrypted"))
