"""docs/integrations/openai-agents.md: its example runs as written against the test database."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from agents import set_tracing_disabled
from asgiref.sync import sync_to_async
from django.db import connections

DOC = Path(__file__).resolve().parents[3] / "docs" / "integrations" / "openai-agents.md"


@pytest.mark.django_db(transaction=True)
def test_the_example_runs_as_written_twice_in_a_row() -> None:
    """A reader runs the example again: the second run meets the first one's history."""
    set_tracing_disabled(True)
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert blocks
    try:
        for run in (1, 2):
            scope: dict[str, Any] = {}
            for number, block in enumerate(blocks, start=1):
                name = f"openai-agents.md block {number}, run {run}"
                exec(compile(block, name, "exec"), scope)
            assert len(scope["roles"]) == 4 * run  # both turns kept, in one session
    finally:
        asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())
