"""Tests of ttmemory.conversation.validation: one message checked, cleaned and encoded."""

from __future__ import annotations

import json

import pytest

from tests.conversation.builders import call
from ttmemory.conversation import (
    ROLES,
    SYSTEM_ROLES,
    validate_message,
)
from ttmemory.exceptions import MemoryValidationError


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
