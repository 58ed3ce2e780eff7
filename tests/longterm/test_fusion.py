"""Recall's neighbour context and relative cut (ttmemory.longterm.fusion), on both databases."""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Sequence
from typing import Any

import pytest

from tests.longterm.test_facts import use_broken_embedder
from ttmemory import memory
from ttmemory.backends.embedders.base import Embedder
from ttmemory.longterm import blind, bm25, fusion, recall
from ttmemory.models import Fact, FactTerm

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


@pytest.mark.parametrize(
    "name", ["RECALL_MIN_RELATIVE", "RECALL_MIN_SIMILARITY", "RECALL_FEEDBACK_WEIGHT"]
)
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


class ConceptEmbedder(Embedder):
    """A sentence embedder in miniature: words count towards the concept they mean, so "do for
    a living" is near "a new job as a nurse" though they share no word (as all-MiniLM-L6-v2
    places them). It keeps the base class's weights, those of sentence embedders."""

    model = "concepts-4"
    dimensions = 4
    CONCEPTS = (
        {"job", "jobs", "work", "works", "living", "nurse", "architect", "hospital", "studio"},
        {"pottery", "class", "bowl", "clay"},
        {"soup", "lunch", "dinner", "train", "platform"},
    )

    #: What each word of no concept adds to the last dimension.
    OTHER = 0.2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            words = re.findall(r"[a-z]+", text.lower())
            vector = [float(sum(w in concept for w in words)) for concept in self.CONCEPTS]
            vector.append(self.OTHER * sum(not any(w in c for c in self.CONCEPTS) for w in words))
            norm = math.sqrt(sum(v * v for v in vector)) or 1.0
            vectors.append([v / norm for v in vector])
        return vectors


TWO_TURNS = [
    "Yesterday I went to a pottery class with my sister Lena, first time ever.",
    "Oh fun! Did you make anything?",
    "I made a blue bowl, a bit wonky but I love it.",
    "That sounds wonderful, thanks for telling me!",
    "I had leftover soup for lunch today, nothing special.",
    "My colleague Tom works as an architect at a design studio.",
    "Nice, does he like it there?",
    "The train was late again, forty minutes on the platform.",
    "My sister Lena just started a new job as a nurse at a hospital in Leeds.",
    "Good for her! Are the hours long?",
]
TWO_TURN_QUESTION = "What does the person Ada went to the pottery class with do for a living?"


#: More chit-chat after the two turns: more facts than the hits asked for.
MORE_TURNS = [
    "We should try that new ramen place for dinner on Friday.",
    "My neighbour's cat keeps sleeping on our car in the mornings.",
    "I might sign up for a clay sculpture workshop next month.",
    "The living room still needs a coat of paint.",
    "Work was busy today, lots of meetings.",
    "Did you see the match last night? What a finish.",
]


def test_the_second_turn_of_a_two_turn_answer_is_recalled(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EMBEDDER": {"BACKEND": "tests.longterm.test_fusion.ConceptEmbedder"},
        # Meaning weighed heavily, as the feedback weight was chosen with (the default is 0.1).
        "RECALL_VECTOR_WEIGHT": 0.8,
    }
    for text in [*TWO_TURNS, *MORE_TURNS]:
        memory.fact_remember(namespace=NS, text=text, kind="turn")
    # On by default for sentence embedders (docs/benchmarks.md, fusion study).
    assert fusion.feedback_weight() == 0.75

    found = memory.fact_recall(namespace=NS, query=TWO_TURN_QUESTION, k=8)
    five = memory.fact_recall(namespace=NS, query=TWO_TURN_QUESTION, k=5)
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_FEEDBACK_WEIGHT": 0.0}
    without = memory.fact_recall(namespace=NS, query=TWO_TURN_QUESTION, k=8)

    # The class turn names the sister; the turn about her job shares no word with the question
    # and is found through her name (the other job turn, Tom's, stays out).
    assert found.mode == "hybrid"
    assert texts(found)[0] == TWO_TURNS[0]
    assert TWO_TURNS[8] in texts(found)
    assert TWO_TURNS[8] not in texts(without)
    assert TWO_TURNS[5] not in texts(found)
    # It fills the ranks after the best five, which keep their places and scores: a recall of
    # five hits (fact_recall's default, prompt_build's memories) is the same as without it.
    assert found.hits[:5] == without.hits[:5] == five.hits
    assert found.hits == sorted(found.hits, key=lambda hit: -hit[1])


def test_feedback_is_off_by_default_for_the_keyword_like_embedders(db: Any, settings: Any) -> None:
    """HashEmbedder (the default) and WordLlama gained nothing from it on tune: their recalls
    of more than five facts run no feedback statement and rank as before."""
    from ttmemory.backends.embedders import WordLlamaEmbedder

    assert WordLlamaEmbedder.recall_feedback_weight == 0.0
    assert fusion.feedback_weight() == 0.0  # the test settings' HashEmbedder
    for text in [*TWO_TURNS, *MORE_TURNS]:
        memory.fact_remember(namespace=NS, text=text, kind="turn")
    default = memory.fact_recall(namespace=NS, query=TWO_TURN_QUESTION, k=8)
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_FEEDBACK_WEIGHT": 0.75}
    asked = memory.fact_recall(namespace=NS, query=TWO_TURN_QUESTION, k=8)
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_FEEDBACK_WEIGHT": 0.0}
    off = memory.fact_recall(namespace=NS, query=TWO_TURN_QUESTION, k=8)

    assert default.hits == off.hits
    assert default.hits[:5] == asked.hits[:5]


