"""Pure rules on chat message lists: validation, tokens, tool groups, packing, repair, adapters."""

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
    "from_anthropic",
    "from_responses_items",
    "pack",
    "repair",
    "supported_encodings",
    "to_anthropic",
    "to_responses_items",
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


# --------------------------------------------------------------------------- shared helpers


def _extras(mapping: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in mapping.items() if k not in known}


def _require_mapping(value: object, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MemoryValidationError(field, f"must be a JSON object, got {type(value).__name__}.")
    return value


def _arguments_text(arguments: object) -> str:
    if arguments is None:
        return "{}"
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


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


# --------------------------------------------------------------------------- Responses API

_RESPONSES_TEXT = frozenset({"input_text", "output_text", "text"})


def _part_from_responses(part: object) -> Any:
    if not isinstance(part, Mapping):
        return copy.deepcopy(part)
    kind = part.get("type")
    if kind in _RESPONSES_TEXT:
        return {"type": "text", **_extras(part, frozenset({"type"}))}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image: dict[str, Any] = {"url": part["image_url"]}
        if "detail" in part:
            image["detail"] = part["detail"]
        extra = _extras(part, frozenset({"type", "image_url", "detail"}))
        return {"type": "image_url", "image_url": image, **extra}
    return copy.deepcopy(dict(part))


def _part_to_responses(part: object, role: str) -> Any:
    if not isinstance(part, Mapping):
        return copy.deepcopy(part)
    kind = part.get("type")
    if kind == "text":
        text_type = "output_text" if role == "assistant" else "input_text"
        return {"type": text_type, **_extras(part, frozenset({"type"}))}
    image = part.get("image_url")
    if kind == "image_url" and isinstance(image, Mapping):
        out: dict[str, Any] = {"type": "input_image", "image_url": image.get("url")}
        if "detail" in image:
            out["detail"] = image["detail"]
        return {**out, **_extras(part, frozenset({"type", "image_url"}))}
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
        item = _require_mapping(raw, f"items[{index}]")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            if not isinstance(item.get("role"), str):
                raise MemoryValidationError(f"items[{index}].role", "is required.")
            message = {
                "role": item["role"],
                "content": _content_from_responses(item.get("content")),
                **_extras(item, frozenset({"type", "role", "content"})),
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
                    "arguments": _arguments_text(item.get("arguments")),
                },
                **_extras(item, call_known),
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
                    **_extras(item, output_known),
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
        message = _require_mapping(raw, f"messages[{index}]")
        role = message.get("role")
        if role == "tool":
            content = message.get("content")
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": message.get("tool_call_id"),
                    "output": "" if content is None else _content_to_responses(content, "tool"),
                    **_extras(message, frozenset({"role", "content", "tool_call_id"})),
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
                    **_extras(message, message_known),
                }
            )
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            function = function if isinstance(function, Mapping) else {}
            out.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": _arguments_text(function.get("arguments")),
                    **_extras(call, frozenset({"id", "type", "function"})),
                }
            )
    return out


# --------------------------------------------------------------------------- Anthropic

_DATA_URL = re.compile(r"data:(?P<media>[^;,]+);base64,(?P<data>.*)", re.DOTALL)


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
        extra = _extras(block, frozenset({"type", "source"}))
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
            **_extras(part, frozenset({"type", "image_url"})),
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
        message = _require_mapping(raw, f"messages[{index}]")
        role = message.get("role")
        if not isinstance(role, str):
            raise MemoryValidationError(f"messages[{index}].role", "is required.")
        extra = _extras(message, frozenset({"role", "content"}))
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
                        "arguments": _arguments_text(block.get("input", {})),
                    },
                    **_extras(block, use_known),
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
                        **_extras(block, result_known),
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
        message = _require_mapping(raw, f"messages[{index}]")
        role = message.get("role")
        content = message.get("content")
        extra = _extras(message, frozenset({"role", "content", "tool_calls", "tool_call_id"}))
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
            for call in calls:
                if not isinstance(call, Mapping):
                    continue
                function = call.get("function")
                function = function if isinstance(function, Mapping) else {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id"),
                        "name": function.get("name"),
                        "input": _tool_input(function.get("arguments")),
                        **_extras(call, frozenset({"id", "type", "function"})),
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
