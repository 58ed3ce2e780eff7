"""The offline learner and recall on the sixth development set (``devset_natural6``): written
before any change of round 9, heavy on corrections, changes said in other words, changes in
Chinese, Russian and German, and other people's facts. Floors at what was reached, so none
regresses; run with ``-s`` for the table and each conversation's failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural6 import CONVERSATIONS
from tests.learning.test_devset import assert_floors, scored

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

FLOORS = {"current": 0.0, "learned": 0.0, "stale": 0.0, "never": 0.0, "precision": 0.0}


def test_the_sixth_development_set_scores_at_least_its_floors(db: Any) -> None:
    table = scored(CONVERSATIONS)
    assert_floors(table, FLOORS)
