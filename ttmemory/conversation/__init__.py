"""Pure rules on chat message lists: validation, tokens, tool groups, packing, repair."""

from __future__ import annotations

import copy
import functools
import importlib
import json
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ttmemory.exceptions import MemoryValidationError

logger = logging.getLogger(__name__)

__all__ = [
    "HEURISTIC",
    "ROLES",
    "SYSTEM_ROLES",
    "PackItem",
    "assign_groups",
    "count_message_tokens",
    "count_messages_tokens",
    "count_text_tokens",
    "pack",
    "repair",
    "supported_encodings",
    "tool_call_ids",
    "validate_message",
]

ROLES: frozenset[str] = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
SYSTEM_ROLES: frozenset[str] = frozenset({"system", "developer"})

HEURISTIC = "heuristic"
"""Encoding name that always uses the offline estimate instead of a BPE tokenizer."""

# OpenAI cookbook ("How to count tokens with tiktoken") accounting.
_TOKENS_PER_MESSAGE = 3
_TOKENS_PER_NAME = 1
_TOKENS_PER_TOOL_CALL = 3
_REPLY_PRIMING = 3
_TOKENS_PER_IMAGE = 85  # OpenAI's flat cost of a low-detail image

_INTERRUPTED = "Tool call interrupted: no result was recorded."


# --------------------------------------------------------------------------- validation


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


# --------------------------------------------------------------------------- tokens

_PIECES = re.compile(
    r"(?P<word>[A-Za-z]+)|(?P<digits>[0-9]{1,3})|(?P<space>\s{2,}|[^\S ])|(?P<single> )"
    r"|(?P<ascii>[\x00-\x7f])|(?P<other>[^\x00-\x7f]+)"
)


