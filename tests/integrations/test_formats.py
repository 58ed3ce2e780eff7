"""Tests of ttmemory.integrations.formats: Responses-API and Anthropic round trips."""

from __future__ import annotations

import json

import pytest

from tests.conversation.builders import assistant_calls, call, result, user
from ttmemory.conversation import tool_call_ids, validate_message
from ttmemory.exceptions import MemoryValidationError
from ttmemory.integrations.formats import (
    from_anthropic,
    from_responses_items,
    to_anthropic,
    to_responses_items,
)
from ttmemory.integrations.formats.anthropic import _text_of


def chat_conversation() -> list[dict]:
    return [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "developer", "content": "Answer in Celsius."},
        {"role": "user", "content": "Weather in Paris and Rome?", "name": "alice"},
        assistant_calls("call_1", "call_2", content="Checking both."),
        result("call_1", "18C"),
        result("call_2", "22C"),
        {"role": "assistant", "content": "Paris 18C, Rome 22C.", "x-model": "gpt-4.1"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "And this place?"},
                {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("call_3", "locate", '{"image": 1}'),
                call("call_4", "get_weather", '{"city": "Oslo", "days": 2}'),
            ],
        },
        result("call_3", "Oslo"),
        result("call_4", "3C"),
    ]


def test_responses_round_trip_from_chat():
    messages = chat_conversation()
    items = to_responses_items(messages)
    assert [i["type"] for i in items] == (
        ["message"] * 4 + ["function_call"] * 2 + ["function_call_output"] * 2 + ["message"] * 2
    ) + ["function_call"] * 2 + ["function_call_output"] * 2
    assert items[2] == {
        "type": "message",
        "role": "user",
        "content": "Weather in Paris and Rome?",
        "name": "alice",
    }
    assert items[4] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    assert items[6] == {"type": "function_call_output", "call_id": "call_1", "output": "18C"}
    assert items[9]["content"][1] == {"type": "input_image", "image_url": "https://x.test/a.png"}
    assert from_responses_items(items) == messages


def test_responses_round_trip_from_items():
    items = [
        {"type": "message", "role": "developer", "content": "Be terse."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Let me check."}],
        },
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a":1}'},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": "two"},
        {"type": "function_call_output", "call_id": "c1", "output": "one"},
        {"type": "function_call", "call_id": "c3", "name": "h", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c3", "output": "three"},
    ]
    messages = from_responses_items(items)
    assert [m["role"] for m in messages] == [
        "developer",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
    ]
    assert messages[2]["content"] == [{"type": "text", "text": "Let me check."}]
    assert tool_call_ids(messages[2]) == ["c1", "c2"]
    assert messages[5] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "h", "arguments": "{}"}}
        ],
    }
    assert to_responses_items(messages) == items


def test_responses_items_edge_cases():
    assert from_responses_items("Hello") == [{"role": "user", "content": "Hello"}]
    untyped = [{"role": "user", "content": "Hi", "id": "msg_1"}, {"type": "reasoning", "id": "r"}]
    assert from_responses_items(untyped) == [{"role": "user", "content": "Hi", "id": "msg_1"}]
    with pytest.raises(MemoryValidationError) as info:
        from_responses_items([{"type": "web_search_call", "id": "ws"}])
    assert info.value.field == "items[0].type"
    with pytest.raises(MemoryValidationError) as info:
        from_responses_items([{"type": "function_call", "name": "f"}])
    assert info.value.field == "items[0].call_id"
    with pytest.raises(MemoryValidationError) as info:
        to_responses_items([{"role": "function", "name": "f", "content": "x"}])
    assert info.value.field == "messages[0].role"


