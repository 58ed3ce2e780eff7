"""The offline learner on the second development set (``devset_natural2``): written before the
rules it measures were extended, phrased unlike the first. Floors at what was reached, so none
regresses; run with ``-s`` for the table and each conversation's failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural import Conversation
from tests.learning.devset_natural2 import CONVERSATIONS, CONVERSATIONS_B
from tests.learning.test_devset import assert_floors, scored

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

# What this set reached at the end of the round that wrote it (SQLite, 6 Dec 2026): current 0.92,
# learned 0.98, stale 1.00, never 1.00, precision 1.00 over both batches; before the round's
# rules, batch A scored learned 0.65, stale 0.81, precision 0.85, and batch B (written after the
# first rules, run once before any rule was changed for it) 0.85, 0.83, 0.85. The floors sit a
# little below (the test embedder's key is random). The held-out set moved far less (bench/natural,
# docs/benchmarks.md): these figures say what the rules cover, not how well they generalise.
FLOORS = {"current": 0.88, "learned": 0.95, "stale": 0.97, "never": 1.0, "precision": 0.97}


def test_the_second_development_set_scores_at_least_its_floors(db: Any) -> None:

    def part(conversation: Conversation) -> str:
        return "all:B" if conversation in CONVERSATIONS_B else "all:A"

    table = scored(CONVERSATIONS + CONVERSATIONS_B, part)
    assert_floors(table, FLOORS)
