"""Checks of backend OPTIONS shared by every family, and URL redaction for logs and errors.

Each check returns the value, or raises TypeError naming the option (``load_backend`` turns that
into ImproperlyConfigured naming the setting).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redacted_url(url: str) -> str:
    """``url`` with its password replaced by ``***``, for log lines and error messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def check_redis_url(url: object) -> str:
    if not isinstance(url, str) or not url:
        raise TypeError(f"url must be a Redis URL such as 'redis://127.0.0.1:6379/0', not {url!r}")
    if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        raise TypeError(f"url {redacted_url(url)!r} must start with redis://, rediss:// or unix://")
    return url


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def check_seconds(name: str, value: object, *, zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number of seconds, not {value!r}")
    if value < 0 or (value == 0 and not zero):
        raise TypeError(f"{name} must be {'>= 0' if zero else '> 0'} seconds, not {value!r}")
    return float(value)


def check_key_prefix(prefix: object) -> str:
    if not isinstance(prefix, str) or not prefix:
        raise TypeError(f"key_prefix must be a non-empty string, not {prefix!r}")
    if "{" in prefix or "}" in prefix:
        raise TypeError(
            f"key_prefix {prefix!r} must not contain braces: they would replace the session's "
            "hash tag and split its keys across Redis Cluster slots"
        )
    return prefix


def check_http_url(url: object) -> str:
    if not isinstance(url, str) or not url:
        raise TypeError(f"url must be an http:// or https:// URL, not {url!r}")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise TypeError(f"url {redacted_url(url)!r} cannot be parsed: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TypeError(f"url {redacted_url(url)!r} must be an http:// or https:// URL")
    return url


def check_int(name: str, value: object, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TypeError(f"{name} must be an integer >= {minimum}, not {value!r}")
    return value
