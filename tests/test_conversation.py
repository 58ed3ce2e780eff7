"""Tests of ttmemory.conversation: pure rules on message lists, no Django needed."""

from __future__ import annotations

import copy
import json
import logging
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conversation.builders import assistant_calls, call, result, user
from ttmemory import conversation
from ttmemory.conversation import (
    HEURISTIC,
    ROLES,
    SYSTEM_ROLES,
    PackItem,
    assign_groups,
    count_message_tokens,
    count_messages_tokens,
    count_text_tokens,
    pack,
    repair,
    tool_call_ids,
    validate_message,
)
from ttmemory.exceptions import MemoryValidationError

# --------------------------------------------------------------------------- validation


def test_roles():
    assert {"system", "developer", "user", "assistant", "tool", "function"} == ROLES
    assert {"system", "developer"} == SYSTEM_ROLES


def test_validate_returns_clean_copy_and_compact_encoding():
    message = {
        "role": "assistant",
        "content": "Très bien 日本",
        "tool_calls": (call("c1"),),
        "x-trace": {"span": [1, 2.5, None, True]},
    }
    clean, encoded = validate_message(message, max_bytes=10_000)
    assert clean["x-trace"] == {"span": [1, 2.5, None, True]}  # unknown keys kept
    assert clean["tool_calls"] == [call("c1")]  # tuple became a list
    assert encoded == json.dumps(clean, ensure_ascii=False, separators=(",", ":")).encode()
    assert "日本".encode() in encoded
    clean["x-trace"]["span"].append(3)
    assert message["x-trace"]["span"] == [1, 2.5, None, True]  # a deep copy


def test_validate_accepts_parts_null_content_and_exact_size():
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
        ],
        "name": "alice",
    }
    clean, encoded = validate_message(message, max_bytes=10_000)
    assert validate_message(message, max_bytes=len(encoded))[0] == clean
    assert validate_message({"role": "assistant", "content": None}, max_bytes=100)[0] == {
        "role": "assistant",
        "content": None,
    }
    # SDKs dump ``tool_calls: None`` on plain assistant messages.
    validate_message({"role": "assistant", "content": "hi", "tool_calls": None}, max_bytes=100)


class Weird:
    pass


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ("hello", "message"),
        (["role", "user"], "message"),
        ({"content": "hi"}, "message.role"),
        ({"role": "robot", "content": "hi"}, "message.role"),
        ({"role": None, "content": "hi"}, "message.role"),
        ({"role": "tool", "content": "18C"}, "message.tool_call_id"),
        ({"role": "tool", "tool_call_id": "", "content": "18C"}, "message.tool_call_id"),
        ({"role": "tool", "tool_call_id": 7, "content": "18C"}, "message.tool_call_id"),
        ({"role": "assistant", "tool_calls": call("c1")}, "message.tool_calls"),
        ({"role": "assistant", "tool_calls": ["c1"]}, "message.tool_calls[0]"),
        ({"role": "assistant", "tool_calls": [{"type": "function"}]}, "message.tool_calls[0].id"),
        ({"role": "assistant", "tool_calls": [call("a"), {"id": ""}]}, "message.tool_calls[1].id"),
        ({"role": "assistant", "tool_calls": [{"id": 3}]}, "message.tool_calls[0].id"),
        ({"role": "assistant", "tool_calls": [call("a"), call("a")]}, "message.tool_calls[1].id"),
        ({"role": "user", "content": float("nan")}, "message.content"),
        ({"role": "user", "content": float("inf")}, "message.content"),
        ({"role": "user", "content": {"a", "b"}}, "message.content"),
        ({"role": "user", "content": b"bytes"}, "message.content"),
        ({"role": "user", "content": Weird()}, "message.content"),
        ({"role": "user", "content": 42}, "message.content"),
        ({"role": "user", "content": ["just text"]}, "message.content[0]"),
        ({"role": "user", "content": [{"type": "x", "v": float("-inf")}]}, "message.content[0].v"),
        ({"role": "user", "content": "hi", "meta": {"when": Weird()}}, "message.meta.when"),
        ({"role": "user", "content": "hi", 1: "one"}, "message"),
        ({"role": "user", "content": "hi", "meta": {2: "two"}}, "message.meta"),
        ({"role": "user", "content": "hi", "name": 5}, "message.name"),
    ],
)
def test_validate_rejects_and_names_the_field(message, field):
    with pytest.raises(MemoryValidationError) as info:
        validate_message(message, max_bytes=10_000)
    assert info.value.field == field


def test_validate_prefixes_the_given_field():
    with pytest.raises(MemoryValidationError) as info:
        validate_message({"role": "tool"}, max_bytes=100, field="messages[3]")
    assert info.value.field == "messages[3].tool_call_id"


