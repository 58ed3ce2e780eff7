"""Tests of ttmemory.conversation.packing: budget packing (issue 14 rules), with hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conversation.builders import assistant_calls, result, user
from ttmemory.conversation import (
    INTERRUPTED,
    SYSTEM_ROLES,
    PackItem,
    assign_groups,
    count_message_tokens,
    pack,
    pack_detailed,
    tool_call_ids,
)
from ttmemory.exceptions import MemoryValidationError


def items_of(messages: list[dict], tokens: list[int], first_seq: int = 1) -> list[PackItem]:
    groups = assign_groups(messages, first_seq=first_seq)
    return [
        PackItem(
            seq=first_seq + i,
            role=m["role"],
            tokens=t,
            group=g,
            call_ids=tuple(tool_call_ids(m)),
            tool_call_id=m.get("tool_call_id", ""),
        )
        for i, (m, t, g) in enumerate(zip(messages, tokens, groups, strict=True))
    ]


def interrupted(call_id: str) -> int:
    return count_message_tokens({"role": "tool", "tool_call_id": call_id, "content": INTERRUPTED})


WEATHER = [
    user("old question"),  # 1
    {"role": "assistant", "content": "old answer"},  # 2
    {"role": "system", "content": "Be brief."},  # 3
    user("Weather?"),  # 4
    assistant_calls("a", "b"),  # 5
    result("a"),  # 6
    result("b"),  # 7
    {"role": "assistant", "content": "Sunny."},  # 8
]


def test_pack_keeps_system_first_and_whole_turns_newest_first():
    items = items_of(WEATHER, [10, 10, 5, 10, 10, 10, 10, 10])
    assert pack(items, max_tokens=1000) == [3, 1, 2, 4, 5, 6, 7, 8]
    # 5 (system) + 50 (the turn 4-8) fits; the older turn (20) does not.
    assert pack(items, max_tokens=55) == [3, 4, 5, 6, 7, 8]
    assert pack(items, max_tokens=74) == [3, 4, 5, 6, 7, 8]
    assert pack(list(reversed(items)), max_tokens=55) == [3, 4, 5, 6, 7, 8]
    assert pack([], max_tokens=10) == []


def test_a_turn_too_big_keeps_its_question_and_newest_groups_never_an_orphan_answer():
    items = items_of(WEATHER, [10, 10, 5, 10, 10, 10, 10, 10])
    # The turn 4-8 (50) does not fit in 54 - 5: its question and newest group do (20), the
    # tool group (30) would not; the window starts with the question, not with "Sunny.".
    packing = pack_detailed(items, max_tokens=54)
    assert packing.seqs == [3, 4, 8]
    assert (packing.tokens, packing.required, packing.overflow) == (25, 25, 0)
    assert packing.question == 4
    assert pack(items, max_tokens=25) == [3, 4, 8]
    # Below what must be kept: the same seqs, with the overflow reported.
    for budget in (24, 5, 0):
        packing = pack_detailed(items, max_tokens=budget)
        assert packing.seqs == [3, 4, 8]
        assert packing.overflow == 25 - budget
        assert packing.required == 25


def test_the_reported_finding_system_question_answer_never_exceeds_the_budget():
    messages = [
        {"role": "system", "content": "s"},
        user("q"),
        {"role": "assistant", "content": "a"},
    ]
    items = items_of(messages, [50, 60, 60])
    for budget in (5, 50, 150):
        packing = pack_detailed(items, max_tokens=budget)
        assert packing.overflow == 170 - budget  # callers raise or report; never silent
    assert pack_detailed(items, max_tokens=170).overflow == 0
    assert pack(items, max_tokens=170) == [1, 2, 3]


def test_pack_never_splits_the_newest_group():
    items = items_of([assistant_calls("a"), result("a")], [500, 500])
    packing = pack_detailed(items, max_tokens=100)
    assert packing.seqs == [1, 2]
    assert (packing.required, packing.overflow) == (1000, 900)


def test_an_unanswered_call_costs_the_interrupted_result_repair_adds():
    items = items_of([user("q"), assistant_calls("a", "b"), result("a")], [10, 10, 10])
    expected = 30 + interrupted("b")
    assert pack_detailed(items, max_tokens=1000).tokens == expected
    assert pack_detailed(items, max_tokens=expected).seqs == [1, 2, 3]
    assert pack_detailed(items, max_tokens=expected - 1).overflow == 1


def test_a_late_result_brings_its_call_into_the_window():
    messages = [
        user("look it up"),  # 1
        assistant_calls("a"),  # 2
        user("meanwhile, hello"),  # 3
        {"role": "assistant", "content": "hello"},  # 4
        result("a"),  # 5: late, in the group of 2
    ]
    items = items_of(messages, [10, 10, 10, 10, 10])
    # The newest turn (question 3) holds the group 2+5: the model sees the result it waits for.
    assert pack(items, max_tokens=40) == [2, 3, 4, 5]
    assert pack(items, max_tokens=39) == [2, 3, 5]  # question and newest group: 30
    assert pack(items, max_tokens=50) == [1, 2, 3, 4, 5]


def test_pack_rejects_negative_budget_and_tokens():
    with pytest.raises(MemoryValidationError) as info:
        pack([], max_tokens=-1)
    assert info.value.field == "max_tokens"
    with pytest.raises(MemoryValidationError) as info:
        pack([PackItem(seq=1, role="user", tokens=-5, group=1)], max_tokens=10)
    assert info.value.field == "items[0].tokens"


def test_pack_handles_ten_thousand_items():
    items = [PackItem(seq=i, role="user", tokens=10, group=i) for i in range(10_000)]
    assert pack(items[::-1], max_tokens=1000) == list(range(9_900, 10_000))


token_sizes = st.one_of(st.integers(0, 60), st.integers(0, 5_000), st.just(0))


@st.composite
def conversations(draw: st.DrawFn) -> list[PackItem]:
    """Random conversations turned into pack items, in a random order."""
    messages: list[dict] = []
    late: list[dict] = []
    calls = 0
    for kind in draw(st.lists(st.sampled_from(["system", "user", "assistant", "tools"]))):
        if kind == "tools":
            ids = [f"call_{calls + j}" for j in range(draw(st.integers(1, 4)))]
            calls += len(ids)
            messages.append(assistant_calls(*ids))
            answered = draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids)))
            for call_id in answered:
                # Some results arrive after a later turn, or answer nothing (orphans).
                (late if draw(st.integers(0, 5)) == 0 else messages).append(result(call_id))
            if draw(st.integers(0, 7)) == 0:
                messages.append(result("orphan"))
            continue
        role = draw(st.sampled_from(["system", "developer"])) if kind == "system" else kind
        messages.append({"role": role, "content": "..."})
        messages.extend(late)
        late.clear()
    messages.extend(late)
    tokens = [draw(token_sizes) for _ in messages]
    items = items_of(messages, tokens, first_seq=draw(st.integers(0, 1000)))
    return draw(st.permutations(items))


def group_cost(group: list[PackItem]) -> int:
    """What a group costs once repaired: its tokens plus an interrupted result per open call."""
    head = [i for i in group if i.seq == i.group and i.call_ids]
    answered = {i.tool_call_id for i in group if i.role == "tool"}
    missing = [c for c in head[0].call_ids if c not in answered] if head else []
    return sum(i.tokens for i in group) + sum(interrupted(c) for c in missing)


@settings(max_examples=300, deadline=None)
@given(items=conversations(), max_tokens=st.integers(0, 20_000))
def test_pack_invariants(items, max_tokens):
    packing = pack_detailed(items, max_tokens=max_tokens)
    selected = packing.seqs
    by_seq = {item.seq: item for item in items}
    system = sorted(i.seq for i in items if i.role in SYSTEM_ROLES)
    system_tokens = sum(by_seq[s].tokens for s in system)
    groups: dict[int, list[PackItem]] = {}
    for item in items:
        if item.role not in SYSTEM_ROLES:
            groups.setdefault(item.group, []).append(item)
    ordered = sorted(groups.values(), key=lambda g: max(i.seq for i in g), reverse=True)
    chosen = set(selected)

    # All system messages, first and in seq order; the rest in increasing seq order.
    assert selected[: len(system)] == system
    rest = selected[len(system) :]
    assert rest == sorted(rest)
    assert len(set(selected)) == len(selected)
    # A group is never split.
    for group in ordered:
        assert len({i.seq in chosen for i in group}) == 1
    if not ordered:
        assert selected == system
        assert packing.tokens == system_tokens
        return
    # The newest group is always selected.
    assert all(i.seq in chosen for i in ordered[0])
    # The cost is what repair will send, and the budget holds unless what must be kept alone
    # exceeds it; then exactly that is returned.
    taken = [g for g in ordered if g[0].seq in chosen]
    assert packing.tokens == system_tokens + sum(group_cost(g) for g in taken)
    assert packing.required <= packing.tokens
    if packing.tokens > max_tokens:
        assert packing.tokens == packing.required
        assert packing.overflow == packing.tokens - max_tokens
    else:
        assert packing.overflow == 0
    # No orphan answer first: the oldest message sent (tool results follow their call) is a
    # user message, or no user message is older than it, or a call whose result came late.
    first = min((s for s in rest if by_seq[s].role != "tool"), default=None)
    if first is not None and by_seq[first].role != "user":
        late = max(i.seq for i in groups[first]) > min(
            (s for s in rest if by_seq[s].role == "user"), default=first
        )
        assert late or not any(i.role == "user" and i.seq < first for i in items)
    # A window is whole turns newest first, or the newest turn's question and newest groups.
    questions = [k for k, g in enumerate(ordered) if any(i.role == "user" for i in g)]
    flags = [g[0].seq in chosen for g in ordered]
    if packing.question is None:
        count = flags.count(True)
        assert flags == [True] * count + [False] * (len(ordered) - count)
        # Ends at a question, or at the end, or inside a newest turn that has none.
        assert (
            count == len(ordered)
            or count - 1 in questions
            or min(questions, default=count) >= count
        )
    else:
        q = questions[0]
        assert ordered[q][0].seq == packing.question and flags[q]
        middle = flags[1:q]
        count = middle.count(True)
        assert middle == [True] * count + [False] * (len(middle) - count)
        assert not any(flags[q + 1 :])
