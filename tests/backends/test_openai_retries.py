"""Retries of the OpenAI-compatible backends against the strict fake: what the server asks for
(``Retry-After``), what is retried (429, 5xx) and the total deadline that bounds a call."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.backends.test_embedders import TEXTS, embedder_for
from tests.backends.test_llm import llm_for
from tests.conftest import user
from tests.fakes.openai_server import FakeOpenAI
from ttmemory.exceptions import EmbeddingError, LLMError


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def test_a_429_waits_what_retry_after_asks(fake: FakeOpenAI) -> None:
    fake.fail_next(429, retry_after="2")
    started = time.monotonic()

    embedder_for(fake, retry_backoff=0.01).embed(TEXTS)

    assert len(fake.requests) == 2
    # The backoff alone would wait about 0.01 s: the server's 2 s were honoured.
    assert time.monotonic() - started >= 1.95


def test_a_429_waits_what_retry_after_ms_asks(fake: FakeOpenAI) -> None:
    fake.respond_next(
        {"error": {"message": "Rate limit", "type": "rate_limit_exceeded"}},
        status=429,
        headers={"retry-after-ms": "1200"},
    )
    started = time.monotonic()

    embedder_for(fake).embed(TEXTS)

    assert len(fake.requests) == 2
    assert time.monotonic() - started >= 1.15


def test_a_503_is_retried_and_the_answer_returned(fake: FakeOpenAI) -> None:
    fake.fail_next(503, message="The engine is currently overloaded")
    fake.chat_reply("fine")

    assert llm_for(fake).complete([user("hi")]).text == "fine"
    assert len(fake.requests) == 2


def test_without_retries_the_503_is_the_answer(fake: FakeOpenAI) -> None:
    fake.fail_next(503, message="The engine is currently overloaded")
    fake.chat_reply("fine")

    with pytest.raises(LLMError, match="HTTP 503: The engine is currently overloaded"):
        llm_for(fake, max_retries=0).complete([user("hi")])
    assert len(fake.requests) == 1


def test_the_deadline_stops_retries_whose_wait_would_pass_it(fake: FakeOpenAI) -> None:
    # Ten retries allowed, each after the 2 s the server asks: the 3 s deadline leaves room
    # for one retry (at about 2 s), not for a second (at about 4 s).
    fake.fail_next(503, count=10, retry_after="2", message="The engine is currently overloaded")

    with pytest.raises(EmbeddingError, match=r"HTTP 503: .*overloaded \(no retry fits in dead"):
        embedder_for(fake, max_retries=10, deadline=3).embed(TEXTS)

    assert len(fake.requests) == 2


def test_the_deadline_cuts_a_slow_answer(fake: FakeOpenAI) -> None:
    fake.delay_next(6.0)
    embedder = embedder_for(fake, timeout=10, deadline=1)
    started = time.monotonic()

    with pytest.raises(EmbeddingError, match=r"no answer within deadline=1s"):
        embedder.embed(TEXTS)

    assert len(fake.requests) == 1
    assert time.monotonic() - started < 5  # well before the 6 s answer or the 10 s timeout


def test_no_deadline_lets_every_retry_run(fake: FakeOpenAI) -> None:
    fake.fail_next(503, count=3)

    embedder_for(fake, max_retries=3, deadline=None).embed(TEXTS)

    assert len(fake.requests) == 4


@pytest.mark.parametrize("deadline", [0, -1, "30", True])
def test_a_bad_deadline_is_refused(fake: FakeOpenAI, deadline: object) -> None:
    with pytest.raises(TypeError, match="'deadline' must be a positive number"):
        embedder_for(fake, deadline=deadline)
    with pytest.raises(TypeError, match="'deadline' must be a positive number"):
        llm_for(fake, deadline=deadline)
