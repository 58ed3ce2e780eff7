"""OpenAIChatLLM: any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from ttmemory.backends.llm.base import LLM, LLMResponse
from ttmemory.backends.openai_http import OpenAIHTTPClient, RequestCount, is_int, is_number
from ttmemory.exceptions import LLMError

logger = logging.getLogger(__name__)


class OpenAIChatLLM(LLM):
    """Completions from an OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

    Options (``TTMEMORY["LLM"]["OPTIONS"]``):

    - ``model`` (required): the model name the server knows, recorded in the ledger.
    - ``base_url`` ("https://api.openai.com/v1"): e.g. "http://localhost:11434/v1" for Ollama.
    - ``api_key``, else the environment variable named by ``api_key_env`` ("OPENAI_API_KEY");
      a server that needs no key gets no ``Authorization`` header. The key is never logged and
      never appears in an error message.
    - ``timeout`` (30): seconds per HTTP request. A timeout is not retried.
    - ``max_retries`` (2): retries of HTTP 429, 5xx and connection errors, with exponential
      backoff and jitter from ``retry_backoff`` (0.5 s); a ``Retry-After`` header is honoured
      up to ``max_retry_wait`` (20 s), beyond that the call fails at once. Other 4xx are never
      retried.
    - ``deadline`` (120): seconds for the whole call, retries and waits included (None: no
      bound). A retry whose wait would end past it is not made.
    - ``temperature`` (0.0, from 0 to 2) and ``max_tokens`` (1024): sent with every request.
    - ``send_response_format`` (True): with ``json_object=True``, also send
      ``response_format: {"type": "json_object"}``. Turn it off for servers that reject it; the
      answer is parsed loosely (code fences, prose) either way.

    ``complete`` returns the text of ``choices[0].message.content`` with the usage the server
    reports (0 when it reports none) and the latency of the call, retries included. Any
    failure (HTTP status, no or empty content, a content filter) raises ``LLMError`` with the
    HTTP status and the server's message; answers are never quoted in errors.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 30.0,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        max_retry_wait: float = 20.0,
        deadline: float | None = 120.0,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        send_response_format: bool = True,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise TypeError("OpenAIChatLLM: 'model' must be the server's model name")
        if not is_number(temperature) or not 0 <= temperature <= 2:
            raise TypeError("OpenAIChatLLM: 'temperature' must be a number from 0 to 2")
        if not is_int(max_tokens) or max_tokens < 1:
            raise TypeError("OpenAIChatLLM: 'max_tokens' must be a positive whole number")
        if not isinstance(send_response_format, bool):
            raise TypeError("OpenAIChatLLM: 'send_response_format' must be True or False")
        self.model = model.strip()
        self.http = OpenAIHTTPClient(
            owner="OpenAIChatLLM",
            model=self.model,
            path="chat/completions",
            error=LLMError,
            base_url=base_url,
            api_key=api_key,
            api_key_env=api_key_env,
            timeout=timeout,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            max_retry_wait=max_retry_wait,
            deadline=deadline,
            log=logger,
        )
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.send_response_format = send_response_format

    def close(self) -> None:
        """Close the pooled HTTP connections (called when settings change)."""
        self.http.close()

    def __repr__(self) -> str:
        return f"OpenAIChatLLM(model={self.model!r}, url={self.http.display_url!r})"

    def request_body(
        self, messages: list[dict[str, Any]], *, json_object: bool = False
    ) -> dict[str, Any]:
        """The JSON body of one request (pinned by tests/golden/chat_*_request.json)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(message) for message in messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if json_object and self.send_response_format:
            body["response_format"] = {"type": "json_object"}
        return body

    def complete(self, messages: list[dict[str, Any]], *, json_object: bool = False) -> LLMResponse:
        """The completion of ``messages``; ``LLMError`` on any failure (after the retries)."""
        if (
            not isinstance(messages, list)
            or not messages
            or not all(isinstance(m, Mapping) for m in messages)
        ):
            raise self.http.fail("'messages' must be a non-empty list of message objects")
        started = time.monotonic()
        count = RequestCount()
        payload = self.http.post(
            self.request_body(messages, json_object=json_object), expect="choices", count=count
        )
        text = self._content(payload)
        usage = payload.get("usage")
        usage = usage if isinstance(usage, Mapping) else {}
        prompt_tokens, completion_tokens = (
            int(usage[name]) if is_int(usage.get(name)) and usage[name] >= 0 else 0
            for name in ("prompt_tokens", "completion_tokens")
        )
        latency_ms = (time.monotonic() - started) * 1000
        logger.debug(
            "%s: %d requests, %d + %d tokens, %.0f ms",
            self.http.who,
            count.requests,
            prompt_tokens,
            completion_tokens,
            latency_ms,
        )
        return LLMResponse(
            text=text,
            model=self.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=latency_ms,
        )

    def _content(self, payload: dict[str, Any]) -> str:
        """``choices[0].message.content``, checked; never quoted in errors (it is user data)."""
        choices = payload["choices"]
        choice = choices[0] if choices else None
        if not isinstance(choice, dict):
            raise self.http.fail("the response has no choices")
        finish = choice.get("finish_reason")
        if finish == "content_filter":
            raise self.http.fail(
                "the answer was withheld by the server's content filter "
                "(finish_reason='content_filter')"
            )
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or not content.strip():
            if isinstance(message, dict) and message.get("refusal"):
                raise self.http.fail("the model refused to answer (choices[0].message.refusal)")
            raise self.http.fail(
                f"choices[0].message.content is empty or not a string "
                f"(got {type(content).__name__}, finish_reason={finish!r})"
            )
        if finish == "length":
            logger.warning(
                "%s: the answer was cut at max_tokens=%d", self.http.who, self.max_tokens
            )
        return content
