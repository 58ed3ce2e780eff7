"""Tests of ttmemory.conversation.groups: tool calls and the results that answer them."""

from __future__ import annotations

from tests.conversation.builders import assistant_calls, result, user
from ttmemory.conversation import (
    assign_groups,
    tool_call_ids,
)


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
