# ruff: noqa: RUF003  (Cyrillic and full-width punctuation are quoted from the set)
"""The offline learner and recall on the seventh development set (``devset_natural7``): written
before any change made for it, on corrections said in passing in every language, Chinese and
Russian changes in everyday words, and a close person referred to by a pronoun in a later
message. Floors at what was reached, so none regresses; run with ``-s`` for the table and each
conversation's failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.learning.devset_natural7 import (
    CONVERSATIONS,
    CONVERSATIONS_B,
    CONVERSATIONS_C,
    CONVERSATIONS_D,
    CONVERSATIONS_E,
)
from tests.learning.test_devset import assert_floors, scored_batches

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

# First run, before any change made for it (SQLite, 7 Dec 2026): current 0.55 (18/33), learned
# 0.55, stale 0.61 (20/33), never 1.00 (6/6), precision 0.58 (18/31). Per category: corrections
# current 0.56 (9/16), stale 0.62, precision 0.60; pronoun follow-ups current 0.27 (3/11), stale
# 0.33 (3/9), never 1.00, precision 0.33; Chinese and Russian changes (job, relocation) 1.00,
# reversals stale 0.50 (1/2). Per language, current: de 0.33 (1/3), en 0.50 (6/12), es 0.50,
# fr 0.50, ru 0.71 (5/7), zh 0.57 (4/7). Missed: a lower-case correction ("no wait, it's
# tuesday not monday", "oops, bath not bristol"), a name corrected after a marker ("sorry,
# autocorrect - Miso, not Mochi", "ой, не Рекс, а Рич", "打错了，它叫来福"),
# "不对，是上海，不是北京", "ähm, drei Katzen, nicht zwei", "Кофе я больше не пью", and every
# pronoun follow-up.
# After a pronoun starting a sentence is read about the last close person named ([coreference]
# per rule file), a close person's move, employer and age as their slot, and a correction
# naming the value it replaces ([text] swap): current 0.97 (32/33), stale 0.97, precision 0.97;
# corrections 0.94, pronoun follow-ups 1.00. Left: "我的狗叫旺财" is not learned, "Кофе я
# больше не пью" does not end "Пользователь пьёт кофе каждый день".
# Batch B (29: the same three themes in other words), written after those changes and before any
# change made for it, first run (after fixing a crash it found in a German rule of those changes,
# a template naming a group no template may fill, which the rule files now refuse when they
# load): current 0.83 (24/29), stale 0.86 (24/28; one stale term, "Омск", a substring of the
# new value "Томске", was the set's error and is now "в Омске"), never 1.00 (6/6), precision
# 0.89 (24/27). Corrections 11/13 current ("ah sorry, thursdays, not wednesdays", "whoops, a
# Honda Jazz, not a Civic" missed), pronoun follow-ups 9/9 current, 8/8 stale, 6/6 never;
# Russian changes 3/3; Chinese changes 1/4 current ("改行做销售", "搬回重庆了", "现在我骑车上班").
# After "ah" and an article ("a Honda Jazz, not a Civic") in the English swap, the words a
# corrected value shares with the fact said once ("两只猫" for "一只" in "用户养了一只猫"),
# Chinese "改行做X" as a job, "搬回X" as a move, "现在我..." read as "我...", "在" of "现在" no
# employer's, a pet's name in Chinese, "打错了，它叫X", and a Russian denial's verb in the third
# person ("Кофе я больше не пью" ends "Пользователь пьёт кофе"): batch B 1.00 everywhere, batch
# A 1.00: both are now tuned on; the held-out set is the figure that counts.
# Batch C (23: corrections and Chinese changes, the held-out set's weakest, in words not used
# above), written after those changes and before any change made for it, first run: current
# 0.81 (17/21), stale 0.65 (15/23), never 1.00 (3/3), precision 0.68 (17/25). Corrections 9/13
# current, 8/13 stale ("Graz instead of Linz", "Verschrieben: Mainz statt Mannheim", "je me suis
# trompé, c'est Lille et pas Lyon", "不好意思，是小米，不是华为", "我在南京，不在苏州"); Chinese
# changes 5/5 current, 4/7 stale ("我已经结婚了" after "我是单身", "我改喝茶了", "我离职了");
# pronoun follow-ups 3/3. All three batches: current 0.95 (79/83), stale 0.90 (76/84),
# precision 0.91 (79/87).
# After "instead of" / "statt" / "au lieu de" / "en vez de" and more markers ("verschrieben",
# "je me suis trompé", "不好意思") in the swap, a correction that the rules also read as the new
# value ("我在南京，不在苏州"), Chinese marital status as a slot, "改喝茶" as a change of what the
# user drinks (the same verb of another value), and leaving one's job ending the job as well as
# the employer (English and Chinese): batch C 1.00 everywhere. All three: 1.00 (83/83 current,
# 84/84 stale, 15/15 never, 83/83 precision). Floors a little below: tuned on, not held out.
# Batch D (20: corrections, Chinese changes and pronoun follow-ups in words not used above),
# written after those changes and before any change made for it, first run: current 0.75
# (15/20), stale 0.68 (13/19; one stale term, "is Jo", a substring of the new "is Joe", was the
# set's error and is gone: that correction was followed), never 1.00 (4/4), precision 0.71
# (15/21). Corrections 9/10 current ("perdón, el 4 de mayo, no el 3" missed); Chinese changes
# 4/6 current, 2/6 stale ("调到广州", "毕业了", "改打羽毛球", "换车了，现在开特斯拉", "有女朋友了");
# pronoun follow-ups 2/4 current ("Oh and she just became a judge", "她现在在上海读研究生").
# All four batches: current 0.95 (98/103), stale 0.94, precision 0.94 (98/104).
# After a Spanish birthday, "became a judge" for a close person (and more professions), graduating
# ending "is a student" (English and Chinese), Chinese "有女朋友了" as marital status, "改打", a
# subjectless "现在开特斯拉" read with 我 put back, and the same Chinese verb of another value
# found after a word or two of when ("用户开的是丰田" / "用户开特斯拉"): batch D current 1.00,
# stale 0.94 (17/18; "我已经调到广州了" leaves "用户在深圳工作"), precision 0.91 (20/22). All four
# batches: current 1.00 (103/103), stale 0.99 (101/102), never 1.00, precision 0.98 (103/105).
# Batch E (16: corrections and changes inside longer chat messages, more Chinese and Russian
# changes, pronoun follow-ups), written after those changes and before any change made for it,
# first run: current 0.62 (10/16), learned 0.69, stale 0.77 (10/13), never 1.00 (5/5),
# precision 0.61 (11/18; four of the seven facts not asked for are true: "The user's parents
# live in Galway", "The user's best friend Jake is moving to Denver next month", "用户的老公现在自
# 己开公司" and the husband's old job, which it should have replaced). All five batches: current
# 0.95 (113/119), stale 0.97 (111/115), never 1.00, precision 0.93 (114/123).
# After a count corrected in passing keeping only the count ("oh 5 actually": "actually" is no
# word it counts), "btw" and an aside after a correction naming the old value (", they moved
# it"), two facts about the same close person compared on what they say of them (the sister's
# "also allergic to milk" had replaced her "allergic to eggs"), Chinese "开始吃辣" and "移民到",
# and a Russian "теперь фрилансер" after a comma: batch E current 0.94 (15/16), stale 1.00,
# precision 0.75 (15/20: the five facts not asked for, four of them true). All five batches:
# current 0.99 (118/119), stale 0.99 (114/115), never 1.00, precision 0.94 (118/125).
FLOORS = {"current": 0.97, "learned": 0.97, "stale": 0.97, "never": 1.0, "precision": 0.93}


def test_the_seventh_development_set_scores_at_least_its_floors(db: Any) -> None:
    batches = {
        "A": CONVERSATIONS,
        "B": CONVERSATIONS_B,
        "C": CONVERSATIONS_C,
        "D": CONVERSATIONS_D,
        "E": CONVERSATIONS_E,
    }
    table = scored_batches(batches)
    assert_floors(table, FLOORS)