def test_protect_keeps_the_top_in_place_and_the_rest_in_order() -> None:
    before = {1: 1.0, 2: 0.9, 3: 0.5, 4: 0.4, 5: 0.1}
    after = {1: 1.0, 2: 0.9, 3: 0.5, 4: 2.0, 5: 0.95}  # 4 and 5 rose past the top two

    out = fusion.protect(after, before, top=2)

    # 1 and 2 keep their places; 4 and 5 come next, in their order, between 2 and 3.
    assert [k for k, _ in fusion.cut(out, floor=0.0, relative=0.0)] == [1, 2, 4, 5, 3]
    assert (out[1], out[2], out[3]) == (1.0, 0.9, 0.5)
    assert 0.9 > out[4] > out[5] > 0.5
    assert fusion.protect(after, before, top=0) == after


def test_feedback_needs_a_blended_score_and_a_related_match() -> None:
    blended = {1: 1.0, 2: 0.5, 3: 0.0}
    scores = {1: 1.2, 2: 0.6, 3: 0.1, 4: 0.3}  # 4: a neighbour, not a candidate
    related = {2: 2.0, 3: 4.0, 4: 4.0, 5: 1.0}

    out = fusion.feedback(scores, blended, related, weight=0.5)

    # 2 gains 0.5 x 0.5 x (2 / 4); 3 matches best but blended to 0; 4 and 5 are no candidates.
    assert out == {1: 1.2, 2: 0.725, 3: 0.1, 4: 0.3}
    assert fusion.feedback(scores, blended, related, weight=0.0) == scores
    assert fusion.feedback(scores, blended, {}, weight=0.5) == scores
    assert fusion.feedback_seeds(blended) == [1, 2]


@pytest.mark.parametrize("cached", [False, True])
def test_fact_related_scores_like_keyword_recall(
    db: Any, settings: Any, monkeypatch: Any, cached: bool
) -> None:
    use_broken_embedder(settings)
    # This test's statistics stay in this test.
    monkeypatch.setattr(recall, "_stats", bm25.KeptStats())
    for text in TWO_TURNS:
        memory.fact_remember(namespace=NS, text=text, kind="turn")
    memory.fact_remember(namespace="user-fusion-other", text=TWO_TURNS[8], kind="turn")
    ids = list(Fact.objects.filter(namespace=NS).order_by("pk").values_list("pk", flat=True))
    seeds, query = ids[:2], blind.query_hashes(TWO_TURN_QUESTION, namespace=NS)
    if cached:  # statistics recall's own statement counted a moment ago
        recall.remember_stats(NS, 5000, 9.0)
        stats = (5000, 9.0)
    else:
        stats = recall.namespace_stats(NS)
        monkeypatch.setattr(recall, "_stats", bm25.KeptStats())  # none counted lately: counted here
    words = FactTerm.objects.filter(fact_id__in=seeds).values_list("term", flat=True)
    asked = {term: term for term in words if term not in query}

    found = fusion.fact_related(NS, seeds, exclude=query, among=ids[1:])
    expected = recall.keyword_scores(NS, "", 100, stats=stats, terms=asked)

    assert set(found) == set(expected) - set(seeds) and ids[8] in found  # "sister", "Lena"
    assert all(found[key] == pytest.approx(expected[key]) for key in found)
    assert fusion.fact_related(NS, seeds, exclude=query, among=[]) == {}


UNRELATED = [
    "Has a cat called Miso who sleeps on the radiator.",
    "Plays the cello in a community orchestra on Thursdays.",
    "Prefers window seats on long flights.",
    "Grew up in a small town near Porto.",
    "Is learning to bake sourdough bread.",
    "Drives an old green Volvo estate.",
    "Supports the local football club.",
    "Reads science fiction before bed.",
]


@pytest.mark.parametrize("broken", [False, True], ids=["hybrid", "keyword"])
def test_one_relevant_fact_is_not_padded_with_its_neighbours(
    db: Any, settings: Any, broken: bool
) -> None:
    if broken:
        use_broken_embedder(settings)
    for text in UNRELATED[:4]:
        memory.fact_remember(namespace=NS, text=text)
    memory.fact_remember(namespace=NS, text="Is allergic to peanuts.")
    for text in UNRELATED[4:]:
        memory.fact_remember(namespace=NS, text=text)

    found = memory.fact_recall(namespace=NS, query="What is the user allergic to?", k=5)

    # Before: the facts remembered just before and after it came back at half its score.
    assert texts(found) == ["Is allergic to peanuts."]
    assert found.unpadded >= 1
    assert found.evidence_similarity is not None


def test_unpadded_keeps_a_fact_inside_a_passage_about_the_query() -> None:
    ranked = [(2, 1.0), (3, 0.8), (4, 0.6), (9, 0.5), (1, 0.4)]
    keyword = {2: 3.0, 3: 1.0}
    runs = {2: [0, 1, 2, 3, 4, 5, 6], 9: [7, 8, 9, 10, 11]}

    kept = fusion.unpadded(ranked, keyword, {}, runs, window=2, similarity=0.5)

    # 4 has two matches within two places (2 and 3), 1 has them too; 9 has none.
    assert [key for key, _ in kept] == [2, 3, 4, 1]
    assert fusion.unpadded(ranked, keyword, {9: 0.6}, runs, window=2, similarity=0.5)[3] == (9, 0.5)
