"""OpenAIEmbedder: any OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM), pooled."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ttmemory.backends.embedders.base import Embedder
from ttmemory.backends.openai_http import OpenAIHTTPClient, RequestCount, is_int, is_number
from ttmemory.exceptions import EmbeddingError

logger = logging.getLogger(__name__)

MAX_INPUTS_PER_REQUEST = 2048  # OpenAI's limit on the length of ``input``


class OpenAIEmbedder(Embedder):
    """Vectors from an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

    Options (``TTMEMORY["EMBEDDER"]["OPTIONS"]``):

    - ``model`` (required): the model name the server knows, stored with every vector.
    - ``dimensions`` (required): the length of the vectors the model returns (1536 for
      ``text-embedding-3-small``, 768 for Ollama's ``nomic-embed-text``, ...).
    - ``send_dimensions`` (False): also send ``dimensions`` in the request, asking a model that
      supports it (OpenAI's ``text-embedding-3-*``) for shortened vectors.
    - ``base_url`` ("https://api.openai.com/v1"): e.g. "http://localhost:11434/v1" for Ollama.
    - ``api_key``, else the environment variable named by ``api_key_env`` ("OPENAI_API_KEY");
      a server that needs no key gets no ``Authorization`` header. The key is never logged and
      never appears in an error message.
    - ``timeout`` (10): seconds per HTTP request. A timeout is not retried.
    - ``batch_size`` (64): texts per request.
    - ``max_retries`` (2): retries of HTTP 429, 5xx and connection errors, with exponential
      backoff and jitter from ``retry_backoff`` (0.5 s); a ``Retry-After`` header is honoured
      up to ``max_retry_wait`` (20 s), beyond that the call fails at once. Other 4xx are never
      retried.
    - ``deadline`` (30): seconds for one request (a batch), retries and waits included (None:
      no bound). A retry whose wait would end past it is not made.

    ``embed`` (and ``embed_with_usage``, which also returns the prompt tokens the server
    reported) checks the response (one embedding per input, in ``index`` order, floats of
    ``dimensions`` length), returns unit vectors and records ``last_usage`` (token counts),
    ``last_latency`` (seconds) and ``last_requests`` (HTTP requests, retries included) of the
    call. Any failure raises ``EmbeddingError`` with the HTTP status and the server's message.
    HTTP, retries and key redaction live in ``ttmemory.backends.openai_http``.
    """

    def __init__(
        self,
        *,
        model: str,
        dimensions: int,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        send_dimensions: bool = False,
        timeout: float = 10.0,
        batch_size: int = 64,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        max_retry_wait: float = 20.0,
        deadline: float | None = 30.0,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise TypeError("OpenAIEmbedder: 'model' must be the server's model name")
        if not is_int(dimensions) or not 1 <= dimensions <= 65536:
            raise TypeError("OpenAIEmbedder: 'dimensions' must be a positive whole number")
        if not isinstance(send_dimensions, bool):
            raise TypeError("OpenAIEmbedder: 'send_dimensions' must be True or False")
        if not is_int(batch_size) or not 1 <= batch_size <= MAX_INPUTS_PER_REQUEST:
            raise TypeError(
                f"OpenAIEmbedder: 'batch_size' must be from 1 to {MAX_INPUTS_PER_REQUEST}"
            )
        self.model = model.strip()
        self.http = OpenAIHTTPClient(
            owner="OpenAIEmbedder",
            model=self.model,
            path="embeddings",
            error=EmbeddingError,
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
        self.dimensions = dimensions
        self.send_dimensions = send_dimensions
        self.batch_size = batch_size
        self.billable = True
        self.last_usage: dict[str, int] = {}
        self.last_latency: float = 0.0
        self.last_requests: int = 0

    def close(self) -> None:
        """Close the pooled HTTP connections (called when settings change)."""
        self.http.close()

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbedder(model={self.model!r}, dimensions={self.dimensions}, "
            f"url={self.http.display_url!r})"
        )

    def request_body(self, texts: Sequence[str]) -> dict[str, Any]:
        """The JSON body of one request (pinned by tests/golden/embeddings_request*.json)."""
        body: dict[str, Any] = {
            "model": self.model,
            "input": list(texts),
            "encoding_format": "float",
        }
        if self.send_dimensions:
            body["dimensions"] = self.dimensions
        return body

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order; ``EmbeddingError`` on any failure."""
        return self.embed_with_usage(texts)[0]

    def embed_with_usage(self, texts: Sequence[str]) -> tuple[list[list[float]], int]:
        """``embed``, and the prompt tokens the server reported for the whole call."""
        texts = list(texts)
        for position, text in enumerate(texts):
            if not isinstance(text, str) or not text:
                raise self.http.fail(
                    f"text {position} is empty or not a string; embedding servers reject empty "
                    "input"
                )
        started = time.monotonic()
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        count = RequestCount()
        vectors: list[list[float]] = []
        try:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                payload = self.http.post(self.request_body(batch), expect="data", count=count)
                vectors.extend(self._parse(payload, len(batch)))
                reported = payload.get("usage")
                if isinstance(reported, Mapping):
                    for name in usage:
                        if is_int(reported.get(name)):
                            usage[name] += int(reported[name])
        finally:
            # Read by callers (a cost ledger); one embedder serves many threads, last call wins.
            self.last_latency = time.monotonic() - started
            self.last_usage = usage
            self.last_requests = count.requests
        logger.debug(
            "%s: %d texts, %d requests, %d tokens, %.3fs",
            self.http.who,
            len(texts),
            count.requests,
            usage["prompt_tokens"],
            self.last_latency,
        )
        return vectors, usage["prompt_tokens"] or usage["total_tokens"]

    # -- responses -------------------------------------------------------------------------

    def _parse(self, payload: dict[str, Any], expected: int) -> list[list[float]]:
        items = payload["data"]
        if len(items) != expected:
            raise self.http.fail(f"{len(items)} embeddings returned for {expected} inputs")
        vectors: list[list[float] | None] = [None] * expected
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.http.fail(f"data[{position}] is not an object")
            index = item.get("index", position)
            if not is_int(index) or not 0 <= index < expected or vectors[index] is not None:
                raise self.http.fail(
                    f"data[{position}] has a missing, repeated or out-of-range index {index!r}"
                )
            vectors[index] = self._unit(item.get("embedding"), index)
        return [vector for vector in vectors if vector is not None]

    def _unit(self, embedding: Any, index: int) -> list[float]:
        if not isinstance(embedding, list):
            raise self.http.fail(
                f"embedding {index} is not a list of floats (got {type(embedding).__name__})"
            )
        if len(embedding) != self.dimensions:
            raise self.http.fail(
                f"embedding {index} has {len(embedding)} dimensions, expected "
                f"{self.dimensions} (check the 'dimensions' option)"
            )
        if not all(is_number(v) for v in embedding):
            raise self.http.fail(f"embedding {index} holds a non-number")
        norm = math.sqrt(math.fsum(float(v) * float(v) for v in embedding))
        if not math.isfinite(norm) or norm == 0.0:
            raise self.http.fail(f"embedding {index} is zero or not finite")
        return [float(v) / norm for v in embedding]
