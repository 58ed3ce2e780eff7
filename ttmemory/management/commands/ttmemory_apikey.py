"""Create an API key for service clients of the REST API and print it once."""

from __future__ import annotations

import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from ttmemory.exceptions import MemoryValidationError
from ttmemory.services.access import api_key_create


class Command(BaseCommand):
    help = (
        "Create an API key granted to one or more namespaces and print it as "
        "'export TTMEMORY_API_KEY=...' (shown once; only a hash is stored)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="who uses the key, e.g. support-bot")
        parser.add_argument(
            "--namespace",
            action="append",
            required=True,
            dest="namespaces",
            help="a namespace it may use (repeat for several; 'acme/*' grants a prefix)",
        )
        parser.add_argument("--can-rollback", action="store_true", help="may roll back sessions")
        parser.add_argument("--can-erase", action="store_true", help="may erase its namespaces")
        parser.add_argument(
            "--expires-in-days",
            type=float,
            default=None,
            help="refused after this many days (default: never expires)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["expires_in_days"]
        if days is not None and days <= 0:
            raise CommandError("--expires-in-days must be positive")
        expires_at = None if days is None else timezone.now() + datetime.timedelta(days=days)
        try:
            key, raw = api_key_create(
                name=options["name"],
                namespaces=options["namespaces"],
                can_rollback=options["can_rollback"],
                can_erase=options["can_erase"],
                expires_at=expires_at,
            )
        except MemoryValidationError as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write(
            f"API key {key.prefix!r} for {', '.join(options['namespaces'])} created; send it as "
            "'Authorization: Api-Key <key>'. It is shown once:"
        )
        self.stdout.write(f'export TTMEMORY_API_KEY="{raw}"')
