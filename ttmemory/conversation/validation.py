"""Validation of one Chat Completions message: role, tool calls, content parts, JSON, size."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ttmemory.exceptions import MemoryValidationError

__all__ = ["ROLES", "SYSTEM_ROLES", "validate_message"]

ROLES: frozenset[str] = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
SYSTEM_ROLES: frozenset[str] = frozenset({"system", "developer"})


def _clean_json(value: object, path: str) -> Any:
    """Return a JSON-clean deep copy of ``value`` or raise naming the offending ``path``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MemoryValidationError(path, f"{value!r} is not a valid JSON number.")
        return float(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise MemoryValidationError(path, f"keys must be strings, got {key!r}.")
            out[key] = _clean_json(item, f"{path}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_clean_json(item, f"{path}[{index}]") for index, item in enumerate(value)]
    raise MemoryValidationError(
        path, f"a value of type {type(value).__name__} is not JSON-serialisable."
    )


def validate_message(
    message: object, *, max_bytes: int, field: str = "message"
) -> tuple[dict[str, Any], bytes]:
    """Check one Chat Completions message and return ``(clean copy, compact UTF-8 JSON)``.

    The copy is deep and JSON-clean (tuples become lists); unknown keys are kept. Raises
    ``MemoryValidationError`` whose ``field`` starts with ``field`` and names the offending
    part (``message.role``, ``message.tool_calls[1].id``, ``message.content[0].text`` ...) when
    the message is not a mapping, its role is missing or unknown, a ``tool`` message lacks a
    ``tool_call_id``, ``tool_calls`` is not a list of calls with distinct non-empty string
    ids, ``content`` is not a string, null or a list of content parts, a value is not JSON
    (NaN, infinity, sets, bytes, objects, non-string keys), or the encoding is larger than
    ``max_bytes``. ``tool_calls: null`` (as SDKs dump it) is accepted and means no calls.
    Legacy function calling (role ``function``, a ``function_call`` key) is refused: it has no
    call ids, so its results could not be grouped with their calls.
    """
    if not isinstance(message, Mapping):
        raise MemoryValidationError(field, f"must be a JSON object, got {type(message).__name__}.")
    role = message.get("role")
    if "role" not in message:
        raise MemoryValidationError(f"{field}.role", "is required.")
    if not isinstance(role, str) or role not in ROLES:
        raise MemoryValidationError(
            f"{field}.role", f"must be one of {', '.join(sorted(ROLES))}; got {role!r}."
        )
    if role == "function" or "function_call" in message:
        # Legacy function calling has no call id: a result cannot be matched to its call, so
        # it could never be grouped, packed or repaired with it. Refused, not stored unpaired.
        raise MemoryValidationError(
            f"{field}.role" if role == "function" else f"{field}.function_call",
            "legacy function calling (role 'function', 'function_call') is not accepted; send "
            "the call as an assistant message with 'tool_calls' and its result as a 'tool' "
            "message with 'tool_call_id'.",
        )
    clean: dict[str, Any] = _clean_json(message, field)

    if role == "tool":
        call_id = clean.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise MemoryValidationError(
                f"{field}.tool_call_id", "a tool message needs a non-empty string tool_call_id."
            )
    elif "tool_call_id" in clean and not isinstance(clean["tool_call_id"], str):
        raise MemoryValidationError(f"{field}.tool_call_id", "must be a string.")

    calls = clean.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise MemoryValidationError(f"{field}.tool_calls", "must be a list of tool calls.")
        seen: set[str] = set()
        for index, call in enumerate(calls):
            if not isinstance(call, dict):
                raise MemoryValidationError(
                    f"{field}.tool_calls[{index}]", "must be a JSON object."
                )
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise MemoryValidationError(
                    f"{field}.tool_calls[{index}].id", "must be a non-empty string."
                )
            if call_id in seen:
                raise MemoryValidationError(
                    f"{field}.tool_calls[{index}].id", f"duplicate tool call id {call_id!r}."
                )
            seen.add(call_id)

    content = clean.get("content")
    if isinstance(content, list):
        for index, part in enumerate(content):
            if not isinstance(part, dict):
                raise MemoryValidationError(
                    f"{field}.content[{index}]", "a content part must be a JSON object."
                )
    elif content is not None and not isinstance(content, str):
        raise MemoryValidationError(
            f"{field}.content", "must be a string, null or a list of content parts."
        )

    if "name" in clean and not isinstance(clean["name"], str):
        raise MemoryValidationError(f"{field}.name", "must be a string.")

    encoded = json.dumps(clean, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    if len(encoded) > max_bytes:
        raise MemoryValidationError(
            field, f"is {len(encoded)} bytes as JSON, more than the limit of {max_bytes} bytes."
        )
    return clean, encoded
