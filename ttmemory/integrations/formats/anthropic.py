"""Anthropic Messages (content blocks, tool_use / tool_result) to and from Chat Completions."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ttmemory.conversation import SYSTEM_ROLES
from ttmemory.exceptions import MemoryValidationError
from ttmemory.integrations.formats._common import (
    arguments_text,
    extras,
    function_calls,
    require_mapping,
)

__all__ = ["from_anthropic", "to_anthropic"]

_DATA_URL = re.compile(r"data:(?P<media>[^;,]+);base64,(?P<data>.*)", re.DOTALL)


def _text_of(content: object) -> str:
    """Plain text of a chat content (string or list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def _block_from_anthropic(block: object) -> Any:
    """Anthropic content block -> chat content part (unknown blocks pass through)."""
    if not isinstance(block, Mapping):
        return copy.deepcopy(block)
    source = block.get("source")
    if block.get("type") == "image" and isinstance(source, Mapping):
        if source.get("type") == "base64":
            url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        elif source.get("type") == "url":
            url = str(source.get("url"))
        else:
            return copy.deepcopy(dict(block))
        extra = extras(block, frozenset({"type", "source"}))
        return {"type": "image_url", "image_url": {"url": url}, **extra}
    return copy.deepcopy(dict(block))


def _block_to_anthropic(part: object) -> Any:
    """Chat content part -> Anthropic content block (unknown parts pass through)."""
    if not isinstance(part, Mapping):
        return copy.deepcopy(part)
    image = part.get("image_url")
    if part.get("type") == "image_url" and isinstance(image, Mapping):
        url = str(image.get("url", ""))
        match = _DATA_URL.fullmatch(url)
        source: dict[str, Any]
        if match:
            source = {"type": "base64", "media_type": match["media"], "data": match["data"]}
        else:
            source = {"type": "url", "url": url}
        return {
            "type": "image",
            "source": source,
            **extras(part, frozenset({"type", "image_url"})),
        }
    return copy.deepcopy(dict(part))


def _is_plain_text(block: object) -> bool:
    return (
        isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and set(block) == {"type", "text"}
    )


def _mixed_content(blocks: list[Any]) -> Any:
    """Content of the chat message split off a mixed Anthropic message.

    None without blocks, a string for one plain text block (what the other direction
    produces from a string), otherwise the list of parts.
    """
    if not blocks:
        return None
    if len(blocks) == 1 and _is_plain_text(blocks[0]):
        return blocks[0]["text"]
    return [_block_from_anthropic(block) for block in blocks]


def _content_from_anthropic(content: object) -> Any:
    if isinstance(content, list):
        return [_block_from_anthropic(block) for block in content]
    return copy.deepcopy(content)


def _content_to_anthropic(content: object) -> Any:
    if isinstance(content, list):
        return [_block_to_anthropic(part) for part in content]
    return copy.deepcopy(content)


def _as_blocks(content: object) -> list[Any]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [_block_to_anthropic(part) for part in content]
    return [copy.deepcopy(content)]


def from_anthropic(
    messages: Sequence[Mapping[str, Any]], *, system: str | list[Any] | None = None
) -> list[dict[str, Any]]:
    """Convert Anthropic Messages (and its ``system``) to Chat Completions messages.

    ``system`` becomes a first system message (a list of blocks becomes text parts).
    Assistant ``tool_use`` blocks become ``tool_calls`` with ``arguments=json.dumps(input)``.
    A user message's ``tool_result`` blocks become one ``tool`` message each (string or
    parts content; ``is_error`` is kept as a key when present), followed by a user message
    for its other blocks. In a message split this way a single plain text block becomes a
    string; otherwise blocks become parts (``image`` -> ``image_url``; unknown blocks such as
    ``thinking`` pass through unchanged). Unknown keys are kept.
    """
    out: list[dict[str, Any]] = []
    if isinstance(system, str) and system:
        out.append({"role": "system", "content": system})
    elif isinstance(system, list) and system:
        out.append({"role": "system", "content": _content_from_anthropic(system)})
    result_known = frozenset({"type", "tool_use_id", "content"})
    use_known = frozenset({"type", "id", "name", "input"})
    for index, raw in enumerate(messages):
        message = require_mapping(raw, f"messages[{index}]")
        role = message.get("role")
        if not isinstance(role, str):
            raise MemoryValidationError(f"messages[{index}].role", "is required.")
        extra = extras(message, frozenset({"role", "content"}))
        content = message.get("content")
        blocks = content if isinstance(content, list) else None
        if blocks is None or not any(
            isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result") for b in blocks
        ):
            out.append({"role": role, "content": _content_from_anthropic(content), **extra})
            continue
        others = [
            b
            for b in blocks
            if not (isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result"))
        ]
        if role == "assistant":
            calls = [
                {
                    "id": block.get("id"),
                    "type": "function",
                    "function": {
                        "name": block.get("name"),
                        "arguments": arguments_text(block.get("input", {})),
                    },
                    **extras(block, use_known),
                }
                for block in blocks
                if isinstance(block, Mapping) and block.get("type") == "tool_use"
            ]
            out.append(
                {"role": role, "content": _mixed_content(others), "tool_calls": calls, **extra}
            )
            continue
        for block in blocks:
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                result = block.get("content")
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": block.get("tool_use_id"),
                        "content": "" if result is None else _content_from_anthropic(result),
                        **extras(block, result_known),
                    }
                )
        if others:
            out.append({"role": role, "content": _mixed_content(others), **extra})
        elif extra and out:
            out[-1].update(extra)
    return out


def to_anthropic(messages: Sequence[Mapping[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """Convert Chat Completions messages to Anthropic Messages: ``(system, messages)``.

    System and developer messages, wherever they are, are joined (blank line between) into
    the returned system string, ``None`` if there are none. Assistant tool calls become
    ``tool_use`` blocks after the text; arguments that are not a JSON object are wrapped as
    ``{"arguments": raw}``. Consecutive tool messages become one user message of
    ``tool_result`` blocks (with ``is_error`` when the tool message has it), and a user
    message right after them joins it. Unknown keys are kept on the message or block.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    result_open = False  # the last output message is a user message holding tool results
    for index, raw in enumerate(messages):
        message = require_mapping(raw, f"messages[{index}]")
        role = message.get("role")
        content = message.get("content")
        extra = extras(message, frozenset({"role", "content", "tool_calls", "tool_call_id"}))
        if role in SYSTEM_ROLES:
            system.append(_text_of(content))
            continue
        if role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id"),
            }
            if content is not None:
                block["content"] = _content_to_anthropic(content)
            block.update(extra)
            if result_open:
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
                result_open = True
            continue
        if role == "user" and result_open:
            out[-1]["content"].extend(_as_blocks(content))
            out[-1].update(extra)
            result_open = False
            continue
        result_open = False
        calls = message.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            blocks = _as_blocks(content)
            for call_id, function, rest in function_calls(calls):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": function.get("name"),
                        "input": _tool_input(function.get("arguments")),
                        **rest,
                    }
                )
            out.append({"role": "assistant", "content": blocks, **extra})
            continue
        anthropic_role = role if role in ("user", "assistant") else "user"
        out.append({"role": anthropic_role, "content": _content_to_anthropic(content), **extra})
    return ("\n\n".join(system) if system else None), out


def _tool_input(arguments: object) -> dict[str, Any]:
    if isinstance(arguments, Mapping):
        return copy.deepcopy(dict(arguments))
    if arguments is None or arguments == "":
        return {}
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"arguments": arguments}
