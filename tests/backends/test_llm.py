"""OpenAIChatLLM against a strict fake Chat Completions server, alone and behind facts_learn."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.conftest import assistant, user
from tests.fakes import FakeOpenAI
from ttmemory.backends import load_backend
from ttmemory.backends.llm import LLM, OpenAIChatLLM
from ttmemory.exceptions import LLMError
from ttmemory.longterm.extraction import (
    EXTRACTION_SYSTEM_PROMPT,
    extraction_messages,
    parse_extraction,
    summary_messages,
)
from ttmemory.models import Fact, LedgerEntry
from ttmemory.services.learning import facts_learn

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
MODEL = "gpt-4o-mini"
CHAT = "/v1/chat/completions"
# The fixed input of the golden requests.
NEW_MESSAGES = [
    user("Hi, I'm Ada. I'm allergic to peanuts."),
    assistant("Noted, Ada."),
    user("I moved to Porto last month."),
]
EXISTING = [(12, "The user lives in Lisbon")]
EXTRACTED = {
    "facts": [
        {"action": "ADD", "text": "The user is allergic to peanuts", "kind": "fact"},
        {"action": "ADD", "text": "The user prefers window seats", "kind": "preference"},
    ]
}
# What chat models really answer, even in JSON mode now and then: prose around a code fence.
FENCED_ANSWER = f"Here is what I found:\n```json\n{json.dumps(EXTRACTED)}\n```\nAnything else?"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def llm_for(fake: FakeOpenAI, **options: Any) -> OpenAIChatLLM:
    """An LLM on the fake with fast retries."""
    settings: dict[str, Any] = {
        "base_url": fake.base_url,
        "api_key": fake.api_key,
        "model": MODEL,
        "retry_backoff": 0.01,
    }
    settings.update(options)
    return OpenAIChatLLM(**settings)


def golden(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((GOLDEN / name).read_text())
    return body


def wire(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


# -- wire format -----------------------------------------------------------------------------


def test_the_extraction_request_matches_the_golden_sample(fake: FakeOpenAI) -> None:
    fake.chat_reply(json.dumps(EXTRACTED))

    llm_for(fake).complete(extraction_messages(NEW_MESSAGES, EXISTING), json_object=True)

    [request] = fake.requests
    assert (request.method, request.path) == ("POST", CHAT)
    assert request.body == wire(golden("chat_extract_request.json"))
    assert request.headers["authorization"] == f"Bearer {fake.api_key}"
    assert request.headers["content-type"] == "application/json"


def test_the_summary_request_matches_the_golden_sample(fake: FakeOpenAI) -> None:
    fake.chat_reply("Ada, allergic to peanuts, moved to Porto and plans a trip to Oslo.")
    previous = "Ada is planning a trip to Oslo."

    llm_for(fake).complete(summary_messages(previous, NEW_MESSAGES, max_words=140))

    assert fake.requests[0].body == wire(golden("chat_summary_request.json"))


def test_an_answer_comes_back_with_its_usage_and_latency(fake: FakeOpenAI) -> None:
    fake.chat_reply("Ada lives in Porto.", usage={"prompt_tokens": 42, "completion_tokens": 6})

    response = llm_for(fake).complete([user("Where does Ada live?")])

    assert response.text == "Ada lives in Porto."
    assert (response.model, response.prompt_tokens, response.completion_tokens) == (MODEL, 42, 6)
    assert response.latency_ms > 0


def test_json_object_false_or_send_response_format_off_sends_no_response_format(
    fake: FakeOpenAI,
) -> None:
    request = extraction_messages(NEW_MESSAGES, EXISTING)
    fake.chat_reply("{}")
    fake.chat_reply("{}")
    fake.chat_reply("{}")

    llm_for(fake).complete(request, json_object=False)
    llm_for(fake, send_response_format=False).complete(request, json_object=True)
    llm_for(fake, temperature=0.7, max_tokens=50).complete(request, json_object=True)

    first, second, third = (r.json for r in fake.requests)
    assert "response_format" not in first and "response_format" not in second
    assert third["response_format"] == {"type": "json_object"}
    assert (third["temperature"], third["max_tokens"]) == (0.7, 50)


def test_missing_usage_counts_as_zero_tokens(fake: FakeOpenAI) -> None:
    fake.respond_next({"choices": [{"index": 0, "message": {"content": "ok"}}]})

    response = llm_for(fake).complete([user("hi")])

    assert (response.text, response.prompt_tokens, response.completion_tokens) == ("ok", 0, 0)


# -- failures and retries --------------------------------------------------------------------


def test_an_unknown_model_is_an_llm_error_naming_it_after_one_request(fake: FakeOpenAI) -> None:
    with pytest.raises(LLMError) as caught:
        llm_for(fake, model="gpt-9-imaginary").complete([user("hi")])

    assert "HTTP 400" in str(caught.value)
    assert "The model `gpt-9-imaginary` does not exist" in str(caught.value)
    assert len(fake.requests) == 1


def test_a_server_error_is_retried_then_succeeds(fake: FakeOpenAI) -> None:
    fake.fail_next(500)
    fake.chat_reply("fine")

    assert llm_for(fake).complete([user("hi")]).text == "fine"
    assert len(fake.requests) == 2
    assert not fake.chat_replies  # the failure used up no reply


def test_rate_limits_honour_retry_after(fake: FakeOpenAI) -> None:
    fake.fail_next(429, retry_after="1")
    fake.chat_reply("fine")
    started = time.monotonic()

    response = llm_for(fake).complete([user("hi")])

    assert len(fake.requests) == 2
    assert time.monotonic() - started >= 0.95  # the backoff alone would be ~0.01 s
    assert response.latency_ms >= 950  # latency covers the retries


def test_a_400_is_not_retried(fake: FakeOpenAI) -> None:
    fake.fail_next(400, message="Invalid 'messages[0].content': string too long")
    fake.chat_reply("never sent")

    with pytest.raises(LLMError, match=r"HTTP 400: Invalid 'messages\[0\]\.content'"):
        llm_for(fake).complete([user("hi")])

    assert len(fake.requests) == 1


def test_retries_stop_after_max_retries(fake: FakeOpenAI) -> None:
    fake.fail_next(503, count=5, message="The engine is currently overloaded")

    with pytest.raises(LLMError, match="HTTP 503: The engine is currently overloaded"):
        llm_for(fake, max_retries=1).complete([user("hi")])

    assert len(fake.requests) == 2


def test_a_timeout_is_an_llm_error_and_is_not_retried(fake: FakeOpenAI) -> None:
    fake.delay_next(3.0)
    fake.chat_reply("too late")
    started = time.monotonic()

    with pytest.raises(LLMError, match=r"no answer within timeout=0\.3s"):
        llm_for(fake, timeout=0.3).complete([user("hi")])

    assert time.monotonic() - started < 2.0
    assert len(fake.requests) == 1


def choice(message: Any, finish_reason: str = "stop") -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>Bad gateway</html>", "not JSON"),
        ({"object": "chat.completion"}, "no 'choices' list"),
        ({"choices": []}, "has no choices"),
        (choice({"role": "assistant", "content": ""}), "content is empty or not a string"),
        (choice({"role": "assistant", "content": None}), "content is empty or not a string"),
        (choice({"role": "assistant", "content": [{"type": "text"}]}), "not a string"),
        (choice({"role": "assistant"}), "content is empty or not a string"),
        (choice({"content": None, "refusal": "I can't help with that."}), "refused"),
        (choice({"content": "The user is"}, "content_filter"), "content filter"),
    ],
)
def test_malformed_answers_are_llm_errors(fake: FakeOpenAI, body: Any, message: str) -> None:
    fake.respond_next(body)

    with pytest.raises(LLMError, match=message) as caught:
        llm_for(fake).complete([user("hi")])

    assert "The user is" not in str(caught.value)  # answers are never quoted


def test_messages_must_be_a_list_of_objects_before_any_request(fake: FakeOpenAI) -> None:
    for bad in ([], "hi", [None]):
        with pytest.raises(LLMError, match="non-empty list of message objects"):
            llm_for(fake).complete(bad)  # type: ignore[arg-type]

    assert fake.requests == []


# -- the key ---------------------------------------------------------------------------------


def test_the_api_key_never_appears_in_errors_logs_or_repr(
    fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "sk-wrong-0123456789abcdef"
    caplog.set_level(logging.DEBUG)

    with pytest.raises(LLMError) as caught:
        llm_for(fake, api_key=wrong).complete([user("hi")])

    # The fake echoes the key in its 401 message; the client redacts it.
    assert "HTTP 401: Incorrect API key provided: [redacted]" in str(caught.value)
    assert len(fake.requests) == 1

    good = llm_for(fake)
    fake.fail_next(500, message=f"upstream said {fake.api_key}")
    fake.fail_next(400, message=f"bad key {fake.api_key}")
    with pytest.raises(LLMError) as second:
        good.complete([user("hi")])
    assert "bad key [redacted]" in str(second.value)
    for text in (str(caught.value), str(second.value), caplog.text, repr(good)):
        assert fake.api_key not in text and wrong not in text


def test_the_key_can_come_from_an_environment_variable(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTM_TEST_CHAT_KEY", fake.api_key)
    fake.chat_reply("ok")

    llm_for(fake, api_key=None, api_key_env="TTM_TEST_CHAT_KEY").complete([user("hi")])

    assert fake.requests[0].headers["authorization"] == f"Bearer {fake.api_key}"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "model"),
        ({"model": " "}, "model"),
        ({"model": MODEL, "base_url": "localhost:11434"}, "base_url"),
        ({"model": MODEL, "temperature": 3}, "temperature"),
        ({"model": MODEL, "max_tokens": 0}, "max_tokens"),
        ({"model": MODEL, "send_response_format": "yes"}, "send_response_format"),
        ({"model": MODEL, "timeout": 0}, "timeout"),
        ({"model": MODEL, "max_retries": -1}, "max_retries"),
        ({"model": MODEL, "dimensions": 8}, "dimensions"),
        ({"model": MODEL, "api_key_env": "TTM_NO_SUCH_KEY"}, "no API key for api.openai.com"),
    ],
)
def test_bad_options_are_improperly_configured_naming_the_setting(
    options: dict[str, Any], message: str
) -> None:
    config = {"BACKEND": "ttmemory.backends.llm.OpenAIChatLLM", "OPTIONS": options}

    with pytest.raises(ImproperlyConfigured, match=message) as caught:
        load_backend("LLM", config, base=LLM)

    assert "TTMEMORY['LLM']" in str(caught.value)


# -- the fake is strict ----------------------------------------------------------------------


def post(fake: FakeOpenAI, body: Any, *, key: str | None = None) -> tuple[int, Any]:
    return fake.post("chat/completions", body, key=key)


HI = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"model": MODEL, "messages": HI}, 401, "You didn't provide an API key"),
        ({"messages": HI}, 400, "you must provide a model parameter"),
        ({"model": MODEL}, 400, "Missing required parameter: 'messages'"),
        ({"model": MODEL, "messages": []}, 400, "empty array"),
        ({"model": MODEL, "messages": "hi"}, 400, "Invalid type for 'messages'"),
        ({"model": MODEL, "messages": ["hi"]}, 400, "Invalid type for 'messages[0]'"),
        ({"model": MODEL, "messages": [{"content": "hi"}]}, 400, "'messages[0].role'"),
        ({"model": MODEL, "messages": [{"role": "robot", "content": "x"}]}, 400, "'robot'"),
        ({"model": MODEL, "messages": [{"role": "user"}]}, 400, "'messages[0].content'"),
        ({"model": MODEL, "messages": [{"role": "user", "content": 7}]}, 400, "got an integer"),
        ({"model": MODEL, "messages": [{"role": "user", "content": "x", "x": 1}]}, 400, "'x'"),
        ({"model": MODEL, "messages": HI, "temperature": "0"}, 400, "'temperature'"),
        ({"model": MODEL, "messages": HI, "temperature": 2.5}, 400, "'temperature'"),
        ({"model": MODEL, "messages": HI, "max_tokens": 1.5}, 400, "'max_tokens'"),
        ({"model": MODEL, "messages": HI, "max_tokens": True}, 400, "'max_tokens'"),
        ({"model": MODEL, "messages": HI, "functions": []}, 400, "Unrecognized request argument"),
        ({"model": MODEL, "messages": HI, "stream": True}, 400, "does not stream"),
        ({"model": MODEL, "messages": HI, "response_format": {"type": "xml"}}, 400, "'xml'"),
        (
            {"model": MODEL, "messages": HI, "response_format": {"type": "json_object"}},
            400,
            "must contain the word 'json'",
        ),
    ],
)
def test_the_fake_rejects_what_openai_rejects(
    fake: FakeOpenAI, body: dict[str, Any], status: int, message: str
) -> None:
    fake.chat_reply("never sent")
    key = None if status == 401 else fake.api_key

    got_status, payload = post(fake, body, key=key)

    assert got_status == status
    assert message in payload["error"]["message"]
    assert set(payload["error"]) == {"message", "type", "param", "code"}
    assert len(fake.chat_replies) == 1  # a rejected request uses up no reply


def test_the_fake_names_an_unknown_model_like_openai(fake: FakeOpenAI) -> None:
    status, payload = post(fake, {"model": "gpt-x", "messages": HI}, key=fake.api_key)

    assert status == 400
    assert payload["error"]["type"] == "invalid_request_error"
    assert payload["error"]["code"] == "model_not_found"
    assert payload["error"]["param"] == "model"


def test_the_fake_invents_nothing(fake: FakeOpenAI) -> None:
    with pytest.raises(LLMError, match="no scripted chat reply left"):
        llm_for(fake).complete([user("hi")])

    assert len(fake.requests) == 1  # a 400: not retried


def test_the_required_system_prompt_passes_the_extraction_prompt_only(fake: FakeOpenAI) -> None:
    fake.require_system_prompt(EXTRACTION_SYSTEM_PROMPT)
    fake.chat_reply(json.dumps(EXTRACTED))
    llm = llm_for(fake)

    answer = llm.complete(extraction_messages(NEW_MESSAGES, EXISTING), json_object=True)
    wrong_prompt = [{"role": "system", "content": "You are a pirate."}, user("hi")]
    with pytest.raises(LLMError, match=r"HTTP 400: .*not the required system prompt"):
        llm.complete(wrong_prompt)
    with pytest.raises(LLMError, match=r"HTTP 400: .*not the required system prompt"):
        llm.complete([user("hi")])

    assert [c.text for c in parse_extraction(answer.text, known_ids=set())] == [
        "The user is allergic to peanuts",
        "The user prefers window seats",
    ]
    assert len(fake.requests) == 3


# -- behind facts_learn ----------------------------------------------------------------------


@pytest.fixture
def chat_llm(settings: Any, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    """TTMEMORY["LLM"] is OpenAIChatLLM on the fake, which insists on the extraction prompt."""
    monkeypatch.setenv("TTM_TEST_OPENAI_KEY", fake.api_key)
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "LLM": {
            "BACKEND": "ttmemory.backends.llm.OpenAIChatLLM",
            "OPTIONS": {
                "base_url": fake.base_url,
                "api_key_env": "TTM_TEST_OPENAI_KEY",
                "model": MODEL,
                "retry_backoff": 0.01,
            },
        },
    }
    fake.require_system_prompt(EXTRACTION_SYSTEM_PROMPT)
    return fake


def learned(namespace: str) -> list[tuple[str, str]]:
    return sorted(Fact.objects.current().filter(namespace=namespace).values_list("text", "kind"))


def ledger(namespace: str) -> list[tuple[Any, ...]]:
    return list(
        LedgerEntry.objects.filter(namespace=namespace)
        .order_by("pk")
        .values_list("purpose", "model", "status", "prompt_tokens", "completion_tokens")
    )


def test_facts_learn_stores_facts_from_a_fenced_answer(db: Any, chat_llm: FakeOpenAI) -> None:
    chat_llm.chat_reply(FENCED_ANSWER, usage={"prompt_tokens": 321, "completion_tokens": 45})

    changes = facts_learn(namespace="user-l", messages=[user("I'm allergic to peanuts")])

    assert [c.action for c in changes] == ["ADD", "ADD"]
    assert learned("user-l") == [
        ("The user is allergic to peanuts", "fact"),
        ("The user prefers window seats", "preference"),
    ]
    [request] = chat_llm.requests
    assert request.json["model"] == MODEL
    assert request.json["response_format"] == {"type": "json_object"}
    assert ledger("user-l") == [("extract", MODEL, "ok", 321, 45)]


def test_a_vendor_500_then_success_learns_each_fact_once(db: Any, chat_llm: FakeOpenAI) -> None:
    chat_llm.fail_next(500)
    chat_llm.chat_reply(FENCED_ANSWER, usage={"prompt_tokens": 300, "completion_tokens": 40})

    changes = facts_learn(namespace="user-r", messages=[user("I'm allergic to peanuts")])

    assert len(chat_llm.requests) == 2
    assert [c.action for c in changes] == ["ADD", "ADD"]
    assert len(learned("user-r")) == 2
    assert Fact.objects.filter(namespace="user-r").count() == 2
    # The retry happened inside one call: one ledger row, ok, with the answer's usage.
    assert ledger("user-r") == [("extract", MODEL, "ok", 300, 40)]


def test_a_vendor_that_keeps_failing_raises_and_records_one_error(
    db: Any, chat_llm: FakeOpenAI
) -> None:
    chat_llm.fail_next(500, count=3)

    with pytest.raises(LLMError, match="HTTP 500"):
        facts_learn(namespace="user-f", messages=[user("I'm allergic to peanuts")])

    assert len(chat_llm.requests) == 3
    assert learned("user-f") == []
    assert [row[2] for row in ledger("user-f")] == ["error"]
