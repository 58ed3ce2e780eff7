"""The offline learner on the third development set (``devset_natural3``): written before any
rule was changed for it, in phrasings the rules had not seen. Floors at what was reached, so
none regresses; run with ``-s`` for the table and each conversation's failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural import Conversation
from tests.learning.devset_natural3 import CONVERSATIONS, CONVERSATIONS_B, CONVERSATIONS_C
from tests.learning.test_devset import assert_floors, scored

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

# Before any rule was changed for it (SQLite, 7 Dec 2026): current 0.59, learned 0.62, stale 0.77,
# never 0.97, precision 0.80: the honest generalisation figure of the rules as they were. After
# the round that used it (dated plans in any words, loose corrections, German verb-second order,
# dropped subjects put back, plain negations ending the fact they restate, "too" additions):
# current 0.82, learned 0.86, stale 0.96, never 1.00, precision 0.96. Batch B (23 conversations,
# corrections, reversals, changes), written after those rules and run once before any rule was
# changed for it: current 0.64, learned 0.64, stale 0.62 (one miss was a data bug, "Омск" inside
# "Томске", since fixed), never 1.00, precision 0.58; after:
# 0.95, 0.95, 1.00, 1.00, 0.88. Batch C (12: reversals, retractions, job changes with other
# verbs), written after batch B's rules, first run: current 0.43, learned 0.43, stale 0.58,
# precision 0.27; after: 0.71, 0.86, 0.83, 0.55 (its labels list too few true facts: "is
# divorced", "works at a hotel" count against precision). All three batches: current 0.83,
# learned 0.88, stale 0.96, never 1.00, precision 0.90. The floors sit a little below (the test
# embedder's key is random); later figures say what the rules cover, not how well they generalise.
FLOORS = {"current": 0.80, "learned": 0.85, "stale": 0.93, "never": 1.0, "precision": 0.87}


def test_the_third_development_set_scores_at_least_its_floors(db: Any) -> None:

    def part(conversation: Conversation) -> str:
        if conversation in CONVERSATIONS_C:
            return "all:C"
        return "all:B" if conversation in CONVERSATIONS_B else "all:A"

    table = scored(CONVERSATIONS + CONVERSATIONS_B + CONVERSATIONS_C, part)
    assert_floors(table, FLOORS)
