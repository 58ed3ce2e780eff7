"""Builders of Chat Completions messages shared by the conversation and format tests."""

from __future__ import annotations

from typing import Any


def call(call_id: str, name: str = "get_weather", arguments: str = '{"city": "Paris"}') -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant_calls(*ids: str, content: Any = None) -> dict:
    return {"role": "assistant", "content": content, "tool_calls": [call(i) for i in ids]}


def result(call_id: str, content: str = "18C") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def user(text: str) -> dict:
    return {"role": "user", "content": text}
