"""Print a new random encryption key entry for ENCRYPTION_KEYS."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ttmemory.crypto import generate_key


class Command(BaseCommand):
    help = "Print a new AES-256 key as 'key_id:base64' for TTMEMORY['ENCRYPTION_KEYS']."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--key-id", default="k1", help="identifier stored with each value")

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(generate_key(options["key_id"]))