def test_validate_rejects_oversized_message_with_sizes():
    message = {"role": "user", "content": "x" * 100}
    size = len(validate_message(message, max_bytes=1000)[1])
    with pytest.raises(MemoryValidationError) as info:
        validate_message(message, max_bytes=size - 1)
    assert info.value.field == "message"
    assert str(size) in info.value.message
    assert str(size - 1) in info.value.message


# --------------------------------------------------------------------------- tokens


@pytest.mark.parametrize(
    ("text", "o200k", "cl100k"),
    [
        ("Hello world", 2, 2),
        ("The quick brown fox jumps over the lazy dog.", 10, 10),
        ("日本語のテキスト", 6, 8),
        ("", 0, 0),
    ],
)
def test_count_text_tokens_is_exact_bpe(text, o200k, cl100k):
    assert count_text_tokens(text) == o200k
    assert count_text_tokens(text, encoding="o200k_base") == o200k
    assert count_text_tokens(text, encoding="cl100k_base") == cl100k


def test_special_token_text_is_counted_as_plain_text():
    assert count_text_tokens("<|endoftext|>") == 7


def test_cookbook_example_matches_openai_api_counts():
    # The OpenAI cookbook's example, whose counts it checks against the API:
    # 129 prompt tokens for gpt-4 / gpt-3.5-turbo (cl100k_base), 124 for gpt-4o (o200k_base).
    messages = [
        {
            "role": "system",
            "content": "You are a helpful, pattern-following assistant that translates "
            "corporate jargon into plain English.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "New synergies will help drive top-line growth.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Things working well together will increase revenue.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "Let's circle back when we have more bandwidth to touch base on "
            "opportunities for increased leverage.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Let's talk later when we're less busy about how to do better.",
        },
        {
            "role": "user",
            "content": "This late pivot means we don't have time to boil the ocean for the "
            "client deliverable.",
        },
    ]
    assert count_messages_tokens(messages, encoding="cl100k_base") == 129
    assert count_messages_tokens(messages, encoding="o200k_base") == 124


def test_count_message_tokens_parts():
    # 3 overhead + "user" (1) + "Hello world" (2)
    assert count_message_tokens(user("Hello world")) == 6
    assert count_messages_tokens([user("Hello world")]) == 9
    named = {"role": "user", "content": "Hello world", "name": "alice"}
    assert count_message_tokens(named) == 6 + count_text_tokens("alice") + 1
    image = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Hello world"},
            {"type": "image_url", "image_url": {"url": "https://x.test/cat.png"}},
        ],
    }
    assert count_message_tokens(image) == 6 + 85
    calls = assistant_calls("call_1", "call_2")
    per_call = 3 + count_text_tokens("get_weather") + count_text_tokens('{"city": "Paris"}')
    assert count_message_tokens(calls) == 3 + count_text_tokens("assistant") + 2 * per_call
    tool = result("call_1", "Hello world")
    expected = 3 + count_text_tokens("tool") + 2 + count_text_tokens("call_1")
    assert count_message_tokens(tool) == expected


def test_heuristic_estimates_close_to_bpe():
    prose = (
        "Memory for agents keeps the newest messages, packs tool calls with their results, "
        "and never splits a group. It is measured in tokens, not characters. " * 5
    )
    real = count_text_tokens(prose)
    estimate = count_text_tokens(prose, encoding=HEURISTIC)
    assert abs(estimate - real) <= real * 0.25
    assert count_text_tokens("", encoding=HEURISTIC) == 0
    # Non-ASCII text is not under-counted the way bytes/4 would for CJK.
    cjk = "快速的棕色狐狸跳过了懒狗。那天阳光明媚每个人都很高兴。"
    assert count_text_tokens(cjk, encoding=HEURISTIC) >= count_text_tokens(cjk) * 0.9
    assert count_message_tokens(user("Hello world"), encoding=HEURISTIC) > 3


@pytest.fixture
def fresh_encoders() -> Iterator[None]:
    conversation._token_counter.cache_clear()
    yield
    conversation._token_counter.cache_clear()


def test_unknown_encoding_falls_back_to_heuristic(fresh_encoders, caplog):
    text = "Unknown encodings are estimated, and the estimate is logged once."
    with caplog.at_level(logging.WARNING, logger="ttmemory.conversation"):
        assert count_text_tokens(text, encoding="no_such_base") == count_text_tokens(
            text, encoding=HEURISTIC
        )
        count_text_tokens(text, encoding="no_such_base")
    assert sum("no_such_base" in r.getMessage() for r in caplog.records) == 1


