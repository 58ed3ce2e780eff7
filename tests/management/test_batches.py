"""The batched operator commands read ``--batch-size`` alike: a size below one is a usage error."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

BATCHED = (
    "ttmemory_reembed",
    "ttmemory_reindex",
    "ttmemory_rebind",
    "ttmemory_rotate_keys",
    "ttmemory_prune",
)


@pytest.mark.parametrize("command", BATCHED)
@pytest.mark.parametrize("size", ["0", "-1"])
def test_a_batch_size_below_one_is_a_usage_error(db: Any, command: str, size: str) -> None:
    with pytest.raises(CommandError, match="--batch-size must be positive") as caught:
        call_command(command, "--batch-size", size, stdout=io.StringIO(), stderr=io.StringIO())

    assert caught.value.returncode == 2
