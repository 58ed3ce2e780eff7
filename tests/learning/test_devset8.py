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

from tests.learning.devset_natural8 import CONVERSATIONS, CONVERSATIONS_B, CONVERSATIONS_C
from tests.learning.test_devset import assert_floors, scored_batches

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

# Batch A (37 conversations), first run before any change made for it (SQLite, 7 Dec 2026,
# round 10; the generalisation figure): current 0.60 (21/35), learned 0.60, stale 0.57 (12/21),
# never 0.86 (6/7; the one miss was the set's error: "usuario vive en Valencia" is a substring of
# the brother's "Hermano del usuario vive en Valencia"; that "never" term is gone),
# precision 0.66 (21/32). Corrections 0.36 current (4/11), 0.55 stale; reversals 0.33 stale
# (2/6); others 0.71 (5/7); additions 0.50 (4/8); plain 0.80. Per language, current: de 0.43, en
# 0.50, es 0.67, fr 1.00, ru 0.62, zh 0.71. Every current miss (14) was extraction (the fact
# was not stored or not current), none recall (a stored current fact always reached the top 5);
# the 9 stale misses were extraction too (the old fact left current).
# After the words announcing a correction read as data per language ([text] correcting and
# correcting_value: what follows is the value said alone or the statement said again), a count
# said alone ("hmm four actually"), and a dash between a correction's words and its value
# ("Moment, stimmt nicht - am Freitag"): current 0.74 (26/35), stale 0.81 (17/21), precision
# 0.84 (26/31).
# After what was given up said object first (the rule files' [plain] ended) and named by its
# stem, additions said without their verb, a Russian "also" pet no longer taken for the first
# said again (the subject's other case is no content term), close persons with a name before
# the verb, "мой/mi" + something of the user's with its value, "Я родом из", and "My wife's
# allergic": batch A current 1.00 (35/35), stale 1.00 (21/21), never 1.00 (6/6), precision
# 0.97 (35/36: the teacher wife's school, true and not asked for).
# Batch B (30: the same categories in words not used in A), written after A's changes and
# before any change made for it, first run: current 0.62 (18/29), learned 0.62, stale 0.44
# (8/18), never 1.00 (5/5), precision 0.64 (18/28). Missed: corrections "argh, march 13th I
# mean", "ой, то есть Саша, ...", "Не в Перми, в Ижевске, опечатался", "Ups, mit C: Catrin",
# "bueno, 4, contando a mi medio hermano"; reversals "От кофе я отказался", "猫送人了", "Lo del
# pádel ya se acabó", "haven't been climbing since my knee surgery, kind of done with it";
# additions said in a later turn ("Ну и по-немецки немного", "吉他也会一点", "et deux chats
# aussi", "Kaffee mag ich aber auch"); "我辞职了，现在自己开咖啡店"; a new e-mail after "nutze ich
# nicht mehr". Every current miss (11) was extraction again, none recall.
# After a value added or corrected in a later turn put in place of the word of its kind in the
# fact (the rule files' [[kind]] members: "吉他" for "钢琴", "deux chats" for "un chien"), words
# that introduce the value without punctuation ("ой, то есть Саша"), a day beside the month
# ("march 13th") and ordinals replaced whole, and data for the rest: batch B current 0.97
# (28/29), stale 0.89 (16/18), precision 0.93 (28/30). Left: "Ups, mit C: Catrin" (a name
# spelled again), "kind of done with it" (climbing).
# Batch C (25: the same categories again in words not used in A or B), written after B's
# changes and before any change made for it, first run: current 0.62 (15/24), learned 0.62,
# stale 0.53 (9/17), never 1.00 (4/4), precision 0.58 (15/26). Every current miss (9) was
# extraction, none recall. After a value that is a correction's own word refused ("Ach nee,
# Quatsch - Bonn" stored "wohnt in Quatsch"), what was given up read before the negation of its
# aside ("quit smoking in March, not touched one since") and named by what its word and stem
# start with ("smok" ends "smoker"; a retraction's pattern also reads the namespace's 50 newest
# facts), a kind swap only for a value that is one member ("a Toyota Yaris" is no kind swap),
# and data (ru "Моей дочке 8 лет", "У моей жены ...", "неверно написал", "репетитор"; zh "还有X",
# "在X住" as location; de "und ein bisschen X"; en "X actually", "... lol"): batch C current
# 0.92 (22/24), stale 0.82 (14/17), precision 0.81 (22/27). All three batches: current 0.97
# (85/88), stale 0.91 (51/56), never 1.00 (15/15), precision 0.91 (85/93). Left: "Ups, mit C:
# Catrin"; "kind of done with it" (climbing); "酒我已经好久不碰了"; "Seit Weihnachten esse ich
# wieder Käse und Eier" (no longer vegan); "Mi novio y yo lo dejamos, ahora vivo sola"; "Ach nee,
# Quatsch - Bonn. Köln war früher" ends Köln but stores no Bonn; "oh and a bearded dragon lol".
# Floors a little below: tuned on, not held out.
FLOORS = {"current": 0.95, "learned": 0.95, "stale": 0.89, "never": 1.0, "precision": 0.89}


def test_the_eighth_development_set_scores_at_least_its_floors(db: Any) -> None:
    batches = {"A": CONVERSATIONS, "B": CONVERSATIONS_B, "C": CONVERSATIONS_C}
    table = scored_batches(batches)
    assert_floors(table, FLOORS)
