"""Tests of ttmemory.conversation.repair: requests a model accepts (DESIGN rule 5)."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conversation.builders import assistant_calls, result, user
from ttmemory.conversation import (
    repair,
    tool_call_ids,
)


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
