"""Helpers shared by the wire-format adapters: unknown keys, mappings, tool arguments."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from ttmemory.exceptions import MemoryValidationError

__all__ = ["arguments_text", "extras", "require_mapping"]


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
