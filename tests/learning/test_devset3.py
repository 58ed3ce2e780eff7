"""The offline learner on the third development set (``devset_natural3``): written before any
rule was changed for it, in phrasings the rules had not seen. Floors at what was reached, so
none regresses; run with ``-s`` for the table and each conversation's failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural3 import CONVERSATIONS
from tests.learning.test_devset import assert_floors, scored

pytestmark = pytest.mark.contract

FLOORS = {"current": 0.0, "learned": 0.0, "stale": 0.0, "never": 0.0, "precision": 0.0}


def test_the_third_development_set_scores_at_least_its_floors(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "inline"}
    table = scored(CONVERSATIONS)
    assert_floors(table, FLOORS)
