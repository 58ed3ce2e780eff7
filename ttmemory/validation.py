"""Checks on identifiers shared by services and selectors (namespaces, keys, limits)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError

KIND_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
METADATA_KEY_RE = re.compile(r"^[A-Za-z0-9_]{1,64}$")


def clean_identifier(value: Any, *, field: str) -> str:
    """Return a namespace or session key, or raise MemoryValidationError naming ``field``."""
    if not isinstance(value, str):
        raise MemoryValidationError(field, f"must be a string, not {type(value).__name__}")
    if not value or not value.strip():
        raise MemoryValidationError(field, "must not be empty")
    if value != value.strip():
        raise MemoryValidationError(field, "must not start or end with whitespace")
    limit = app_settings.MAX_NAMESPACE_LENGTH
    if len(value) > limit:
        raise MemoryValidationError(field, f"is {len(value)} characters; the limit is {limit}")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise MemoryValidationError(field, "must not contain control characters")
    return value


def clean_count(value: Any, *, field: str, minimum: int = 0) -> int:
    """Return a non-negative whole number, or raise MemoryValidationError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryValidationError(field, f"must be a whole number, not {value!r}")
    if value < minimum:
        raise MemoryValidationError(field, f"must be at least {minimum}, not {value}")
    return value


def clean_json_object(value: Mapping[str, Any], *, field: str) -> dict[str, Any]:
    """A deep JSON copy of ``value`` (NaN, sets, bytes and objects refused), naming ``field``.

    Stored in clear as JSON, so NUL characters (which PostgreSQL's jsonb cannot hold) are
    refused too.
    """
    try:
        copy = dict(json.loads(json.dumps(dict(value), allow_nan=False)))
    except (TypeError, ValueError) as exc:
        raise MemoryValidationError(field, f"is not JSON: {exc}") from exc
    if _has_nul(copy):
        raise MemoryValidationError(field, "must not contain NUL (\\u0000) characters")
    return copy


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


def merged(current: Mapping[str, Any] | None, changes: Mapping[str, Any]) -> dict[str, Any]:
    """``current`` updated by ``changes``, where a None value removes the key."""
    result = dict(current or {})
    for key, value in changes.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def clean_kind(kind: Any, *, field: str = "kind") -> str:
    if not isinstance(kind, str) or not KIND_RE.match(kind):
        raise MemoryValidationError(
            field, "must be 1-32 lowercase letters, digits or '_', starting with a letter"
        )
    return kind


def clean_metadata(metadata: Any, *, field: str = "metadata") -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise MemoryValidationError(field, "must be a JSON object")
    for key in metadata:
        if not isinstance(key, str) or not METADATA_KEY_RE.match(key):
            raise MemoryValidationError(
                f"{field}.{key}", "keys must be 1-64 letters, digits or '_'"
            )
    return clean_json_object(metadata, field=field)
