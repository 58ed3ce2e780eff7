"""The offline learner and recall on the sixth development set (``devset_natural6``): written
before any change of round 9, heavy on corrections, changes said in other words, changes in
Chinese, Russian and German, and other people's facts. Floors at what was reached, so none
regresses; run with ``-s`` for the table and each conversation's failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural6 import (
    CONVERSATIONS,
    CONVERSATIONS_B,
    CONVERSATIONS_C,
    CONVERSATIONS_D,
    CONVERSATIONS_E,
    CONVERSATIONS_F,
    CONVERSATIONS_G,
)
from tests.learning.test_devset import assert_floors, scored_batches

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

# First run, before any change of round 9 (SQLite, 7 Dec 2026): current 0.81 (38/47), learned
# 0.81, stale 0.71 (27/38), never 1.00 (2/2), precision 0.73 (38/52); reversals 0.25 current and
# stale: the generalisation figure. After a statement said again in the same words around another
# count or, with a word that says it corrects or changes, another value supersedes the old one;
# the opposite of a value supersedes it; quitting what the user does ends it; got engaged to:
# current 0.81, stale 0.84 (32/38), precision 0.81 (38/47); after a count corrected in passing
# ("wait, two cats, not three"): current 0.83, stale 0.87, precision 0.83. What is left: changes
# that share no word with the old fact ("work from home" after "train to the office"), "switched
# to swimming instead of tennis", "her name is Johanna" (whose?).
# Batch B (20 conversations: contact details, additions, other people's facts, corrections in
# more languages), written after those changes and before any made for it, first run: current
# 0.80 (24/30), learned 0.87, stale 0.71 (10/14), never 1.00, precision 0.90 (26/29). After a
# count corrected in Russian ("нет, три собаки": the number before the same word replaced) and an
# addition with an aside after it ("and to kiwi too, forgot to mention"): 0.87, 0.93, 0.85
# (11/13; one stale term, a substring of the sister's own fact, was the set's error and is gone),
# 1.00, 0.93. Kinds indexed with facts: batch B current 0.90.
# Batch C (20 conversations: changes in Chinese, Russian and German said in everyday ways),
# written after that and before any change made for it, first run: current 0.74 (17/23), stale
# 0.70 (14/20), precision 0.65 (17/26). After "我在广州生活" as a location, a Chinese birthday, a
# Russian pet's name, "不跑步了" ending the fact that writes it, a denial's verb matching its
# other forms ("trinke" / "trinkt") and ", nur noch Tee" as a German tail: 0.78 / 0.85 / 0.82.
# All three batches: current 0.84 (84/100), learned 0.85, stale 0.86 (61/71), never 1.00,
# precision 0.86 (85/99).
# Batch D (15 corrections said the ways people correct themselves in chat), written after that
# and before any change made for it, first run: current 0.53 (8/15), stale 0.67 (10/15),
# precision 0.62 (8/13). After a sentence that says the value is no bare marker ("Sorry, Cork,
# not Dublin."), the one capitalised value inside a fact replaced, "make that blue", "*Ana" and
# "sorry, a Toyota Yaris, the Corolla was ...": 0.80 / 0.93 / 0.92. All four batches: current
# 0.83 (96/115), stale 0.87 (75/86), precision 0.87 (97/112).
# Batch E (20: other people's facts, contact details, additions said in passing), written after
# that and before any change made for it, first run: current 0.77 (24/31), stale 0.64 (7/11),
# precision 0.92. After "my mom just turned 70", "started learning the piano", "and a brother
# in Hull", a Russian handle said after its label, "..., neu: <e-mail>", "y también a los
# gatos" (two stale terms that were substrings of a relative's own fact were the set's errors
# and are gone): current
# 0.97 (30/31), stale 0.78, precision 0.97. All five batches: current 0.86 (126/146), stale 0.87
# (83/95), precision 0.89 (127/143).
# Batch F (15: "I used to ..., now ..." in every language, more Chinese changes), written after
# that and before any change made for it, first run: current 0.62 (8/13), stale 0.73 (11/15),
# precision 0.67. After the past-habit words (以前, раньше, früher, autrefois, solía) as words
# that say something stopped, and a Chinese denial named without its 我: 0.69 / 0.93 / 0.90.
# All six batches: current 0.85 (135/159), stale 0.88 (97/110), precision 0.89 (136/153).
# Batch G (15: everyday facts asked about in other words), written after that and before any
# change made for it, first run: current 0.83 (20/24), learned 0.96, precision 0.85. After
# "dietary", "dairy" and religion as kinds and religions as no names ("I'm Muslim" was stored
# as a name): 0.96 / 0.96 / 0.88. All seven batches: current 0.86 (158/183), stale 0.88,
# precision 0.89 (158/178).
FLOORS = {"current": 0.82, "learned": 0.83, "stale": 0.84, "never": 1.0, "precision": 0.85}


def test_the_sixth_development_set_scores_at_least_its_floors(db: Any) -> None:

    batches = {
        "A": CONVERSATIONS,
        "B": CONVERSATIONS_B,
        "C": CONVERSATIONS_C,
        "D": CONVERSATIONS_D,
        "E": CONVERSATIONS_E,
        "F": CONVERSATIONS_F,
        "G": CONVERSATIONS_G,
    }
    table = scored_batches(batches)
    assert_floors(table, FLOORS)
