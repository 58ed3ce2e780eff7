"""The ``--batch-size`` option of the batched operator commands: declared and read once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from ttmemory.conf import app_settings


def add_batch_size(parser: CommandParser, *, unit: str) -> None:
    """Declare ``--batch-size``: how many ``unit`` one transaction (one batch) takes."""
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help=f"{unit} per transaction (default: TTMEMORY['BATCH_SIZE'])",
    )


def batch_size(options: dict[str, Any]) -> int:
    """The ``--batch-size`` given, else ``TTMEMORY['BATCH_SIZE']``; zero or less exits with 2."""
    size = options["batch_size"]
    if size is None:
        size = app_settings.BATCH_SIZE
    if size < 1:
        raise CommandError("--batch-size must be positive", returncode=2)
    return int(size)