def _heuristic_tokens(text: str) -> int:
    """Estimate BPE tokens without a vocabulary, erring slightly high.

    Mimics the GPT pre-tokenizer: a word costs one token per six letters, a group of up to
    three digits, a run of whitespace or a punctuation character one token, a single space
    nothing (it joins the next word); a non-ASCII character costs 0.4 (two UTF-8 bytes:
    Cyrillic, Greek, Arabic...), 1.0 (three bytes: CJK, Indic) or 1.5 (four bytes: emoji).
    Within about 15 % of o200k_base on English prose, code and JSON.
    """
    tenths = 0
    for match in _PIECES.finditer(text):
        kind = match.lastgroup
        if kind == "word":
            tenths += 10 * -(-len(match.group()) // 6)
        elif kind == "other":
            for char in match.group():
                size = len(char.encode())
                tenths += 4 if size == 2 else 10 if size == 3 else 15
        elif kind != "single":
            tenths += 10
    return -(-tenths // 10)


@functools.lru_cache(maxsize=16)
def _token_counter(encoding: str) -> Callable[[str], int]:
    """Return a cached function counting the tokens of a text with ``encoding``."""
    if encoding == HEURISTIC:
        return _heuristic_tokens
    try:
        # Imported by name: bpe_openai ships no type information.
        bpe_openai = importlib.import_module("bpe_openai")
        encoder = bpe_openai.get_encoding(encoding)
    except ImportError:
        logger.warning("bpe_openai is not installed; token counts for %r are estimates.", encoding)
        return _heuristic_tokens
    except Exception:  # bpe_openai raises its own KeyError subclass for unknown names
        logger.warning("Unknown token encoding %r; token counts are estimates.", encoding)
        return _heuristic_tokens

    def count(text: str) -> int:
        # Text that looks like a special token (<|endoftext|>) is counted as plain text.
        if len(text) <= _CHUNK_CHARS:
            return len(encoder.encode_ordinary(text))
        # bpe_openai refuses inputs over 200,000 tokens: count long texts in pieces cut at
        # whitespace (a character is at most 4 tokens, so a piece stays under the limit).
        total = 0
        start = 0
        while start < len(text):
            end = min(start + _CHUNK_CHARS, len(text))
            if end < len(text):
                cut = text.rfind(" ", start + _CHUNK_CHARS // 2, end)
                end = cut if cut > start else end
            total += len(encoder.encode_ordinary(text[start:end]))
            start = end
        return total

    return count


# Longest text encoded in one call; see count() above.
_CHUNK_CHARS = 40_000


def supported_encodings() -> frozenset[str]:
    """Encoding names usable for exact counts here, plus ``HEURISTIC``."""
    try:
        bpe_openai = importlib.import_module("bpe_openai")
        names = frozenset(bpe_openai.list_encoding_names())
    except ImportError:
        names = frozenset()
    return names | {HEURISTIC}


def count_text_tokens(text: str, *, encoding: str = "o200k_base") -> int:
    """Count the tokens of ``text``.

    ``o200k_base`` (GPT-4o, GPT-4.1, o-series, GPT-5) and ``cl100k_base`` (GPT-4, GPT-3.5)
    are exact BPE counts from the vocabularies bundled in ``bpe_openai`` (no download).
    ``HEURISTIC``, an encoding ``bpe_openai`` does not know, or a missing ``bpe_openai``
    give an offline estimate (a warning is logged once per unknown encoding).
    """
    if not text:
        return 0
    return _token_counter(encoding)(text)


def _json_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _content_tokens(content: object, count: Callable[[str], int]) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return count(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                total += count(part["text"])
            elif isinstance(part, Mapping) and isinstance(part.get("refusal"), str):
                total += count(part["refusal"])
            else:
                total += _TOKENS_PER_IMAGE
        return total
    return count(_json_text(content))


def count_message_tokens(message: Mapping[str, Any], *, encoding: str = "o200k_base") -> int:
    """Count the prompt tokens one Chat Completions message costs.

    Follows the OpenAI cookbook: 3 tokens of message overhead, plus the tokens of the role,
    the content (a string; for a list of parts the ``text`` of text parts and a flat 85 per
    other part such as an image), the name (plus 1), the ``tool_call_id``, and for each tool
    call 3 tokens plus its function name and arguments string. Text is counted exactly with
    ``o200k_base`` (GPT-4o/4.1/o-series/GPT-5) and ``cl100k_base`` (GPT-4/3.5); the overhead
    is the cookbook's and OpenAI's hidden tool-call framing may differ by a few tokens. For
    Anthropic and other vendors the count is an approximation within a few percent, and
    ``HEURISTIC`` is an estimate (see ``count_text_tokens``). Images are not sized by detail.
    """
    count = _token_counter(encoding)

    def text_tokens(value: object) -> int:
        return count(value) if isinstance(value, str) and value else 0

    total = _TOKENS_PER_MESSAGE + text_tokens(message.get("role"))
    total += _content_tokens(message.get("content"), count)
    if message.get("name"):
        total += text_tokens(message["name"]) + _TOKENS_PER_NAME
    total += text_tokens(message.get("tool_call_id"))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function") or call.get("custom") or {}
            if not isinstance(function, Mapping):
                continue
            arguments = function.get("arguments", function.get("input", ""))
            total += _TOKENS_PER_TOOL_CALL + text_tokens(function.get("name"))
            total += text_tokens(_json_text(arguments))
    return total


def count_messages_tokens(
    messages: Sequence[Mapping[str, Any]], *, encoding: str = "o200k_base"
) -> int:
    """Count the prompt tokens of a whole request: each message plus 3 for reply priming."""
    return _REPLY_PRIMING + sum(count_message_tokens(m, encoding=encoding) for m in messages)


# --------------------------------------------------------------------------- tool groups


def tool_call_ids(message: Mapping[str, Any]) -> list[str]:
    """Return the ids of the tool calls an assistant message makes, in call order, else []."""
    if message.get("role") != "assistant":
        return []
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    ids = (call.get("id") for call in calls if isinstance(call, Mapping))
    return list(dict.fromkeys(i for i in ids if isinstance(i, str) and i))


def assign_groups(
    messages: Sequence[Mapping[str, Any]],
    *,
    first_seq: int,
    open_calls: Mapping[str, int] | None = None,
) -> list[int]:
    """Return the tool group (a head ``seq``) of each message; message i has seq first_seq + i.

    An assistant message with tool calls heads its own group. A ``tool`` message answering a
    call made earlier, in this list or in ``open_calls`` (call id -> head seq, from storage),
    joins that head's group; when a call id was reused, the latest call wins. Every other
    message, an orphan tool result included, is a group of its own.
    """
    heads: dict[str, int] = dict(open_calls or {})
    groups: list[int] = []
    for index, message in enumerate(messages):
        seq = first_seq + index
        group = seq
        ids = tool_call_ids(message)
        if ids:
            heads.update(dict.fromkeys(ids, seq))
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str):
                group = heads.get(call_id, seq)
        groups.append(group)
    return groups


# --------------------------------------------------------------------------- packing


@dataclass(frozen=True, slots=True)
class PackItem:
    """What packing needs to know about one stored message."""

    seq: int
    role: str
    tokens: int
    group: int


def pack(items: Sequence[PackItem], *, max_tokens: int) -> list[int]:
    """Choose the seqs of a context window within ``max_tokens`` (DESIGN rule 4).

    System and developer messages are always kept, come first in seq order, and count
    against the budget. The other messages form groups (items sharing ``group``, so an
    assistant's tool calls and their results go together), ordered by their newest member.
    Groups are taken newest first while they fit and packing stops at the first that does
    not, so the window is a recent suffix of the groups. If none fits, the newest group is
    kept anyway: the only way the result exceeds the budget. Items may come in any order;
    the other selected seqs follow the system ones in seq order. O(n log n).
    Raises ``MemoryValidationError`` for a negative ``max_tokens`` or token count.
    """
    if max_tokens < 0:
        raise MemoryValidationError("max_tokens", f"must be zero or more, got {max_tokens}.")
    system: list[int] = []
    remaining = max_tokens
    members: dict[int, list[int]] = {}
    sizes: dict[int, int] = {}
    newest: dict[int, int] = {}
    for index, item in enumerate(items):
        if item.tokens < 0:
            raise MemoryValidationError(
                f"items[{index}].tokens", f"must be zero or more, got {item.tokens}."
            )
        if item.role in SYSTEM_ROLES:
            system.append(item.seq)
            remaining -= item.tokens
            continue
        members.setdefault(item.group, []).append(item.seq)
        sizes[item.group] = sizes.get(item.group, 0) + item.tokens
        if item.seq > newest.get(item.group, item.seq - 1):
            newest[item.group] = item.seq

    chosen: list[int] = []
    for rank, group in enumerate(sorted(newest, key=newest.__getitem__, reverse=True)):
        if sizes[group] > remaining and rank > 0:
            break
        # After an overflowing newest group ``remaining`` is negative and nothing else fits.
        remaining -= sizes[group]
        chosen.extend(members[group])
    return sorted(system) + sorted(chosen)


# --------------------------------------------------------------------------- repair


def repair(
    messages: Sequence[Mapping[str, Any]],
    *,
    interrupted_content: str = _INTERRUPTED,
) -> list[dict[str, Any]]:
    """Return a copy of ``messages`` that a model accepts (DESIGN rule 5; never for storage).

    A tool result is kept only if it answers a call of an earlier assistant message (the
    latest one making that call id) that has no result yet: orphans (their assistant fell out
    of the window) and duplicates are dropped. Kept results are placed right after their
    assistant message, in their original order, so a late result (one stored after a later
    user turn) moves up to where the API expects it. A call with no result gets a synthetic
    ``{"role": "tool", "tool_call_id": id, "content": interrupted_content}`` after the
    existing results, in call order. The input is not mutated; messages are deep copies.
    """
    owner: dict[str, int] = {}
    answers: dict[int, dict[str, int]] = {}
    for index, message in enumerate(messages):
        ids = tool_call_ids(message)
        if ids:
            owner.update(dict.fromkeys(ids, index))
            answers[index] = {}
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str) and call_id in owner:
                answers[owner[call_id]].setdefault(call_id, index)

    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            continue  # emitted right after the assistant message it answers, or dropped
        out.append(copy.deepcopy(dict(message)))
        if index not in answers:
            continue
        found = answers[index]
        out.extend(copy.deepcopy(dict(messages[j])) for j in sorted(found.values()))
        out.extend(
            {"role": "tool", "tool_call_id": call_id, "content": interrupted_content}
            for call_id in tool_call_ids(message)
            if call_id not in found
        )
    return out
