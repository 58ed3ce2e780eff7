"""OpenAIHTTPClient: JSON POSTs to an OpenAI-compatible server with retries, stdlib only.

The one place where the OpenAI-compatible backends (``OpenAIEmbedder``, ``OpenAIChatLLM``) talk
HTTP: headers and the bearer key, retries of 429 / 5xx / connection errors with backoff and
jitter, ``Retry-After``, timeouts, error messages from OpenAI-shaped error bodies, and the
redaction of the key from everything it reports.
"""

from __future__ import annotations

import email.utils
import functools
import http.client
import importlib.metadata
import json
import logging
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

_ERROR_BODY_CHARS = 300


@functools.cache
def _user_agent() -> str:
    try:
        return f"ttmemory/{importlib.metadata.version('ttmemory')}"
    except importlib.metadata.PackageNotFoundError:
        return "ttmemory"


@dataclass
class RequestCount:
    """HTTP requests made for one backend call, retries included."""

    requests: int = 0


class OpenAIHTTPClient:
    """POSTs JSON to ``{base_url}/{path}`` and returns the decoded answer.

    ``owner`` (the backend's class name) prefixes option errors (``TypeError``, which the
    backend loader turns into ``ImproperlyConfigured``); ``who`` ("Owner(model='m') at URL")
    prefixes runtime errors, raised as ``error`` (the backend family's exception class) with
    the HTTP status and the server's message. The options are the backends' own:

    - ``base_url``: an http(s) URL such as "https://api.openai.com/v1".
    - ``api_key``, else the environment variable named by ``api_key_env``; a server that needs
      no key gets no ``Authorization`` header, but api.openai.com always needs one. The key is
      never logged and never appears in an error message.
    - ``timeout``: seconds per HTTP request. A timeout is not retried.
    - ``max_retries``: retries of HTTP 429, 5xx and connection errors, with exponential backoff
      and jitter from ``retry_backoff``; a ``retry-after-ms`` or ``Retry-After`` header is
      honoured up to ``max_retry_wait``, beyond that the call fails at once. Other 4xx are
      never retried.
    """

    def __init__(
        self,
        *,
        owner: str,
        model: str,
        path: str,
        error: type[Exception],
        base_url: str,
        api_key: str | None,
        api_key_env: str | None,
        timeout: float,
        max_retries: int,
        retry_backoff: float,
        max_retry_wait: float,
        log: logging.Logger | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url) if isinstance(base_url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise TypeError(
                f"{owner}: 'base_url' must be an http(s) URL such as "
                f"'https://api.openai.com/v1', not {base_url!r}"
            )
        if api_key is not None and not isinstance(api_key, str):
            raise TypeError(f"{owner}: 'api_key' must be a string")
        if api_key_env is not None and not isinstance(api_key_env, str):
            raise TypeError(f"{owner}: 'api_key_env' must be an environment variable name")
        if not is_number(timeout) or timeout <= 0:
            raise TypeError(f"{owner}: 'timeout' must be a positive number of seconds")
        if not is_int(max_retries) or not 0 <= max_retries <= 10:
            raise TypeError(f"{owner}: 'max_retries' must be from 0 to 10")
        if not is_number(retry_backoff) or retry_backoff < 0:
            raise TypeError(f"{owner}: 'retry_backoff' must be a number of seconds >= 0")
        if not is_number(max_retry_wait) or max_retry_wait < 0:
            raise TypeError(f"{owner}: 'max_retry_wait' must be a number of seconds >= 0")
        key = api_key if api_key is not None else os.environ.get(api_key_env or "", "")
        key = (key or "").strip()
        if not key and parts.hostname == "api.openai.com":
            raise TypeError(
                f"{owner}: no API key for api.openai.com; set OPTIONS['api_key'] or the "
                f"{api_key_env or 'OPENAI_API_KEY'} environment variable"
            )
        path = path.strip("/")
        self.error = error
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.retry_backoff = float(retry_backoff)
        self.max_retry_wait = float(max_retry_wait)
        self.url = f"{base_url.rstrip('/')}/{path}"
        # Shown in errors and logs: no user:password, query or fragment.
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        self.display_url = f"{parts.scheme}://{host}{parts.path.rstrip('/')}/{path}"
        self.who = f"{owner}(model={model!r}) at {self.display_url}"
        self._log = log or logger
        self._api_key = key

    def __repr__(self) -> str:
        return f"OpenAIHTTPClient({self.who})"

    def fail(self, message: str) -> Exception:
        """The family's error for ``message``, prefixed with ``who`` and redacted."""
        return self.error(f"{self.who}: {self.redact(message)}")

    def post(
        self, body: dict[str, Any], *, expect: str, count: RequestCount | None = None
    ) -> dict[str, Any]:
        """The decoded answer to ``body``: a JSON object holding an ``expect`` list.

        Retries as configured; every HTTP request is counted into ``count``.
        """
        try:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise self.fail(f"the request cannot be sent as JSON: {exc}") from None
        count = count if count is not None else RequestCount()
        attempt = 0
        while True:
            count.requests += 1
            request = urllib.request.Request(
                self.url, data=data, headers=self._headers(), method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read()
                return self._decode(raw, expect)
            except urllib.error.HTTPError as exc:
                status, headers = exc.code, exc.headers
                message = self._error_message(exc)
                if (status == 429 or status >= 500) and attempt < self.max_retries:
                    wait = self._retry_wait(attempt, headers)
                    if wait is None:
                        raise self.fail(
                            f"HTTP {status}: {message} (the server asks to retry after more "
                            f"than max_retry_wait={self.max_retry_wait:g}s)"
                        ) from None
                    self._log_retry(f"HTTP {status}", attempt, wait)
                else:
                    raise self.fail(f"HTTP {status}: {message}") from None
            except TimeoutError:
                raise self._timeout_error() from None
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, TimeoutError):
                    raise self._timeout_error() from None
                if attempt >= self.max_retries:
                    raise self.fail(f"cannot connect: {exc.reason}") from None
                wait = self._backoff(attempt)
                self._log_retry(f"connection error ({self.redact(str(exc.reason))})", attempt, wait)
            except (http.client.HTTPException, OSError) as exc:
                # The connection broke mid-response (reset, truncated body, ...).
                if attempt >= self.max_retries:
                    raise self.fail(f"connection failed: {type(exc).__name__}: {exc}") from None
                wait = self._backoff(attempt)
                self._log_retry(f"connection error ({type(exc).__name__})", attempt, wait)
            time.sleep(wait)
            attempt += 1

    def snippet(self, raw: bytes) -> str:
        """The start of a response body, decoded and redacted, for an error message."""
        text = raw.decode("utf-8", errors="replace").strip()
        return self.redact(text[:_ERROR_BODY_CHARS])

    def redact(self, text: str) -> str:
        return text.replace(self._api_key, "[redacted]") if self._api_key else text

    # -- internals -------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": _user_agent(),
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _decode(self, raw: bytes, expect: str) -> dict[str, Any]:
        try:
            payload = json.loads(raw)
        except ValueError:
            raise self.fail(f"the response is not JSON: {self.snippet(raw)!r}") from None
        if not isinstance(payload, dict) or not isinstance(payload.get(expect), list):
            raise self.fail(f"the response has no {expect!r} list: {self.snippet(raw)!r}")
        return payload

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
        self._log.info(
            "%s: %s; retry %d of %d in %.2fs", self.who, what, attempt + 1, self.max_retries, wait
        )

    def _timeout_error(self) -> Exception:
        return self.fail(f"no answer within timeout={self.timeout:g}s")

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
        return self.redact(message or self.snippet(raw) or (exc.reason or "no message"))


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


def is_int(value: Any) -> bool:
    """A whole number, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)
