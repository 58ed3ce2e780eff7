"""Token counts of texts, messages and requests: exact BPE from bpe_openai, else an estimate."""

from __future__ import annotations

import functools
import importlib
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "HEURISTIC",
    "count_message_tokens",
    "count_messages_tokens",
    "count_text_tokens",
    "supported_encodings",
]

HEURISTIC = "heuristic"
"""Encoding name that always uses the offline estimate instead of a BPE tokenizer."""

# OpenAI cookbook ("How to count tokens with tiktoken") accounting.
_TOKENS_PER_MESSAGE = 3
_TOKENS_PER_NAME = 1
_TOKENS_PER_TOOL_CALL = 3
_REPLY_PRIMING = 3
_TOKENS_PER_IMAGE = 85  # OpenAI's flat cost of a low-detail image


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

    role = message.get("role")
    total = _TOKENS_PER_MESSAGE + (
        _role_tokens(encoding, role) if isinstance(role, str) and role else 0
    )
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


@functools.lru_cache(maxsize=64)
def _role_tokens(encoding: str, role: str) -> int:
    """Tokens of a role name: a handful of roles, counted once each (half the encoder calls
    of an append were the role's)."""
    return _token_counter(encoding)(role)


def count_messages_tokens(
    messages: Sequence[Mapping[str, Any]], *, encoding: str = "o200k_base"
) -> int:
    """Count the prompt tokens of a whole request: each message plus 3 for reply priming."""
    return _REPLY_PRIMING + sum(count_message_tokens(m, encoding=encoding) for m in messages)
