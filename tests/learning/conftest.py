"""Fixtures of the learning tests. Not autouse: the Celery worker, routing and rate-limit tests
here queue their jobs as a project does; a file whose turns must be learned as they arrive
says so with ``pytestmark = pytest.mark.usefixtures("inline_learning")``."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def inline_learning(settings: Any) -> None:
    """Jobs run inline: each ``turn_add`` learns its turn before it returns."""
    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "inline"}
