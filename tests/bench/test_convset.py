"""The conversational evaluation set: deterministic, split in halves, evidence that exists."""

from __future__ import annotations

from bench import convset
from bench.conversations import fuse, metrics


def test_the_set_is_seeded_split_and_annotated_at_turn_level() -> None:
    one, two = convset.build(users=4, sessions=12), convset.build(users=4, sessions=12)
    assert one.describe() == two.describe()
    assert [t.text for t in one.conversations[0].turns] == [
        t.text for t in two.conversations[0].turns
    ]
    assert {c.split for c in one.conversations} == {"tune", "held-out"}
    questions = [q for c in one.conversations for q in c.questions]
    assert {q.category for q in questions} == set(convset.CATEGORIES)
    assert any(not q.evidence for q in questions)  # unanswerable ones
    for conv in one.conversations:
        ids = {t.id for t in conv.turns}
        assert all(set(q.evidence) <= ids for q in conv.questions)


def test_metrics_and_fusion() -> None:
    m = metrics(["a", "b", "c"], {"b", "z"})
    assert m["r5"] == 0.5 and m["mrr"] == 0.5 and 0 < m["ndcg10"] < 1
    fused = fuse("minmax", {"a": 2.0, "b": 1.0}, {"b": 0.9, "c": 0.1}, 0.5, ideal=4.0)
    assert max(fused, key=fused.__getitem__) == "b"


def test_fusion_with_neighbour_context_lifts_the_turn_after_a_hit() -> None:
    order = ["t0", "t1", "t2", "t3", "t4", "t5"]
    keyword = {"t1": 3.0, "t2": 2.0}  # the question and the follow-up; t3 answers, unmatched
    plain = fuse("minmax", keyword, {}, 0.0, ideal=5.0)
    context = fuse("minmax", keyword, {}, 0.0, ideal=5.0, order=order, neighbour_weight=0.5)
    assert "t3" not in plain
    assert context["t3"] > 0 and context["t3"] > context.get("t5", 0.0)
    assert context["t1"] > plain["t1"]
