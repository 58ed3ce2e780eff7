"""Convert the message table to one partitioned by hash of session (PostgreSQL)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections

from ttmemory.conf import PARTITIONS_MAX, PARTITIONS_MIN
from ttmemory.management.progress import ProgressBar
from ttmemory.models.partitioning import (
    COPY_BATCH,
    PartitioningError,
    configured_partitions,
    message_partitions,
    partition_message_table,
)


class Command(BaseCommand):
    help = (
        "Move every message into a table partitioned by hash of session (PostgreSQL only): "
        "the partitions of TTMEMORY['PARTITIONED_HISTORY'], or --partitions. One transaction: "
        "reads go on, appends wait until it commits (measured: docs/scaling.md, 'Partitioned "
        "history'); interrupted or failed, nothing has changed. Also repartitions a table "
        "partitioned into another number of partitions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--partitions", type=int, default=None, help="partitions (default: the setting's)"
        )
        parser.add_argument(
            "--batch-size", type=int, default=COPY_BATCH, help="messages copied per statement"
        )
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS, help="database alias")
        parser.add_argument(
            "--dry-run", action="store_true", help="only say what the table is and would become"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        connection = connections[options["database"]]
        if connection.vendor != "postgresql":
            raise CommandError(
                f"partitioned history needs PostgreSQL; database {options['database']!r} is "
                f"{connection.vendor}"
            )
        wanted = options["partitions"] or configured_partitions()
        if wanted is None:
            raise CommandError(
                "how many partitions? Set TTMEMORY['PARTITIONED_HISTORY'] = "
                "{'by': 'hash', 'partitions': 16} or pass --partitions",
                returncode=2,
            )
        if not PARTITIONS_MIN <= wanted <= PARTITIONS_MAX:
            raise CommandError(
                f"--partitions must be from {PARTITIONS_MIN} to {PARTITIONS_MAX}", returncode=2
            )
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be positive", returncode=2)
        current = message_partitions(connection)
        if current is None:
            raise CommandError("the message table does not exist: run migrate first")
        layout = f"partitioned into {current}" if current else "not partitioned"
        self.stdout.write(f"messages: {layout}; wanted: {wanted} partitions by hash of session")
        if current == wanted:
            self.stdout.write(self.style.SUCCESS("nothing to do"))
            return
        if options["dry_run"]:
            self.stdout.write("dry run: nothing changed")
            return
        bars: list[ProgressBar] = []
        started = time.perf_counter()
        try:
            copied = partition_message_table(
                connection,
                partitions=wanted,
                batch_size=options["batch_size"],
                on_start=lambda total: bars.append(
                    ProgressBar("copying messages", total, stream=self.stdout)
                ),
                on_batch=lambda rows: bars[0].advance(rows),
            )
        except PartitioningError as exc:
            raise CommandError(f"{exc}; nothing changed") from exc
        if bars:
            bars[0].finish()
        self.stdout.write(
            self.style.SUCCESS(
                f"done: {copied} messages in {wanted} partitions "
                f"({time.perf_counter() - started:.1f} s)"
            )
        )
