"""``episodes.window_scores`` in numpy gives every score the one-by-one arithmetic gave, to the
bit: the reference below is its earlier implementation, kept as the definition."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence, Set
from typing import Any

import pytest

from ttmemory.longterm import bm25, episodes

pytestmark = pytest.mark.contract


def reference(
    rows: Sequence[tuple[int, int, Any, int]],
    *,
    df: Mapping[Any, int],
    total: int,
    avg_len: float,
    lengths: Mapping[tuple[int, int], int],
    questions: Set[tuple[int, int]],
    echoes: Set[tuple[int, int]],
    window: int,
    limit: int,
    neighbour_weight: float = episodes.NEIGHBOUR_WEIGHT,
) -> dict[tuple[int, int], float]:
    idf = {t: bm25.idf(total, n) for t, n in df.items()}
    tf: dict[tuple[int, int], dict[Any, float]] = defaultdict(lambda: defaultdict(float))
    for session_id, seq, term, count in sorted(rows, key=lambda row: row[2]):
        tf[(session_id, seq)][term] += count
        if (session_id, seq) in echoes:
            continue
        for d in range(1, window + 1):
            for near in (seq - d, seq + d):
                if near > 0:
                    tf[(session_id, near)][term] += neighbour_weight * count
    neighbour_len = neighbour_weight * 2 * window * avg_len
    window_avg = avg_len + neighbour_len

    def score(counts: Mapping[Any, float], length: float) -> float:
        return sum(
            bm25.term_score(f, length, weight=idf[t], avgdl=window_avg) for t, f in counts.items()
        )

    rough = sorted(((score(c, window_avg), key) for key, c in tf.items()), reverse=True)
    candidates = [key for _, key in rough[: limit * 3]]
    scores = {
        key: score(tf[key], lengths[key] + neighbour_len) for key in candidates if key in lengths
    }
    for key in questions & set(scores):
        scores[key] *= episodes.QUESTION_WEIGHT
    return dict(sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit])


@pytest.mark.parametrize("seed", range(40))
def test_every_score_is_the_one_by_one_sums(seed: int) -> None:
    rng = random.Random(seed)
    sessions = rng.randint(1, 6)
    messages = [(s, q) for s in range(1, sessions + 1) for q in range(1, rng.randint(2, 60))]
    terms = [rng.randint(-(2**63), 2**63 - 1) for _ in range(rng.randint(1, 6))]
    rows = []
    for term in terms:  # postings in no particular order, some messages holding many terms
        for key in rng.sample(messages, rng.randint(1, len(messages))):
            rows.append((key[0], key[1], term, rng.randint(1, 4)))
    rng.shuffle(rows)
    df = {term: sum(1 for row in rows if row[2] == term) for term in terms}
    lengths = {key: rng.randint(1, 40) for key in messages if rng.random() < 0.9}
    asks = {key for key in messages if rng.random() < 0.2}
    echoes = {key for key in asks if rng.random() < 0.5}
    arguments: dict[str, Any] = {
        "df": df,
        "total": len(messages) + rng.randint(0, 50),
        "avg_len": rng.uniform(3, 20),
        "lengths": lengths,
        "questions": asks,
        "echoes": echoes,
        "window": rng.randint(0, 3),
        "limit": rng.choice([1, 5, 10, 50]),
        "neighbour_weight": rng.choice([0.5, 0.3, 1.0]),
    }
    expected = reference(rows, **arguments)
    got = episodes.window_scores(rows, **arguments)
    assert list(got.items()) == list(expected.items())  # same keys, order and floats
    # Lengths read afterwards (lengths_of) give the same answer as lengths given up front.
    later = episodes.window_scores(
        rows, **{**arguments, "lengths": {}}, lengths_of=lambda keys: lengths
    )
    assert list(later.items()) == list(expected.items())


def test_no_postings_score_nothing() -> None:
    assert (
        episodes.window_scores(
            [],
            df={},
            total=0,
            avg_len=1.0,
            lengths={},
            questions=set(),
            echoes=set(),
            window=2,
            limit=10,
        )
        == {}
    )
