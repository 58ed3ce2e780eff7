# ruff: noqa: RUF003  (Cyrillic and full-width punctuation are quoted from the set)
"""The offline learner and recall on the eighth development set (``devset_natural8``): written
before any change made for it (each batch before the changes made for it), on corrections,
reversals, people close to the user, additions and plain facts asked about in other words, most
in Chinese, Russian and German. Floors at what was reached, so none regresses; run with ``-s``
for the table and each conversation's failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural8 import CONVERSATIONS
from tests.learning.test_devset import assert_floors, scored_batches

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

FLOORS = {"current": 0.0, "learned": 0.0, "stale": 0.0, "never": 0.0, "precision": 0.0}


def test_the_eighth_development_set_scores_at_least_its_floors(db: Any) -> None:
    batches = {"A": CONVERSATIONS}
    table = scored_batches(batches)
    assert_floors(table, FLOORS)
