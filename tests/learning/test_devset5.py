"""The offline learner and recall on the fifth development set (``devset_natural5``): written
before round 7's fallback for plain first-person statements, heavy on everyday facts no slot rule
names. Floors at what was reached, so none regresses; run with ``-s`` for the table and each
conversation's failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural5 import CONVERSATIONS
from tests.learning.test_devset import assert_floors, scored

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

# First run, before any change of round 7 (SQLite, 7 Dec 2026): see below.
FLOORS = {"current": 0.0, "learned": 0.0, "stale": 0.0, "never": 0.0, "precision": 0.0}


def test_the_fifth_development_set_scores_at_least_its_floors(db: Any) -> None:
    table = scored(CONVERSATIONS)
    assert_floors(table, FLOORS)
