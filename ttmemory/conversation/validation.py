"""Validation of one Chat Completions message: role, tool calls, content parts, JSON, size."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ttmemory.exceptions import MemoryValidationError
from ttmemory.validation import clean_json

__all__ = ["MAX_TOOL_CALL_ID", "ROLES", "SYSTEM_ROLES", "validate_message"]

ROLES: frozenset[str] = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
SYSTEM_ROLES: frozenset[str] = frozenset({"system", "developer"})
# The longest tool call id, on the call (``tool_calls[i].id``) and on its result
# (``tool_call_id``) alike: a call must always be answerable.
MAX_TOOL_CALL_ID = 255


def validate_message(
    message: object, *, max_bytes: int, field: str = "message"
) -> tuple[dict[str, Any], bytes]:
    """Check one Chat Completions message and return ``(clean copy, compact UTF-8 JSON)``.

    The copy is deep and JSON-clean (tuples become lists); unknown keys are kept. Raises
    ``MemoryValidationError`` whose ``field`` starts with ``field`` and names the offending
    part (``message.role``, ``message.tool_calls[1].id``, ``message.content[0].text`` ...) when
    the message is not a mapping, its role is missing or unknown, a ``tool`` message lacks a
    ``tool_call_id``, ``tool_calls`` is not a list of calls with distinct non-empty string
    ids, a message other than an assistant's carries tool calls, an id is longer than
    ``MAX_TOOL_CALL_ID`` characters, ``content`` is not a string, null or a list of content
    parts, a value is not JSON (NaN, infinity, sets, bytes, objects, non-string keys, lone
    surrogates, nesting deeper than ``MAX_JSON_DEPTH``), or the encoding is larger than
    ``max_bytes``. ``tool_calls: null`` or ``[]`` (as SDKs dump them) is accepted and means no
    calls. Whether a result answers a call is a question about the session, not the message:
    the append service checks it. Legacy function calling (role ``function``, a
    ``function_call`` key) is refused: it has no call ids, so its results could not be grouped
    with their calls.
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
    clean: dict[str, Any] = clean_json(message, field=field)

    if role == "tool":
        call_id = clean.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise MemoryValidationError(
                f"{field}.tool_call_id", "a tool message needs a non-empty string tool_call_id."
            )
    elif "tool_call_id" in clean and not isinstance(clean["tool_call_id"], str):
        raise MemoryValidationError(f"{field}.tool_call_id", "must be a string.")
    if len(clean.get("tool_call_id") or "") > MAX_TOOL_CALL_ID:
        raise MemoryValidationError(
            f"{field}.tool_call_id", f"is longer than {MAX_TOOL_CALL_ID} characters."
        )

    calls = clean.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise MemoryValidationError(f"{field}.tool_calls", "must be a list of tool calls.")
        if calls and role != "assistant":
            raise MemoryValidationError(
                f"{field}.tool_calls", f"only assistant messages make tool calls, not {role}."
            )
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
            if len(call_id) > MAX_TOOL_CALL_ID:
                raise MemoryValidationError(
                    f"{field}.tool_calls[{index}].id",
                    f"is longer than {MAX_TOOL_CALL_ID} characters.",
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
