"""OpenAIEmbedder: any OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM), stdlib only."""

from __future__ import annotations

import email.utils
import functools
import http.client
import importlib.metadata
import json
import logging
import math
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from ttmemory.backends.embedders.base import Embedder
from ttmemory.exceptions import EmbeddingError

logger = logging.getLogger(__name__)

MAX_INPUTS_PER_REQUEST = 2048  # OpenAI's limit on the length of ``input``
_ERROR_BODY_CHARS = 300


@functools.cache
def _user_agent() -> str:
    try:
        return f"ttmemory/{importlib.metadata.version('ttmemory')}"
    except importlib.metadata.PackageNotFoundError:
        return "ttmemory"


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

    ``embed`` checks the response (one embedding per input, in ``index`` order, floats of
    ``dimensions`` length), returns unit vectors and records ``last_usage`` (token counts),
    ``last_latency`` (seconds) and ``last_requests`` (HTTP requests, retries included) of the
    call. Any failure raises ``EmbeddingError`` with the HTTP status and the server's message.
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
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise TypeError("OpenAIEmbedder: 'model' must be the server's model name")
        if not _is_int(dimensions) or not 1 <= dimensions <= 65536:
            raise TypeError("OpenAIEmbedder: 'dimensions' must be a positive whole number")
        parts = urllib.parse.urlsplit(base_url) if isinstance(base_url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise TypeError(
                f"OpenAIEmbedder: 'base_url' must be an http(s) URL such as "
                f"'https://api.openai.com/v1', not {base_url!r}"
            )
        if api_key is not None and not isinstance(api_key, str):
            raise TypeError("OpenAIEmbedder: 'api_key' must be a string")
        if api_key_env is not None and not isinstance(api_key_env, str):
            raise TypeError("OpenAIEmbedder: 'api_key_env' must be an environment variable name")
        if not isinstance(send_dimensions, bool):
            raise TypeError("OpenAIEmbedder: 'send_dimensions' must be True or False")
        if not _is_number(timeout) or timeout <= 0:
            raise TypeError("OpenAIEmbedder: 'timeout' must be a positive number of seconds")
        if not _is_int(batch_size) or not 1 <= batch_size <= MAX_INPUTS_PER_REQUEST:
            raise TypeError(
                f"OpenAIEmbedder: 'batch_size' must be from 1 to {MAX_INPUTS_PER_REQUEST}"
            )
        if not _is_int(max_retries) or not 0 <= max_retries <= 10:
            raise TypeError("OpenAIEmbedder: 'max_retries' must be from 0 to 10")
        if not _is_number(retry_backoff) or retry_backoff < 0:
            raise TypeError("OpenAIEmbedder: 'retry_backoff' must be a number of seconds >= 0")
        if not _is_number(max_retry_wait) or max_retry_wait < 0:
            raise TypeError("OpenAIEmbedder: 'max_retry_wait' must be a number of seconds >= 0")
        key = api_key if api_key is not None else os.environ.get(api_key_env or "", "")
        key = (key or "").strip()
        if not key and parts.hostname == "api.openai.com":
            raise TypeError(
                f"OpenAIEmbedder: no API key for api.openai.com; set OPTIONS['api_key'] or the "
                f"{api_key_env or 'OPENAI_API_KEY'} environment variable"
            )
        self.model = model.strip()
        self.dimensions = dimensions
        self.send_dimensions = send_dimensions
        self.timeout = float(timeout)
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.retry_backoff = float(retry_backoff)
        self.max_retry_wait = float(max_retry_wait)
        self.url = base_url.rstrip("/") + "/embeddings"
        # Shown in errors and logs: no user:password, query or fragment.
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        self.display_url = f"{parts.scheme}://{host}{parts.path.rstrip('/')}/embeddings"
        self._api_key = key
        self.last_usage: dict[str, int] = {}
        self.last_latency: float = 0.0
        self.last_requests: int = 0

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbedder(model={self.model!r}, dimensions={self.dimensions}, "
            f"url={self.display_url!r})"
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
        texts = list(texts)
        for position, text in enumerate(texts):
            if not isinstance(text, str) or not text:
                raise EmbeddingError(
                    f"{self._who()}: text {position} is empty or not a string; "
                    "embedding servers reject empty input"
                )
        started = time.monotonic()
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        requests = [0]  # HTTP requests of this call, retries included
        vectors: list[list[float]] = []
        try:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                payload = self._post(self.request_body(batch), requests)
                vectors.extend(self._parse(payload, len(batch)))
                reported = payload.get("usage")
                if isinstance(reported, Mapping):
                    for name in usage:
                        if _is_int(reported.get(name)):
                            usage[name] += int(reported[name])
        finally:
            # Read by callers (a cost ledger); one embedder serves many threads, last call wins.
            self.last_latency = time.monotonic() - started
            self.last_usage = usage
            self.last_requests = requests[0]
        logger.debug(
            "%s: %d texts, %d requests, %d tokens, %.3fs",
            self._who(),
            len(texts),
            requests[0],
            usage["prompt_tokens"],
            self.last_latency,
        )
        return vectors

    # -- HTTP ------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": _user_agent(),
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _post(self, body: dict[str, Any], requests: list[int]) -> dict[str, Any]:
        """The decoded answer to ``body``, retrying as configured; counts into ``requests``."""
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        attempt = 0
        while True:
            requests[0] += 1
            request = urllib.request.Request(
                self.url, data=data, headers=self._headers(), method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read()
                return self._decode(raw)
            except urllib.error.HTTPError as exc:
                status, headers = exc.code, exc.headers
                message = self._error_message(exc)
                if (status == 429 or status >= 500) and attempt < self.max_retries:
                    wait = self._retry_wait(attempt, headers)
                    if wait is None:
                        raise EmbeddingError(
                            f"{self._who()}: HTTP {status}: {message} (the server asks to retry "
                            f"after more than max_retry_wait={self.max_retry_wait:g}s)"
                        ) from None
                    self._log_retry(f"HTTP {status}", attempt, wait)
                else:
                    raise EmbeddingError(f"{self._who()}: HTTP {status}: {message}") from None
            except TimeoutError:
                raise self._timeout_error() from None
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, TimeoutError):
                    raise self._timeout_error() from None
                if attempt >= self.max_retries:
                    raise EmbeddingError(
                        f"{self._who()}: cannot connect: {self._redact(str(exc.reason))}"
                    ) from None
                wait = self._backoff(attempt)
                self._log_retry(f"connection error ({exc.reason})", attempt, wait)
            except (http.client.HTTPException, OSError) as exc:
                # The connection broke mid-response (reset, truncated body, ...).
                if attempt >= self.max_retries:
                    raise EmbeddingError(
                        f"{self._who()}: connection failed: {type(exc).__name__}: "
                        f"{self._redact(str(exc))}"
                    ) from None
                wait = self._backoff(attempt)
                self._log_retry(f"connection error ({type(exc).__name__})", attempt, wait)
            time.sleep(wait)
            attempt += 1

    def _retry_wait(self, attempt: int, headers: Any) -> float | None:
        """Seconds to wait before retry ``attempt + 1``; None if the server asks for too long."""
        asked = _retry_after(headers)
        if asked is None:
            return self._backoff(attempt)
        return asked if asked <= self.max_retry_wait else None

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter: half fixed, half random ("equal jitter")."""
        ceiling = min(self.max_retry_wait, self.retry_backoff * (2**attempt))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _log_retry(self, what: str, attempt: int, wait: float) -> None:
        logger.info(
            "%s: %s; retry %d of %d in %.2fs",
            self._who(),
            what,
            attempt + 1,
            self.max_retries,
            wait,
        )

    def _timeout_error(self) -> EmbeddingError:
        return EmbeddingError(f"{self._who()}: no answer within timeout={self.timeout:g}s")

    # -- responses -------------------------------------------------------------------------

    def _decode(self, raw: bytes) -> dict[str, Any]:
        try:
            payload = json.loads(raw)
        except ValueError:
            raise EmbeddingError(
                f"{self._who()}: the response is not JSON: {self._snippet(raw)!r}"
            ) from None
        if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
            raise EmbeddingError(
                f"{self._who()}: the response has no 'data' list: {self._snippet(raw)!r}"
            )
        return payload

    def _parse(self, payload: dict[str, Any], expected: int) -> list[list[float]]:
        items = payload["data"]
        if len(items) != expected:
            raise EmbeddingError(
                f"{self._who()}: {len(items)} embeddings returned for {expected} inputs"
            )
        vectors: list[list[float] | None] = [None] * expected
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                raise EmbeddingError(f"{self._who()}: data[{position}] is not an object")
            index = item.get("index", position)
            if not _is_int(index) or not 0 <= index < expected or vectors[index] is not None:
                raise EmbeddingError(
                    f"{self._who()}: data[{position}] has a missing, repeated or out-of-range "
                    f"index {index!r}"
                )
            vectors[index] = self._unit(item.get("embedding"), index)
        return [vector for vector in vectors if vector is not None]

    def _unit(self, embedding: Any, index: int) -> list[float]:
        if not isinstance(embedding, list):
            raise EmbeddingError(
                f"{self._who()}: embedding {index} is not a list of floats "
                f"(got {type(embedding).__name__})"
            )
        if len(embedding) != self.dimensions:
            raise EmbeddingError(
                f"{self._who()}: embedding {index} has {len(embedding)} dimensions, expected "
                f"{self.dimensions} (check the 'dimensions' option)"
            )
        if not all(_is_number(v) for v in embedding):
            raise EmbeddingError(f"{self._who()}: embedding {index} holds a non-number")
        norm = math.sqrt(math.fsum(float(v) * float(v) for v in embedding))
        if not math.isfinite(norm) or norm == 0.0:
            raise EmbeddingError(f"{self._who()}: embedding {index} is zero or not finite")
        return [float(v) / norm for v in embedding]

    def _error_message(self, exc: urllib.error.HTTPError) -> str:
        try:
            raw = exc.read()
        except (OSError, http.client.HTTPException):
            raw = b""
        finally:
            exc.close()
        message = ""
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        if isinstance(payload, dict):
            error = payload.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                message = error["message"]
            elif isinstance(error, str):
                message = error
            elif isinstance(payload.get("message"), str):
                message = payload["message"]
        return self._redact(message or self._snippet(raw) or (exc.reason or "no message"))

    def _snippet(self, raw: bytes) -> str:
        text = raw.decode("utf-8", errors="replace").strip()
        return self._redact(text[:_ERROR_BODY_CHARS])

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "[redacted]") if self._api_key else text

    def _who(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}) at {self.display_url}"


def _retry_after(headers: Any) -> float | None:
    """Seconds asked by ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(float(value) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
