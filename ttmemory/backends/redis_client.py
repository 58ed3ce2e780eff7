"""One way to build the Redis clients ttmemory's backends use: fail fast, never hang a write."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


def fail_fast_client(url: str, *, socket_timeout: float, cluster: bool = False) -> Any:
    """A redis-py client (``RedisCluster`` when ``cluster``) with short timeouts.

    No retries on a single server: an unreachable Redis must fail at once so circuit breakers
    open. One retry on a cluster lets the client follow a failover to the new master.
    """
    import redis  # optional dependency (the redis extra): imported when a client is built
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    options: dict[str, Any] = {
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": socket_timeout,
        "retry": Retry(NoBackoff(), 1 if cluster else 0),
    }
    if cluster:
        return redis.RedisCluster.from_url(url, **options)
    return redis.Redis.from_url(url, **options)


def close_quietly(client: Any) -> None:
    """Close ``client`` if there is one; a broken client must not break a settings change."""
    if client is None:
        return
    try:
        client.close()
    except Exception:
        logger.debug("closing the Redis client failed", exc_info=True)


def session_hash_tag(session_id: int) -> str:
    """The Redis Cluster hash tag shared by every key of a session: ``{s<id>}``."""
    return f"{{s{int(session_id)}}}"


def session_key(session_id: int, name: str, *, key_prefix: str = "ttmemory") -> str:
    """``<prefix>:{s<id>}:<name>``: any Redis key of a session, in the session's hash slot."""
    return f"{key_prefix}:{session_hash_tag(session_id)}:{name}"


def session_keys_pattern(session_id: int, *, key_prefix: str = "ttmemory") -> str:
    """A ``SCAN MATCH`` pattern for every key of a session (braces are literal in patterns)."""
    return f"{key_prefix}:{session_hash_tag(session_id)}:*"
