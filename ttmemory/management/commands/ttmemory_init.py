"""Print fresh keys and the settings block for a new project (runs before any key exists)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ttmemory.setup_text import init_text


class Command(BaseCommand):
    help = (
        "Print a fresh encryption key and blind index key as environment variables, and the "
        "settings block to paste. Nothing is written; the same as `python -m ttmemory init`."
    )
    requires_system_checks: list[str] = []  # it is how a project without keys gets them

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--key-id", default="k1", help="id stored with each encrypted value")

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(init_text(key_id=options["key_id"]), ending="")
