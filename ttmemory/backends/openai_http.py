"""OpenAIHTTPClient: JSON POSTs to an OpenAI-compatible server with retries, over a pool.

The one place where the OpenAI-compatible backends (``OpenAIEmbedder``, ``OpenAIChatLLM``) talk
HTTP: one pooled ``httpx.Client`` per backend and process (keep-alive, so a recall with a remote
embedder does not pay a TCP and TLS handshake per call), headers and the bearer key, retries of
429 / 5xx / connection errors (tenacity: backoff with jitter, ``Retry-After``, a total
deadline), timeouts, error messages from OpenAI-shaped error bodies, and the redaction of the
key from everything it reports.
"""

from __future__ import annotations

import email.utils
import functools
import importlib.metadata
import json
import logging
import os
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import tenacity

logger = logging.getLogger(__name__)

_ERROR_BODY_CHARS = 300
# Connections kept per backend and process: enough for the threads of a gunicorn worker or a
# Celery worker; idle ones are closed after KEEPALIVE_EXPIRY seconds (servers drop them anyway).
MAX_CONNECTIONS = 20
MAX_KEEPALIVE = 10
KEEPALIVE_EXPIRY = 30.0


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
    - ``timeout``: seconds to connect, and between bytes sent or received (httpx's timeout);
      also the longest wait for a free pooled connection. A timeout is not retried.
    - ``max_retries``: retries of HTTP 429, 5xx and connection errors, with exponential backoff
      and jitter from ``retry_backoff``; a ``retry-after-ms`` or ``Retry-After`` header is
      honoured up to ``max_retry_wait``, beyond that the call fails at once. Other 4xx are
      never retried.
    - ``deadline`` (None: no bound): seconds for the whole call, retries and waits included. A
      retry whose wait would end past it is not made, and each request's timeouts are cut to
      what is left of it.

    The retry policy is tenacity's (``Retrying`` with its stop and wait strategies); this class
    only says what is worth retrying and how long the server asked to wait.

    Requests share one ``httpx.Client`` (``MAX_CONNECTIONS`` connections, keep-alive) created on
    first use; a forked child (gunicorn, Celery prefork) makes its own instead of sharing the
    parent's sockets. Redirects are not followed: a 3xx is an error like any other non-2xx.
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
        deadline: float | None = None,
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
        if deadline is not None and (not is_number(deadline) or deadline <= 0):
            raise TypeError(f"{owner}: 'deadline' must be a positive number of seconds or None")
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
        self.deadline = float(deadline) if deadline is not None else None
        self.url = f"{base_url.rstrip('/')}/{path}"
        # Shown in errors and logs: no user:password, query or fragment.
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        self.display_url = f"{parts.scheme}://{host}{parts.path.rstrip('/')}/{path}"
        self.who = f"{owner}(model={model!r}) at {self.display_url}"
        self._log = log or logger
        self._api_key = key
        self._client: httpx.Client | None = None
        self._client_pid = 0
        self._client_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIHTTPClient({self.who})"

    def fail(self, message: str) -> Exception:
        """The family's error for ``message``, prefixed with ``who`` and redacted."""
        return self.error(f"{self.who}: {self.redact(message)}")

    def post(
        self, body: dict[str, Any], *, expect: str, count: RequestCount | None = None
    ) -> dict[str, Any]:
        """The decoded answer to ``body``: a JSON object holding an ``expect`` list.

        Retries as configured (tenacity decides when and how long to wait); every HTTP request
        is counted into ``count``.
        """
        try:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise self.fail(f"the request cannot be sent as JSON: {exc}") from None
        count = count if count is not None else RequestCount()
        started = time.monotonic()
        stops: list[Any] = [tenacity.stop_after_attempt(self.max_retries + 1), self._asks_too_long]
        if self.deadline is not None:
            stops.append(tenacity.stop_before_delay(self.deadline))
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Retryable),
            stop=tenacity.stop_any(*stops),
            wait=self._wait(),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            answer: dict[str, Any] = retrying(self._attempt, data, expect, count, started)
        except _Retryable as exc:
            raise self.fail(self._gave_up(exc, retrying, started)) from None
        return answer

    def close(self) -> None:
        """Close the pooled connections (a later request opens new ones)."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def snippet(self, raw: bytes) -> str:
        """The start of a response body, decoded and redacted, for an error message."""
        text = raw.decode("utf-8", errors="replace").strip()
        return self.redact(text[:_ERROR_BODY_CHARS])

    def redact(self, text: str) -> str:
        return text.replace(self._api_key, "[redacted]") if self._api_key else text

    # -- internals -------------------------------------------------------------------------

    def _attempt(
        self, data: bytes, expect: str, count: RequestCount, started: float
    ) -> dict[str, Any]:
        """One POST: the decoded answer; ``_Retryable`` for a 429, a 5xx or a broken
        connection; the family's error for anything else (tenacity re-raises it at once)."""
        count.requests += 1
        timeout = self.timeout
        if self.deadline is not None:
            left = self.deadline - (time.monotonic() - started)
            if left <= 0:
                raise self._deadline_error()
            timeout = min(timeout, left)
        try:
            status, headers, raw = self._send(data, timeout)
        except httpx.TimeoutException:
            error = self._timeout_error() if timeout >= self.timeout else self._deadline_error()
            raise error from None
        except httpx.ConnectError as exc:
            raise _Retryable(
                f"cannot connect: {exc}", f"connection error ({self.redact(str(exc))})"
            ) from None
        except (httpx.TransportError, OSError) as exc:
            # The connection broke mid-response (reset, truncated body, ...).
            raise _Retryable(
                f"connection failed: {type(exc).__name__}: {exc}",
                f"connection error ({type(exc).__name__})",
            ) from None
        if 200 <= status < 300:
            return self._decode(raw, expect)
        message = f"HTTP {status}: {self._error_message(raw, status)}"
        if status == 429 or status >= 500:
            raise _Retryable(message, f"HTTP {status}", _retry_after(headers))
        raise self.fail(message)

    def _wait(self) -> Callable[[tenacity.RetryCallState], float]:
        """Seconds before the next try: what the server asked for (``Retry-After``), else
        exponential backoff with "equal jitter" (half fixed, half random) from
        ``retry_backoff``, capped at ``max_retry_wait``."""
        half, cap = self.retry_backoff / 2, self.max_retry_wait / 2
        backoff = tenacity.wait_exponential(multiplier=half, max=cap) + (
            tenacity.wait_random_exponential(multiplier=half, max=cap)
        )

        def wait(state: tenacity.RetryCallState) -> float:
            asked = _failure(state).retry_after
            return asked if asked is not None else float(backoff(state))

        return wait

    def _asks_too_long(self, state: tenacity.RetryCallState) -> bool:
        """Stop: the server asks to wait longer than ``max_retry_wait``."""
        asked = _failure(state).retry_after
        return asked is not None and asked > self.max_retry_wait

    def _gave_up(self, exc: _Retryable, retrying: tenacity.Retrying, started: float) -> str:
        """The error message of the last failure, saying why no retry follows when tries
        were left."""
        if retrying.statistics.get("attempt_number", 0) > self.max_retries:
            return exc.message
        if exc.retry_after is not None and exc.retry_after > self.max_retry_wait:
            return (
                f"{exc.message} (the server asks to retry after more than "
                f"max_retry_wait={self.max_retry_wait:g}s)"
            )
        return f"{exc.message} (no retry fits in deadline={self.deadline:g}s)"

    def _log_retry(self, state: tenacity.RetryCallState) -> None:
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        self._log.info(
            "%s: %s; retry %d of %d in %.2fs",
            self.who,
            _failure(state).what,
            state.attempt_number,
            self.max_retries,
            wait,
        )

    def _send(self, data: bytes, timeout: float) -> tuple[int, Any, bytes]:
        """One POST over the pool: (status, headers, body); transport errors raise httpx's."""
        response = self._pool().post(
            self.url, content=data, headers=self._headers(), timeout=httpx.Timeout(timeout)
        )
        return response.status_code, response.headers, response.content

    def _pool(self) -> httpx.Client:
        """This process's pooled client, created on first use (and again after a fork)."""
        client, pid = self._client, os.getpid()
        if client is not None and self._client_pid == pid:
            return client
        with self._client_lock:
            if self._client is None or self._client_pid != pid:
                # After a fork the parent's client is dropped, never closed: closing would
                # shut sockets the parent still uses.
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout),
                    limits=httpx.Limits(
                        max_connections=MAX_CONNECTIONS,
                        max_keepalive_connections=MAX_KEEPALIVE,
                        keepalive_expiry=KEEPALIVE_EXPIRY,
                    ),
                    follow_redirects=False,
                    trust_env=True,
                )
                self._client_pid = pid
            return self._client

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

    def _timeout_error(self) -> Exception:
        return self.fail(f"no answer within timeout={self.timeout:g}s")

    def _deadline_error(self) -> Exception:
        return self.fail(f"no answer within deadline={self.deadline:g}s")

    def _error_message(self, raw: bytes, status: int) -> str:
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
        reason = httpx.codes.get_reason_phrase(status) or "no message"
        return self.redact(message or self.snippet(raw) or reason)


class _Retryable(Exception):
    """A failure worth another try: ``message`` for the final error, ``what`` for the log."""

    def __init__(self, message: str, what: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.what = what
        self.retry_after = retry_after


def _failure(state: tenacity.RetryCallState) -> _Retryable:
    """The ``_Retryable`` that ended the last try (tenacity only retries on those)."""
    assert state.outcome is not None
    failure = state.outcome.exception()
    assert isinstance(failure, _Retryable)
    return failure


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
