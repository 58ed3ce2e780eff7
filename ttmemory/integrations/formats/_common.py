"""Helpers shared by the wire-format adapters: unknown keys, mappings, tool calls and arguments."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any

from ttmemory.exceptions import MemoryValidationError

__all__ = ["arguments_text", "extras", "function_calls", "require_mapping"]

_CALL_KNOWN = frozenset({"id", "type", "function"})


def extras(mapping: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in mapping.items() if k not in known}


def require_mapping(value: object, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MemoryValidationError(field, f"must be a JSON object, got {type(value).__name__}.")
    return value


def arguments_text(arguments: object) -> str:
    if arguments is None:
        return "{}"
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def function_calls(calls: object) -> Iterator[tuple[Any, Mapping[str, Any], dict[str, Any]]]:
    """Each Chat Completions tool call in ``calls`` as ``(id, function, its other keys)``.

    What is not a list of mappings is passed over, and a ``function`` that is not a mapping reads
    as an empty one: both formats forgive a malformed call the same way.
    """
    if not isinstance(calls, list):
        return
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        yield (
            call.get("id"),
            function if isinstance(function, Mapping) else {},
            extras(call, _CALL_KNOWN),
        )
