"""OpenAI Responses API input items to and from Chat Completions messages."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ttmemory.exceptions import MemoryValidationError
from ttmemory.integrations.formats._common import (
    arguments_text,
    extras,
    function_calls,
    require_mapping,
)

__all__ = ["from_responses_items", "to_responses_items"]

_RESPONSES_TEXT = frozenset({"input_text", "output_text", "text"})


def _part_from_responses(part: object) -> Any:
    if not isinstance(part, Mapping):
        return copy.deepcopy(part)
    kind = part.get("type")
    if kind in _RESPONSES_TEXT:
        return {"type": "text", **extras(part, frozenset({"type"}))}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image: dict[str, Any] = {"url": part["image_url"]}
        if "detail" in part:
            image["detail"] = part["detail"]
        extra = extras(part, frozenset({"type", "image_url", "detail"}))
        return {"type": "image_url", "image_url": image, **extra}
    return copy.deepcopy(dict(part))


def _part_to_responses(part: object, role: str) -> Any:
    if not isinstance(part, Mapping):
        return copy.deepcopy(part)
    kind = part.get("type")
    if kind == "text":
        text_type = "output_text" if role == "assistant" else "input_text"
        return {"type": text_type, **extras(part, frozenset({"type"}))}
    image = part.get("image_url")
    if kind == "image_url" and isinstance(image, Mapping):
        out: dict[str, Any] = {"type": "input_image", "image_url": image.get("url")}
        if "detail" in image:
            out["detail"] = image["detail"]
        return {**out, **extras(part, frozenset({"type", "image_url"}))}
    return copy.deepcopy(dict(part))


def _content_from_responses(content: object) -> Any:
    if isinstance(content, list):
        return [_part_from_responses(part) for part in content]
    return copy.deepcopy(content)


def _content_to_responses(content: object, role: str) -> Any:
    if isinstance(content, list):
        return [_part_to_responses(part, role) for part in content]
    return copy.deepcopy(content)


def from_responses_items(items: Sequence[Mapping[str, Any]] | str) -> list[dict[str, Any]]:
    """Convert OpenAI Responses API input items to Chat Completions messages.

    ``message`` items (or items with a role and no type) keep their role, content and
    unknown keys; ``input_text``/``output_text`` parts become ``text`` parts and
    ``input_image`` becomes ``image_url``. Consecutive ``function_call`` items join the
    preceding assistant message (or a new one with ``content: None``) as ``tool_calls``;
    ``function_call_output`` becomes a ``tool`` message. Item ids and statuses of calls are
    dropped, ``reasoning`` items are skipped (chat has no place for them), a bare string is
    one user message. Raises ``MemoryValidationError`` naming ``items[i]`` for anything else.
    """
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    out: list[dict[str, Any]] = []
    call_known = frozenset({"type", "call_id", "name", "arguments", "id", "status"})
    output_known = frozenset({"type", "call_id", "output", "id", "status"})
    for index, raw in enumerate(items):
        item = require_mapping(raw, f"items[{index}]")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            if not isinstance(item.get("role"), str):
                raise MemoryValidationError(f"items[{index}].role", "is required.")
            message = {
                "role": item["role"],
                "content": _content_from_responses(item.get("content")),
                **extras(item, frozenset({"type", "role", "content"})),
            }
            out.append(message)
        elif kind == "function_call":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise MemoryValidationError(f"items[{index}].call_id", "is required.")
            call = {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": item.get("name"),
                    "arguments": arguments_text(item.get("arguments")),
                },
                **extras(item, call_known),
            }
            if out and out[-1].get("role") == "assistant":
                if not isinstance(out[-1].get("tool_calls"), list):
                    out[-1]["tool_calls"] = []
                out[-1]["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise MemoryValidationError(f"items[{index}].call_id", "is required.")
            output = item.get("output")
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": "" if output is None else _content_from_responses(output),
                    **extras(item, output_known),
                }
            )
        elif kind == "reasoning":
            continue
        else:
            raise MemoryValidationError(
                f"items[{index}].type", f"unsupported Responses item type {kind!r}."
            )
    return out


def to_responses_items(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Convert Chat Completions messages to OpenAI Responses API input items.

    Each message becomes a ``message`` item (text parts become ``input_text``, or
    ``output_text`` for the assistant; ``image_url`` becomes ``input_image``; unknown keys
    are kept on the item), except an assistant message with tool calls and no content, which
    only yields its ``function_call`` items (its other keys have nowhere to go). Tool calls
    become ``function_call`` items, tool results ``function_call_output`` items. Raises
    ``MemoryValidationError`` for a legacy ``function`` message (it has no call id).
    """
    out: list[dict[str, Any]] = []
    message_known = frozenset({"role", "content", "tool_calls"})
    for index, raw in enumerate(messages):
        message = require_mapping(raw, f"messages[{index}]")
        role = message.get("role")
        if role == "tool":
            content = message.get("content")
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": message.get("tool_call_id"),
                    "output": "" if content is None else _content_to_responses(content, "tool"),
                    **extras(message, frozenset({"role", "content", "tool_call_id"})),
                }
            )
            continue
        if role == "function":
            raise MemoryValidationError(
                f"messages[{index}].role", "legacy 'function' messages have no Responses form."
            )
        content = message.get("content")
        calls = message.get("tool_calls")
        calls = calls if isinstance(calls, list) else []
        if not (calls and content in (None, "", [])):
            out.append(
                {
                    "type": "message",
                    "role": role,
                    "content": _content_to_responses("" if content is None else content, str(role)),
                    **extras(message, message_known),
                }
            )
        for call_id, function, rest in function_calls(calls):
            out.append(
                {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": function.get("name"),
                    "arguments": arguments_text(function.get("arguments")),
                    **rest,
                }
            )
    return out
