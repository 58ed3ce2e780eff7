"""Background jobs at a glance: ``--lag`` prints how far each Celery queue is behind."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ttmemory import jobs


class Command(BaseCommand):
    help = (
        "Report the background job queues (TTMEMORY['QUEUES']): with --lag, messages waiting "
        "per queue and the age of the oldest (Redis broker), read from the broker now."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--lag", action="store_true", help="Print per-queue lag.")
        parser.add_argument("--json", action="store_true", help="One JSON object per queue.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["lag"]:
            raise CommandError("say what to report: --lag")
        report = jobs.queue_lag()
        if not report:
            self.stdout.write("background jobs run inline (no Celery app with a broker)")
            return
        for lag in report:
            if options["json"]:
                self.stdout.write(
                    json.dumps(
                        {
                            "queue": lag.queue,
                            "families": list(lag.families),
                            "waiting": lag.waiting,
                            "oldest_seconds": lag.oldest_seconds,
                            "consumers": lag.consumers,
                        }
                    )
                )
                continue
            oldest = "-" if lag.oldest_seconds is None else f"{lag.oldest_seconds:.1f}s"
            consumers = "" if lag.consumers is None else f", {lag.consumers} consumers"
            self.stdout.write(
                f"{lag.queue} ({', '.join(lag.families)}): {lag.waiting} waiting, "
                f"oldest {oldest}{consumers}"
            )
