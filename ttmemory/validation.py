"""The one place for input rules: identifiers, text and JSON, used by every entry point."""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError

KIND_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
METADATA_KEY_RE = re.compile(r"^[A-Za-z0-9_]{1,64}$")

# JSON arrays and objects nest at most this deep, wherever JSON enters (API bodies, messages,
# metadata, state, profiles): deeper input is refused before it is parsed or walked further.
MAX_JSON_DEPTH = 64
# A prefix grant of an API key ends at one of these (``acme/*``, ``user-1:*``), so ``user-1``
# can never be a prefix of ``user-10``.
NAMESPACE_SEPARATORS = "/:.-_"
# Unicode categories no namespace or session key may contain: controls (Cc, including U+0085),
# format characters (Cf: zero-width and bidi controls such as U+200B and U+202E), surrogates,
# and line and paragraph separators. The only space allowed is U+0020.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Datetimes given to ttmemory (``expires_at``) lie in this range; Python's own limits (year 1,
# year 9999) overflow as soon as a time zone is applied.
EARLIEST_DATETIME = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST_DATETIME = dt.datetime(9999, 1, 1, tzinfo=dt.UTC)
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.1): drawn as
# nothing, so an identifier holding one looks like another without it. Many are format (Cf)
# characters, refused by category anyway; the others are letters and marks (the Hangul
# fillers, the combining grapheme joiner, variation selectors, Mongolian free variation
# selectors, the Khmer inherent vowels) or unassigned. Plus U+2800 BRAILLE PATTERN BLANK, which
# renders as a blank but is a symbol.
DEFAULT_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
BLANK_LOOKING = frozenset({0x2800})
# C0 controls refused in every text (NUL included); tab, LF and CR are text.
_REFUSED_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def is_invisible(ch: str, *, ignorable_only: bool = False) -> bool:
    """True for a character an identifier may not hold: a default-ignorable code point, a
    blank-looking symbol, and (unless ``ignorable_only``) a control, format, surrogate or
    separator, or a space other than U+0020."""
    code = ord(ch)
    if code in BLANK_LOOKING or any(low <= code <= high for low, high in DEFAULT_IGNORABLE_RANGES):
        return True
    if ignorable_only:
        return False
    category = unicodedata.category(ch)
    return category in REFUSED_CATEGORIES or (category == "Zs" and ch != " ")


def printable(value: str) -> str:
    """``value`` with lone surrogates escaped (``\\ud800``): safe to put in an error message,
    a log line or a JSON response."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def clean_text(value: str, *, field: str) -> str:
    """``value`` unless it holds a lone surrogate or a C0 control other than tab, LF and CR
    (NUL included): MemoryValidationError naming ``field`` and the position. For every text
    stored or indexed (fact text, message content, labels, JSON strings)."""
    found = _REFUSED_C0.search(value)
    if found is not None:
        raise MemoryValidationError(
            field,
            f"must not contain control characters (U+{ord(found.group()):04X} at position "
            f"{found.start()}; only tab, line feed and carriage return are text)",
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MemoryValidationError(
            field, f"contains a lone surrogate at position {exc.start} (not valid Unicode)"
        ) from None
    return value


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


def clean_key(value: Any, *, field: str = "key") -> str:
    """A session key (or any identifier) that reads as what it is: ``clean_identifier``, in
    Unicode NFC, without control, format (zero-width, bidi), separator or non-ASCII space
    characters, so two keys that look the same are the same key."""
    value = clean_identifier(value, field=field)
    refuse_invisible(value, field=field)
    if unicodedata.normalize("NFC", value) != value:
        raise MemoryValidationError(field, "must be in Unicode normal form NFC")
    return value


def refuse_invisible(value: str, *, field: str, ignorable_only: bool = False) -> None:
    """MemoryValidationError naming ``field`` and the first invisible character of ``value``
    (``is_invisible``): the identifier rule. Profile keys pass ``ignorable_only``: they are
    quoted, escapes and all, wherever they are shown (``ttmemory.selectors.prompt.quote``)."""
    for index, ch in enumerate(value):
        if is_invisible(ch, ignorable_only=ignorable_only):
            raise MemoryValidationError(
                field,
                f"must not contain invisible, control or bidi characters "
                f"(U+{ord(ch):04X} at position {index})",
            )


def clean_namespace(value: Any, *, field: str = "namespace") -> str:
    """A namespace: a ``clean_key`` without ``*`` (it marks prefix grants) whose
    ``/``-separated segments are neither empty nor ``.`` or ``..``."""
    value = clean_key(value, field=field)
    if "*" in value:
        raise MemoryValidationError(field, "must not contain '*' (it marks prefix grants)")
    for segment in value.split("/"):
        if segment in ("", ".", ".."):
            raise MemoryValidationError(
                field, "must not have empty, '.' or '..' segments between '/' separators"
            )
    return value


def clean_datetime(value: Any, *, field: str) -> dt.datetime:
    """A datetime between 1970-01-01 and 9999-01-01 (UTC), or MemoryValidationError."""
    if not isinstance(value, dt.datetime):
        raise MemoryValidationError(field, "must be a datetime")
    earliest, latest = EARLIEST_DATETIME, LATEST_DATETIME
    if value.tzinfo is None or value.utcoffset() is None:
        earliest, latest = earliest.replace(tzinfo=None), latest.replace(tzinfo=None)
    try:
        in_range = earliest <= value < latest
    except OverflowError:
        in_range = False
    if not in_range:
        raise MemoryValidationError(field, "must lie between 1970-01-01 and 9999-01-01")
    return value


def clean_count(value: Any, *, field: str, minimum: int = 0) -> int:
    """Return a non-negative whole number, or raise MemoryValidationError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryValidationError(field, f"must be a whole number, not {value!r}")
    if value < minimum:
        raise MemoryValidationError(field, f"must be at least {minimum}, not {value}")
    return value


