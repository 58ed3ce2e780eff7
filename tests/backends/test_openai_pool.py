"""The OpenAI-compatible backends keep their connections open (pooled httpx), like an SDK."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.backends.test_embedders import embedder_for
from tests.backends.test_llm import llm_for
from tests.fakes.openai_server import FakeOpenAI

WAIT = 15.0


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(keep_alive=True) as server:
        yield server


def peers(fake: FakeOpenAI, path: str) -> list[tuple[str, int]]:
    return [request.peer for request in fake.requests_to(path)]


def test_embedding_calls_share_one_kept_alive_connection(fake: FakeOpenAI) -> None:
    embedder = embedder_for(fake)
    for n in range(5):
        assert len(embedder.embed([f"text {n}"])[0]) == 64

    assert len(peers(fake, "/v1/embeddings")) == 5
    assert len(set(peers(fake, "/v1/embeddings"))) == 1

    embedder.close()  # settings changed: the pool goes, the next call opens a new connection
    embedder.embed(["again"])
    assert len(set(peers(fake, "/v1/embeddings"))) == 2


def test_llm_calls_share_one_kept_alive_connection(fake: FakeOpenAI) -> None:
    llm = llm_for(fake)
    for _ in range(3):
        fake.chat_reply('{"facts": []}')
        llm.complete([{"role": "user", "content": "hello"}])

    assert len(set(peers(fake, "/v1/chat/completions"))) == 1


def test_a_retried_5xx_keeps_the_connection_and_the_key_stays_redacted(fake: FakeOpenAI) -> None:
    embedder = embedder_for(fake)
    fake.fail_next(500)
    embedder.embed(["retried"])

    assert len(set(peers(fake, "/v1/embeddings"))) == 1
    assert embedder.last_requests == 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_opens_its_own_connection(fake: FakeOpenAI) -> None:
    embedder = embedder_for(fake)
    embedder.embed(["parent"])
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            embedder.embed(["child"])
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + WAIT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child did not finish")
        time.sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == 0
    embedder.embed(["parent again"])  # the parent's connection was not disturbed

    parent, child, again = peers(fake, "/v1/embeddings")
    assert child != parent and again == parent
