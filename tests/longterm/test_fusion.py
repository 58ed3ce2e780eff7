"""Recall's neighbour context and relative cut (ttmemory.longterm.fusion), on both databases."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.longterm.test_facts import use_broken_embedder
from ttmemory import memory
from ttmemory.longterm import fusion

NS = "user-fusion"
CHAT = [
    "The train was late again this morning, forty minutes on the platform.",
    "That sounds tiring. Is there another line you could take?",
    "Yesterday I went to a pottery class with my sister Lena, first time ever.",
    "Oh fun! Did you make anything?",
    "I made a blue bowl, a bit wonky but I love it.",
    "That sounds wonderful, thanks for telling me!",
    "I had leftover soup for lunch today, nothing special.",
    "Sometimes simple is best. Anything planned for the evening?",
]
QUESTION = "What did Ada make at the pottery class?"


def remember_chat(namespace: str = NS, other: str | None = None) -> None:
    """Each turn a fact, in order; ``other`` gets a fact between every two (ids interleave)."""
    for number, text in enumerate(CHAT):
        memory.fact_remember(namespace=namespace, text=text, kind="turn")
        if other is not None:
            memory.fact_remember(namespace=other, text=f"pottery class note {number}", kind="turn")


def texts(result: Any) -> list[str]:
    return [fact.text for fact in result.facts]


def test_the_answer_is_found_through_the_turns_around_it(db: Any, settings: Any) -> None:
    use_broken_embedder(settings)  # keyword scores only: what matched is exact
    remember_chat()

    found = memory.fact_recall(namespace=NS, query=QUESTION, k=4)
    alone = memory.fact_recall(namespace=NS, query=QUESTION, k=4, context=False)

    # "I made a blue bowl" shares no word with the question; the two turns before it do (the
    # context is symmetric: the turn before the class, as near, scores the same).
    assert "I made a blue bowl, a bit wonky but I love it." in texts(found)
    assert "I made a blue bowl, a bit wonky but I love it." not in texts(alone)
    assert texts(alone)[0] in texts(found)
    assert not any("leftover soup" in t or "train" in t for t in texts(found))
    assert found.hits == sorted(found.hits, key=lambda hit: -hit[1])

    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_CONTEXT_WINDOW": 0}
    assert texts(memory.fact_recall(namespace=NS, query=QUESTION, k=4)) == texts(alone)


def test_neighbours_never_cross_namespaces_or_filters(db: Any, settings: Any) -> None:
    use_broken_embedder(settings)
    remember_chat(other="user-fusion-other")  # another namespace's facts between every two
    memory.fact_remember(namespace=NS, text="Pottery class notes: bring an apron", kind="todo")

    found = memory.fact_recall(namespace=NS, query=QUESTION, k=5, kinds=["turn"])

    assert "I made a blue bowl, a bit wonky but I love it." in texts(found)
    assert all(fact.namespace == NS and fact.kind == "turn" for fact in found.facts)

    # A superseded turn is not recalled, and no longer carries its neighbours.
    bowl = next(f for f in found.facts if f.text.startswith("I made"))
    memory.fact_supersede(namespace=NS, fact_id=bowl.pk, text="I made a green vase in the end.")
    again = memory.fact_recall(namespace=NS, query=QUESTION, k=5, kinds=["turn"])
    assert bowl.pk not in [f.pk for f in again.facts]


def test_min_relative_drops_hits_far_below_the_best(db: Any, settings: Any) -> None:
    use_broken_embedder(settings)
    remember_chat()
    everything = memory.fact_recall(namespace=NS, query=QUESTION, k=8)
    assert len(everything.hits) >= 3

    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_MIN_RELATIVE": 0.9}
    strict = memory.fact_recall(namespace=NS, query=QUESTION, k=8)

    best = everything.hits[0][1]
    assert strict.hits == [(f, s) for f, s in everything.hits if s >= 0.9 * best]
    assert 1 <= len(strict.hits) < len(everything.hits)


def test_expand_adds_the_neighbours_scores_within_the_window() -> None:
    scores = {1: 1.0, 2: 0.0, 3: 0.5}
    runs = {1: [1, 2, 3, 4, 5], 3: [1, 2, 3, 4, 5, 6, 7]}

    expanded = fusion.expand(scores, runs, window=1, weight=0.5)

    assert expanded == {1: 1.0, 2: 0.75, 3: 0.5, 4: 0.25}
    assert fusion.cut(expanded, floor=0.0, relative=0.6) == [(1, 1.0), (2, 0.75)]


@pytest.mark.parametrize("name", ["RECALL_MIN_RELATIVE", "RECALL_MIN_SIMILARITY"])
@pytest.mark.parametrize("value", [-0.1, 1.5, "high"])
def test_bad_settings_are_refused(settings: Any, name: str, value: Any) -> None:
    from django.core.checks import run_checks

    settings.TTMEMORY = {**settings.TTMEMORY, name: value}
    assert any(message.id == "ttmemory.E026" for message in run_checks(tags=["ttmemory"]))


def test_min_similarity_gives_no_memory_for_a_question_about_nothing_stored(
    db: Any, settings: Any
) -> None:
    # HashEmbedder hashes words into buckets with a per-run random key, so a collision moves a
    # cosine by a few hundredths. A fixed key makes the test mean one thing: with it the
    # unrelated question's best cosine is 0.09 and the pottery question's 0.50, and the floor
    # sits between them with room on both sides.
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EMBEDDER": {
            "BACKEND": "ttmemory.backends.embedders.HashEmbedder",
            "OPTIONS": {"key": base64.b64encode(b"fusion-min-similarity-test-key-1").decode()},
        },
    }
    remember_chat()
    unrelated = "Which class does the violin teacher give on Thursdays?"
    assert memory.fact_recall(namespace=NS, query=unrelated, k=5).hits  # some word matches

    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_MIN_SIMILARITY": 0.3}
    gated = memory.fact_recall(namespace=NS, query=unrelated, k=5)
    assert gated.hits == [] and gated.mode == "hybrid"
    # A question close to what was said still gets its memories, neighbours included.
    found = memory.fact_recall(namespace=NS, query="I made a blue bowl at the pottery class", k=5)
    assert "I made a blue bowl, a bit wonky but I love it." in texts(found)
    assert len(found.hits) > 1

    # Keyword-only recall (embedder down) has no similarity to judge by: not gated.
    use_broken_embedder(settings)
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_MIN_SIMILARITY": 0.3}
    fallback = memory.fact_recall(namespace=NS, query=unrelated, k=5)
    assert fallback.mode == "keyword" and fallback.hits


def test_relevant_needs_one_candidate_at_the_floor() -> None:
    assert fusion.relevant({1: 0.2, 2: 0.41}, floor=0.4)
    assert not fusion.relevant({1: 0.2, 2: 0.39}, floor=0.4)
    assert fusion.relevant({1: 0.1}, floor=None)
    assert fusion.relevant({}, floor=0.9)  # nothing to judge by
