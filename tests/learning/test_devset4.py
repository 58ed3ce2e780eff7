"""The offline learner and recall on the fourth development set (``devset_natural4``): written
before any rule or recall change of round 6, questions worded unlike what was said. Floors at
what was reached, so none regresses; run with ``-s`` for the table and each conversation's
failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural import Conversation
from tests.learning.devset_natural4 import CONVERSATIONS, CONVERSATIONS_B
from tests.learning.test_devset import assert_floors, scored

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

# First run, before any rule or recall change of round 6 (SQLite, 7 Dec 2026): current 0.71
# (61/86), learned 0.74 (64/86), stale 0.83 (30/36), never 1.00 (17/17), precision 0.88
# (64/73): the generalisation figure of the rules and recall as they were.
# Batch A's end (after round 6's mechanisms): current 0.99 (85/86), learned 0.99, stale 0.97
# (35/36), never 1.00, precision 0.96 (85/89). Batch B (20 conversations), written after the
# first of them and run once before any change for it: current 0.78 (21/27), learned 0.78, stale
# 0.50 (3/6), never 1.00, precision 0.75 (21/28); after ("not X, Y" corrections, a sentence that
# only announces a correction joined to the next, "same for X"): 0.93, 0.93, 1.00, 1.00, 0.86.
# Both: current 0.97 (110/113), learned 0.97, stale 0.98 (41/42), never 1.00, precision 0.93
# (110/118; most misses are true facts the labels do not ask for: "The user's wife is a vet").
# The floors sit a little below (the test embedder's key is random).
FLOORS = {"current": 0.94, "learned": 0.94, "stale": 0.95, "never": 1.0, "precision": 0.9}


def test_the_fourth_development_set_scores_at_least_its_floors(db: Any) -> None:

    def part(conversation: Conversation) -> str:
        return "all:B" if conversation in CONVERSATIONS_B else "all:A"

    table = scored(CONVERSATIONS + CONVERSATIONS_B, part)
    assert_floors(table, FLOORS)
