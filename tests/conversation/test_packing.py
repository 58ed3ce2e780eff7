"""Tests of ttmemory.conversation.packing: budget packing (DESIGN rule 4), with hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conversation.builders import assistant_calls, result, user
from ttmemory.conversation import (
    SYSTEM_ROLES,
    PackItem,
    assign_groups,
    pack,
)
from ttmemory.exceptions import MemoryValidationError


def items_of(messages: list[dict], tokens: list[int], first_seq: int = 1) -> list[PackItem]:
    groups = assign_groups(messages, first_seq=first_seq)
    return [
        PackItem(seq=first_seq + i, role=m["role"], tokens=t, group=g)
        for i, (m, t, g) in enumerate(zip(messages, tokens, groups, strict=True))
    ]


def test_pack_keeps_system_first_and_newest_groups():
    messages = [
        user("old question"),  # 1
        {"role": "assistant", "content": "old answer"},  # 2
        {"role": "system", "content": "Be brief."},  # 3
        user("Weather?"),  # 4
        assistant_calls("a", "b"),  # 5
        result("a"),  # 6
        result("b"),  # 7
        {"role": "assistant", "content": "Sunny."},  # 8
    ]
    items = items_of(messages, [10, 10, 5, 10, 10, 10, 10, 10])
    assert pack(items, max_tokens=1000) == [3, 1, 2, 4, 5, 6, 7, 8]
    # 5 (system) + 10 (8) + 30 (group 5-7) = 45 fits; 55 would need message 4 too.
    assert pack(items, max_tokens=54) == [3, 5, 6, 7, 8]
    # The tool group does not fit, so packing stops even though older messages would fit.
    assert pack(items, max_tokens=40) == [3, 8]
    # Nothing fits: the newest group is kept anyway, with the system message.
    assert pack(items, max_tokens=0) == [3, 8]
    assert pack(list(reversed(items)), max_tokens=54) == [3, 5, 6, 7, 8]
    assert pack([], max_tokens=10) == []


def test_pack_never_splits_the_newest_group():
    items = items_of([assistant_calls("a"), result("a")], [500, 500])
    assert pack(items, max_tokens=100) == [1, 2]


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


@settings(max_examples=300, deadline=None)
@given(items=conversations(), max_tokens=st.integers(0, 20_000))
def test_pack_invariants(items, max_tokens):
    selected = pack(items, max_tokens=max_tokens)
    by_seq = {item.seq: item for item in items}
    system = sorted(i.seq for i in items if i.role in SYSTEM_ROLES)
    system_tokens = sum(by_seq[s].tokens for s in system)
    groups: dict[int, list[PackItem]] = {}
    for item in items:
        if item.role not in SYSTEM_ROLES:
            groups.setdefault(item.group, []).append(item)
    ordered = sorted(groups.values(), key=lambda g: max(i.seq for i in g), reverse=True)
    chosen = set(selected)

    # (b) all system messages, first and in seq order; the rest in increasing seq order.
    assert selected[: len(system)] == system
    rest = selected[len(system) :]
    assert rest == sorted(rest)
    assert len(set(selected)) == len(selected)
    # (a) a group is never split.
    for group in ordered:
        assert len({i.seq in chosen for i in group}) == 1
    if not ordered:
        assert selected == system
        return
    # (c) the newest group is always selected.
    assert all(i.seq in chosen for i in ordered[0])
    # (e) the selected groups are a contiguous run of the newest groups.
    flags = [group[0].seq in chosen for group in ordered]
    taken = flags.count(True)
    assert flags == [True] * taken + [False] * (len(ordered) - taken)
    # (d) within budget, unless the selection is the system messages and the newest group.
    total = sum(by_seq[s].tokens for s in selected)
    assert total <= max_tokens or taken == 1
    assert total == system_tokens + sum(i.tokens for g in ordered[:taken] for i in g)
    # (f) maximality: the next older group would not have fit.
    if taken < len(ordered):
        assert total + sum(i.tokens for i in ordered[taken]) > max_tokens
