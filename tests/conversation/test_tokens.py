"""Tests of ttmemory.conversation.tokens: exact BPE counts, the estimate and its fallbacks."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest

from tests.conversation.builders import assistant_calls, result, user
from ttmemory import conversation
from ttmemory.conversation import (
    HEURISTIC,
    count_message_tokens,
    count_messages_tokens,
    count_text_tokens,
)
from ttmemory.conversation.tokens import _token_counter


@pytest.mark.parametrize(
    ("text", "o200k", "cl100k"),
    [
        ("Hello world", 2, 2),
        ("The quick brown fox jumps over the lazy dog.", 10, 10),
        ("日本語のテキスト", 6, 8),
        ("", 0, 0),
    ],
)
def test_count_text_tokens_is_exact_bpe(text, o200k, cl100k):
    assert count_text_tokens(text) == o200k
    assert count_text_tokens(text, encoding="o200k_base") == o200k
    assert count_text_tokens(text, encoding="cl100k_base") == cl100k


def test_special_token_text_is_counted_as_plain_text():
    assert count_text_tokens("<|endoftext|>") == 7


def test_cookbook_example_matches_openai_api_counts():
    # The OpenAI cookbook's example, whose counts it checks against the API:
    # 129 prompt tokens for gpt-4 / gpt-3.5-turbo (cl100k_base), 124 for gpt-4o (o200k_base).
    messages = [
        {
            "role": "system",
            "content": "You are a helpful, pattern-following assistant that translates "
            "corporate jargon into plain English.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "New synergies will help drive top-line growth.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Things working well together will increase revenue.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "Let's circle back when we have more bandwidth to touch base on "
            "opportunities for increased leverage.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Let's talk later when we're less busy about how to do better.",
        },
        {
            "role": "user",
            "content": "This late pivot means we don't have time to boil the ocean for the "
            "client deliverable.",
        },
    ]
    assert count_messages_tokens(messages, encoding="cl100k_base") == 129
    assert count_messages_tokens(messages, encoding="o200k_base") == 124


def test_count_message_tokens_parts():
    # 3 overhead + "user" (1) + "Hello world" (2)
    assert count_message_tokens(user("Hello world")) == 6
    assert count_messages_tokens([user("Hello world")]) == 9
    named = {"role": "user", "content": "Hello world", "name": "alice"}
    assert count_message_tokens(named) == 6 + count_text_tokens("alice") + 1
    image = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Hello world"},
            {"type": "image_url", "image_url": {"url": "https://x.test/cat.png"}},
        ],
    }
    assert count_message_tokens(image) == 6 + 85
    calls = assistant_calls("call_1", "call_2")
    per_call = 3 + count_text_tokens("get_weather") + count_text_tokens('{"city": "Paris"}')
    assert count_message_tokens(calls) == 3 + count_text_tokens("assistant") + 2 * per_call
    tool = result("call_1", "Hello world")
    expected = 3 + count_text_tokens("tool") + 2 + count_text_tokens("call_1")
    assert count_message_tokens(tool) == expected


def test_heuristic_estimates_close_to_bpe():
    prose = (
        "Memory for agents keeps the newest messages, packs tool calls with their results, "
        "and never splits a group. It is measured in tokens, not characters. " * 5
    )
    real = count_text_tokens(prose)
    estimate = count_text_tokens(prose, encoding=HEURISTIC)
    assert abs(estimate - real) <= real * 0.25
    assert count_text_tokens("", encoding=HEURISTIC) == 0
    # Non-ASCII text is not under-counted the way bytes/4 would for CJK.
    cjk = "快速的棕色狐狸跳过了懒狗。那天阳光明媚每个人都很高兴。"
    assert count_text_tokens(cjk, encoding=HEURISTIC) >= count_text_tokens(cjk) * 0.9
    assert count_message_tokens(user("Hello world"), encoding=HEURISTIC) > 3


@pytest.fixture
def fresh_encoders() -> Iterator[None]:
    _token_counter.cache_clear()
    yield
    _token_counter.cache_clear()


def test_unknown_encoding_falls_back_to_heuristic(fresh_encoders, caplog):
    text = "Unknown encodings are estimated, and the estimate is logged once."
    with caplog.at_level(logging.WARNING, logger="ttmemory.conversation.tokens"):
        assert count_text_tokens(text, encoding="no_such_base") == count_text_tokens(
            text, encoding=HEURISTIC
        )
        count_text_tokens(text, encoding="no_such_base")
    assert sum("no_such_base" in r.getMessage() for r in caplog.records) == 1


def test_missing_bpe_openai_falls_back_to_heuristic(fresh_encoders, monkeypatch):
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # makes the import fail
    text = "The quick brown fox jumps over the lazy dog."
    assert count_text_tokens(text) == count_text_tokens(text, encoding=HEURISTIC)


def test_a_text_longer_than_the_encoder_limit_is_counted_in_pieces() -> None:
    one = conversation.count_text_tokens("word " * 1000, encoding="o200k_base")
    many = conversation.count_text_tokens("word " * 300_000, encoding="o200k_base")

    assert 299 * one <= many <= 301 * one
    assert conversation.count_text_tokens("é" * 600_000, encoding="o200k_base") > 0


def test_supported_encodings_lists_the_bundled_vocabularies() -> None:
    names = conversation.supported_encodings()

    assert {"o200k_base", "cl100k_base", conversation.HEURISTIC} <= names
