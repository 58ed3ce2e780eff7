"""Re-encrypt values written before row binding so that each is bound to its own row."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ttmemory.management import batches
from ttmemory.management.progress import ProgressBar
from ttmemory.services import rotation


class Command(BaseCommand):
    help = (
        "Bind every encrypted value to its row (namespace, table, column, row identity): "
        "re-encrypt the values stored before row binding, in batches. Safe to interrupt: run "
        "it again to resume where it stopped. When it finishes, values in the old format are "
        "refused. Run it once every process runs this release."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        batches.add_batch_size(parser, unit="rows")
        parser.add_argument(
            "--from-start",
            action="store_true",
            help="scan every row again, ignoring the recorded progress (after a restore)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        batch_size = batches.batch_size(options)
        upgrade = rotation.rebind_upgrade()
        progress = {} if upgrade is None or options["from_start"] else dict(upgrade.progress)
        if upgrade is None:
            self.stdout.write("no pending upgrade recorded; scanning every row anyway")
        rebound = held = 0
        for model, fields in rotation.encrypted_columns():
            table = model._meta.db_table
            after = progress.get(table)
            bar = ProgressBar(table, rotation.count_rows(model, after=after), stream=self.stdout)
            stats = rotation.rotate_model(
                model,
                fields,
                batch_size=batch_size,
                on_batch=bar.advance,
                legacy_only=True,
                start_after=after,
                on_checkpoint=partial(rotation.rebind_checkpoint, upgrade, table),
            )
            bar.finish()
            rebound += stats.rebound
            held += stats.held
            self.stdout.write(
                f"  {table}: {stats.scanned} rows, {stats.rebound} values bound to their row"
                + (f" (resumed after id {after})" if after is not None else "")
            )
        if held:
            # Held rows keep the old format: it stays readable until they are done too.
            raise CommandError(
                f"{held} values under legal hold were not rewritten; values in the old format "
                "stay accepted: run this again once the holds are lifted"
            )
        rotation.rebind_finish(upgrade)
        self.stdout.write(
            self.style.SUCCESS(
                f"done: {rebound} values bound to their row; values in the old format are "
                "now refused"
            )
        )