def test_anthropic_round_trip_from_chat():
    messages = [m for m in chat_conversation() if m["role"] != "developer"]
    messages[2]["tool_calls"][1]["function"]["arguments"] = '{"city":"Rome"}'  # compact JSON
    messages[3]["is_error"] = True
    system, converted = to_anthropic(messages)
    assert system == "You are a weather bot."
    assert [m["role"] for m in converted] == ["user", "assistant"] * 3 + ["user"]
    assert converted[1]["content"] == [
        {"type": "text", "text": "Checking both."},
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    assert converted[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "18C", "is_error": True},
        {"type": "tool_result", "tool_use_id": "call_2", "content": "22C"},
    ]
    back = from_anthropic(converted, system=system)
    assert len(back) == len(messages)
    for original, restored in zip(messages, back, strict=True):
        assert restored["role"] == original["role"]
        assert restored.get("tool_call_id") == original.get("tool_call_id")
        assert _text_of(restored["content"]) == _text_of(original["content"])
        original_calls = original.get("tool_calls") or []
        restored_calls = restored.get("tool_calls") or []
        assert [c["id"] for c in restored_calls] == [c["id"] for c in original_calls]
        assert [c["function"]["name"] for c in restored_calls] == [
            c["function"]["name"] for c in original_calls
        ]
        assert [json.loads(c["function"]["arguments"]) for c in restored_calls] == [
            json.loads(c["function"]["arguments"]) for c in original_calls
        ]
    assert back[3]["is_error"] is True
    assert back[6]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "https://x.test/a.png"},
    }


def test_anthropic_round_trip_from_anthropic():
    system = "You are a weather bot."
    messages = [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Two cities.", "signature": "sig"},
                {"type": "text", "text": "Checking both."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "weather",
                    "input": {"city": "Paris"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "Rome"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [{"type": "text", "text": "API down"}],
                    "is_error": True,
                },
                {"type": "text", "text": "Also, what about this?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_3", "name": "look", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Paris is 18C."}]},
    ]
    chat = from_anthropic(messages, system=system)
    assert [m["role"] for m in chat] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert tool_call_ids(chat[2]) == ["toolu_1", "toolu_2"]
    assert json.loads(chat[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert chat[4] == {
        "role": "tool",
        "tool_call_id": "toolu_2",
        "content": [{"type": "text", "text": "API down"}],
        "is_error": True,
    }
    assert chat[5]["content"][1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
    assert chat[6]["content"] == "Let me look."
    assert to_anthropic(chat)[1][4] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "content": ""}],
    }
    messages[4]["content"][0]["content"] = ""
    assert to_anthropic(chat) == (system, messages)
    assert validate_message(chat[2], max_bytes=10_000)


def test_to_anthropic_joins_system_messages_and_keeps_unknown_keys():
    system, messages = to_anthropic(
        [
            {"role": "system", "content": "One."},
            {"role": "developer", "content": [{"type": "text", "text": "Two."}]},
            {"role": "user", "content": "Hi", "metadata": {"k": 1}},
        ]
    )
    assert system == "One.\n\nTwo."
    assert messages == [{"role": "user", "content": "Hi", "metadata": {"k": 1}}]
    assert to_anthropic([user("Hi")])[0] is None
    assert from_anthropic([{"role": "user", "content": "Hi", "metadata": {"k": 1}}]) == [
        {"role": "user", "content": "Hi", "metadata": {"k": 1}}
    ]
    bad = {"role": "assistant", "content": None, "tool_calls": [call("c", "f", "not json")]}
    assert to_anthropic([bad])[1][0]["content"][0]["input"] == {"arguments": "not json"}


def test_both_formats_forgive_a_malformed_tool_call_alike():
    calls = [
        "not a call",
        {"id": "call_1", "type": "function", "function": "not a mapping", "x-trace": "t"},
    ]
    messages = [{"role": "assistant", "content": "On it.", "tool_calls": calls}]

    assert to_responses_items(messages)[1:] == [
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": None,
            "arguments": "{}",
            "x-trace": "t",
        }
    ]
    _system, converted = to_anthropic(messages)
    blocks = converted[0]["content"]
    assert blocks[1:] == [
        {"type": "tool_use", "id": "call_1", "name": None, "input": {}, "x-trace": "t"}
    ]