def test_missing_bpe_openai_falls_back_to_heuristic(fresh_encoders, monkeypatch):
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # makes the import fail
    text = "The quick brown fox jumps over the lazy dog."
    assert count_text_tokens(text) == count_text_tokens(text, encoding=HEURISTIC)


# --------------------------------------------------------------------------- tool groups


def test_tool_call_ids():
    assert tool_call_ids(assistant_calls("a", "b")) == ["a", "b"]
    assert tool_call_ids({"role": "assistant", "content": "hi"}) == []
    assert tool_call_ids({"role": "assistant", "content": "hi", "tool_calls": None}) == []
    assert tool_call_ids(user("hi")) == []


def test_assign_groups_links_results_to_their_call():
    messages = [
        {"role": "system", "content": "Be brief."},  # 10
        user("Weather in Paris and Rome?"),  # 11
        assistant_calls("a", "b"),  # 12
        result("a"),  # 13
        result("b"),  # 14
        {"role": "assistant", "content": "18C and 22C."},  # 15
        result("zzz"),  # 16: orphan
    ]
    assert assign_groups(messages, first_seq=10) == [10, 11, 12, 12, 12, 15, 16]


def test_assign_groups_uses_open_calls_from_storage_and_latest_reuse():
    messages = [result("old"), assistant_calls("x"), result("x"), assistant_calls("x"), result("x")]
    groups = assign_groups(messages, first_seq=50, open_calls={"old": 42, "x": 40})
    assert groups == [42, 51, 51, 53, 53]
    assert assign_groups([], first_seq=1) == []


# --------------------------------------------------------------------------- packing


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


# --------------------------------------------------------------------------- repair


def test_repair_drops_orphans_and_synthesizes_interrupted_results():
    messages = [
        result("gone"),  # its assistant fell out of the window
        user("Weather in Paris, Rome and Oslo?"),
        assistant_calls("a", "b", "c"),
        result("b"),
        user("Never mind."),
        assistant_calls("d"),
    ]
    original = copy.deepcopy(messages)
    repaired = repair(messages)
    assert messages == original
    interrupted = "Tool call interrupted: no result was recorded."
    assert repaired == [
        user("Weather in Paris, Rome and Oslo?"),
        assistant_calls("a", "b", "c"),
        result("b"),
        result("a", interrupted),
        result("c", interrupted),
        user("Never mind."),
        assistant_calls("d"),
        result("d", interrupted),
    ]
    repaired[1]["tool_calls"][0]["id"] = "changed"
    assert messages == original
    assert repair(messages, interrupted_content="cancelled")[3]["content"] == "cancelled"


def test_repair_keeps_first_duplicate_and_moves_late_results_up():
    messages = [
        assistant_calls("a", "b"),
        result("a", "first"),
        result("a", "second"),
        user("Still there?"),
        result("b", "late"),  # stored after a later turn, still in the same tool group
    ]
    assert repair(messages) == [
        assistant_calls("a", "b"),
        result("a", "first"),
        result("b", "late"),
        user("Still there?"),
    ]


def test_repair_answers_reused_ids_per_assistant_and_keeps_valid_input():
    messages = [
        assistant_calls("x"),
        result("x", "one"),
        assistant_calls("x"),
        result("x", "two"),
        {"role": "assistant", "content": "Done.", "x-note": 1},
    ]
    assert repair(messages) == messages
    assert repair([]) == []


def assert_valid_request(messages: list[dict]) -> None:
    """Every tool result answers the assistant just before its run, every call exactly once."""
    pending: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in pending
            pending.remove(message["tool_call_id"])
            continue
        assert pending == []
        pending = tool_call_ids(message)
    assert pending == []


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.builds(user, st.just("hi")),
            st.builds(
                lambda ids: assistant_calls(*ids),
                st.lists(st.sampled_from("abcd"), min_size=1, max_size=3, unique=True),
            ),
            st.builds(result, st.sampled_from("abcde")),
        ),
        max_size=20,
    )
)
def test_repair_always_produces_a_valid_request(messages):
    repaired = repair(messages)
    assert_valid_request(repaired)
    assert repair(repaired) == repaired
    assert [m for m in repaired if m["role"] != "tool"] == [
        m for m in messages if m["role"] != "tool"
    ]


def test_a_text_longer_than_the_encoder_limit_is_counted_in_pieces() -> None:
    one = conversation.count_text_tokens("word " * 1000, encoding="o200k_base")
    many = conversation.count_text_tokens("word " * 300_000, encoding="o200k_base")

    assert 299 * one <= many <= 301 * one
    assert conversation.count_text_tokens("é" * 600_000, encoding="o200k_base") > 0


def test_supported_encodings_lists_the_bundled_vocabularies() -> None:
    names = conversation.supported_encodings()

    assert {"o200k_base", "cl100k_base", conversation.HEURISTIC} <= names
