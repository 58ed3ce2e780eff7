"""The offline learner on the development set of natural conversations (``devset_natural``):
scores per category and language, each with a floor at what was reached, so none regresses.

Run with ``-s`` to see the table. Learned through ``turn_add`` (inline jobs); asked with
``fact_recall`` top 5 in a later call. The floors are this set's, not a reported benchmark.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from tests.conftest import assistant, user
from tests.learning.devset_natural import CONVERSATIONS, Conversation
from ttmemory import memory
from ttmemory.models import Fact

pytestmark = [pytest.mark.contract, pytest.mark.usefixtures("inline_learning")]

# What this set reached (overall); a change that scores lower fails. "current" (recalled in the
# top 5) was 0.60 before a fact's postings held the words naming its slot (issue 35, slots) and
# 0.99 after; its floor sits a little below, as the test embedder's key is random.
# "stale" missed one until round 9: "Tennis spiele ich nicht mehr" did not end "Der Nutzer spielt
# gern Tennis" in an English namespace (German verbs are not stemmed there); a denial's word now
# also matches a form it starts or that starts it ("spiel" / "spielt").
FLOORS = {"current": 0.95, "learned": 0.98, "stale": 0.97, "never": 1.0, "precision": 0.95}
# Every language's facts are learned, not only English ones.
LANGUAGE_LEARNED_FLOOR = 0.9


def _has(text: str, terms: list[str]) -> bool:
    low = text.lower()
    return all(term.lower() in low for term in terms)


def score(conversation: Conversation, failed: list[str] | None = None) -> dict[str, list[int]]:
    """Hits and totals of one conversation: {metric: [hits, total]} (``failed`` collects what
    went wrong, for a reader of ``-s``)."""
    failed = failed if failed is not None else []
    namespace = "dev-" + conversation["id"]
    session = memory.session_open(namespace=namespace, key="chat")
    for text in conversation["said"]:
        memory.turn_add(session=session, messages=[user(text), assistant("Noted.")])
    active = [fact.text for fact in memory.fact_list(namespace=namespace)]
    every = [fact.text for fact in Fact.objects.filter(namespace=namespace)]
    result: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    wanted = conversation.get("current", [])
    for query, terms in wanted:
        recalled = [f.text for f in memory.fact_recall(namespace=namespace, query=query, k=5).facts]
        found = any(_has(text, terms) for text in recalled)
        result["current"][0] += found
        result["current"][1] += 1
        learned = any(_has(text, terms) for text in active)
        if learned and not found:
            failed.append(f"learned, not recalled: {query!r} -> {recalled}")
        result["learned"][0] += learned
        result["learned"][1] += 1
        if not learned:
            failed.append(f"not learned: {terms}")
    for term in conversation.get("stale", []):
        still = [text for text in active if term.lower() in text.lower()]
        result["stale"][0] += not still
        result["stale"][1] += 1
        if still:
            failed.append(f"stale {term!r} still current: {still}")
    for term in conversation.get("never", []):
        stored = [text for text in every if term.lower() in text.lower()]
        result["never"][0] += not stored
        result["never"][1] += 1
        if stored:
            failed.append(f"never {term!r} stored: {stored}")
    for text in active:
        true = any(_has(text, terms) for _, terms in wanted)
        result["precision"][0] += true
        result["precision"][1] += 1
        if not true:
            failed.append(f"not asked for: {text!r}")
    return result


Table = dict[str, dict[str, list[int]]]
METRICS = ("current", "learned", "stale", "never", "precision")


def scored(conversations: list[Conversation], part: Any = None) -> Table:
    """Every conversation learned and scored, summed per group ("all", ``part(conversation)``
    when given, "lang:...", "cat:..."), printed as a table with each failure (``-s``)."""
    table: Table = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for conversation in conversations:
        failed: list[str] = []
        groups = ["all", "lang:" + conversation["lang"], "cat:" + conversation["cat"]]
        if part is not None:
            groups.insert(1, part(conversation))
        for metric, (hits, total) in score(conversation, failed).items():
            for group in groups:
                table[group][metric][0] += hits
                table[group][metric][1] += total
        for failure in failed:
            print(f"{conversation['id']}: {failure}")
    print("\n" + "group".ljust(16) + "".join(m.rjust(14) for m in METRICS))
    for group in sorted(table, key=lambda g: (not g.startswith("all"), g)):
        cells = []
        for metric in METRICS:
            hits, total = table[group][metric]
            cells.append((f"{hits / total:.2f} ({hits}/{total})" if total else "-").rjust(14))
        print(group.ljust(16) + "".join(cells))
    return table


def scored_batches(batches: dict[str, list[Conversation]]) -> Table:
    """``scored`` over every batch of a development set, each conversation also counted in its
    batch's group ("all:A", "all:B", ...)."""
    group = {id(c): f"all:{name}" for name, batch in batches.items() for c in batch}
    every = [c for batch in batches.values() for c in batch]
    return scored(every, lambda conversation: group[id(conversation)])


def assert_floors(table: Table, floors: dict[str, float]) -> None:
    overall = {m: table["all"][m][0] / max(table["all"][m][1], 1) for m in METRICS}
    for metric, floor in floors.items():
        assert overall[metric] >= floor, f"{metric} {overall[metric]:.2f} < floor {floor}"


def test_the_development_set_scores_at_least_its_floors(db: Any) -> None:
    table = scored(CONVERSATIONS)
    assert_floors(table, FLOORS)
    for group, scores in table.items():
        if group.startswith("lang:"):
            hits, total = scores["learned"]
            assert hits / total >= LANGUAGE_LEARNED_FLOOR, f"{group} learned {hits}/{total}"