def clean_json(value: Any, *, field: str, allow_nul: bool = True, depth: int = 0) -> Any:
    """A deep, JSON-clean copy of ``value`` (tuples become lists), or MemoryValidationError
    naming the offending part (``field.key[2]``).

    The one walk every JSON value ttmemory stores goes through. Refused: NaN and infinities,
    non-string keys, values that are not JSON (sets, bytes, objects), lone surrogates, arrays
    and objects nested deeper than ``MAX_JSON_DEPTH`` (refused before going deeper), and, with
    ``allow_nul=False`` (JSON stored in clear: PostgreSQL's jsonb cannot hold it), NUL.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _clean_text(value, field=field, allow_nul=allow_nul)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MemoryValidationError(field, f"{value!r} is not a valid JSON number")
        return float(value)
    if isinstance(value, Mapping | list | tuple) and depth >= MAX_JSON_DEPTH:
        raise MemoryValidationError(
            field, f"nests arrays and objects deeper than {MAX_JSON_DEPTH} levels"
        )
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise MemoryValidationError(field, f"keys must be strings, not {key!r}")
            path = f"{field}.{printable(key)}"
            _clean_text(key, field=path, allow_nul=allow_nul)
            out[key] = clean_json(item, field=path, allow_nul=allow_nul, depth=depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [
            clean_json(item, field=f"{field}[{index}]", allow_nul=allow_nul, depth=depth + 1)
            for index, item in enumerate(value)
        ]
    raise MemoryValidationError(
        field, f"a value of type {type(value).__name__} is not JSON-serialisable"
    )


def _clean_text(value: str, *, field: str, allow_nul: bool) -> str:
    if not allow_nul and "\x00" in value:
        raise MemoryValidationError(field, "must not contain NUL (\\u0000) characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise MemoryValidationError(
            field, "contains a lone surrogate (not valid Unicode)"
        ) from None
    return str(value)


def clean_json_object(value: Mapping[str, Any], *, field: str) -> dict[str, Any]:
    """A deep copy of a JSON object the app stores (session and fact metadata, session state,
    profile data, audit details), naming ``field``: ``clean_json`` with NUL refused (jsonb in
    clear cannot hold it; the encrypted ones follow the same rule)."""
    if not isinstance(value, Mapping):
        raise MemoryValidationError(field, "must be a JSON object")
    copy: dict[str, Any] = clean_json(value, field=field, allow_nul=False)
    return copy


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
