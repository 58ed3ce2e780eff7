"""Redis session locks: ``SET NX PX`` with a random token, compare-and-delete release, fallback."""

from __future__ import annotations

import logging
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.transaction import TransactionManagementError

from ttmemory import telemetry
from ttmemory.backends import load_backend
from ttmemory.backends.locks.base import SessionLock
from ttmemory.backends.locks.database import default_lock_config, lock_timeout_message
from ttmemory.backends.locks.renewal import Lease, Renewer
from ttmemory.backends.locks.scope import (
    atomic_holding,
    held_in_transaction,
    release_at_transaction_end,
)
from ttmemory.backends.options import (
    check_bool,
    check_key_prefix,
    check_redis_url,
    check_seconds,
    redacted_url,
)
from ttmemory.backends.redis_client import (
    close_quietly,
    fail_fast_client,
    session_key,
    session_keys_pattern,
)
from ttmemory.conf import app_settings
from ttmemory.exceptions import LockTimeout

if TYPE_CHECKING:
    from redis.commands.core import Script

logger = logging.getLogger(__name__)

# Deletes the key only if it still holds our token: a holder whose lease expired (and was
# taken over) can never release the new holder's lock.
RELEASE_SCRIPT = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
else
    return 0
end
"""

# Extends the lease only if the key still holds our token.
RENEW_SCRIPT = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
else
    return 0
end
"""

# Polling a taken lock: jittered exponential backoff between these bounds (seconds).
POLL_START = 0.005
POLL_CAP = 0.1
# Smallest timeout handed to the fallback lock when Redis failed late in a wait.
MIN_FALLBACK_TIMEOUT = 0.05


class RedisLock(SessionLock):
    """A Redis key per locked session, taken with ``SET NX PX`` and a random token.

    The key is ``<key_prefix>:{s<id>}:lock``; every Redis key of a session carries the hash tag
    ``{s<id>}`` (see ``session_key``), so they share one slot and the lock works on Redis
    Cluster (``cluster=True``). The lock is taken first, then ``transaction.atomic()`` is
    opened for the body; the key is deleted by a compare-and-delete script once the OUTERMOST
    transaction has committed or rolled back (inside a caller's transaction, at that one's end),
    so a holder whose lease expired cannot release someone else's lock. A dead holder's key
    expires after ``lease`` seconds (``TTMEMORY['LOCK_LEASE']`` when not given); while a live
    holder's transaction is open, a daemon thread extends its lease every third of it.

    When Redis cannot be reached (connection refused, socket timeout, cluster down) the write
    is not failed: the lock falls back to ``fallback`` (by default the database lock of the
    current database), logs one warning per outage, and stops trying Redis for
    ``breaker_seconds``; then one caller probes Redis again and an info line says when it is
    back. ``stats.fallbacks`` counts writes that used the fallback, ``stats.extra`` counts
    Redis attempts, errors and lease renewals.

    Caveat: during a partial outage (some processes reach Redis, others use the fallback) the
    two groups do not exclude each other. Appends stay correct, because the session row lock of
    each append still serialises ``seq`` assignment, but a rollback and an append running on
    different sides may interleave until every process is back on Redis.
    """

    def __init__(
        self,
        *,
        url: str,
        cluster: bool = False,
        key_prefix: str = "ttmemory",
        lease: float | None = None,
        renew: bool = True,
        breaker_seconds: float = 30.0,
        socket_timeout: float = 0.5,
        fallback: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        try:
            import redis  # noqa: F401 - fail here, with a clear message, not on first write
        except ImportError as exc:
            raise ImproperlyConfigured(
                "RedisLock needs the redis package: pip install 'ttmemory[redis]'"
            ) from exc
        self.url = check_redis_url(url)
        self.cluster = check_bool("cluster", cluster)
        self.key_prefix = check_key_prefix(key_prefix)
        self.lease = None if lease is None else check_seconds("lease", lease)
        self.renew = check_bool("renew", renew)
        self.breaker_seconds = check_seconds("breaker_seconds", breaker_seconds, zero=True)
        self.socket_timeout = check_seconds("socket_timeout", socket_timeout)
        if fallback is not None and not isinstance(fallback, dict):
            raise TypeError(
                f"fallback must be a lock backend config dict or None, not {fallback!r}"
            )
        if fallback is not None and str(fallback.get("BACKEND", "")).endswith("RedisLock"):
            raise TypeError("fallback must not be a RedisLock (it is used when Redis is down)")
        self.fallback_config = fallback
        self.stats.extra.update(redis_attempts=0, redis_errors=0, renewals=0)

        self._client: Any = None
        self._release_script: Script | None = None
        self._renew_script: Script | None = None
        self._fallback: SessionLock | None = None
        self._state = threading.Lock()  # guards the breaker, the counters and the fallback
        self._connecting = threading.Lock()  # one thread creates the client (may do I/O)
        self._outage = False  # a warning was logged and "Redis is back" not yet
        self._retry_at = 0.0  # monotonic time before which Redis is not tried
        self._probing = False  # one caller is trying Redis again after the breaker period
        self._held: dict[str, Lease] = {}  # by token: the leases this process holds
        self._renewer = Renewer(
            lambda lease, still_held: self._renew(lease, still_held=still_held),
            name="ttmemory-redis-lock-renewer",
            count=self._count,
            log=logger,
            lost="The Redis lock of session {session} expired or was taken while held (key "
            "{key}); another writer may run concurrently. Raise the lease or check Redis eviction.",
        )
        if fallback is not None:
            self.fallback  # noqa: B018 - a bad explicit fallback fails at startup, not in an outage

    # -- public ------------------------------------------------------------------------------

    def key(self, session_id: int) -> str:
        """The Redis key holding ``session_id``'s lock."""
        return session_key(session_id, "lock", key_prefix=self.key_prefix)

    @property
    def fallback(self) -> SessionLock:
        """The lock used while Redis is unreachable (loaded on first use)."""
        if self._fallback is None:
            config = self.fallback_config or default_lock_config()
            try:
                lock = load_backend("LOCK", config, base=SessionLock)
            except ImproperlyConfigured as exc:
                raise ImproperlyConfigured(
                    f"TTMEMORY['LOCK']['OPTIONS']['fallback'] of RedisLock: {exc}"
                ) from exc
            with self._state:
                if self._fallback is None:
                    self._fallback = lock
        return self._fallback

    @contextmanager
    def locked(self, session_id: int, *, timeout: float) -> Iterator[None]:
        key = (id(self), session_id)
        if held_in_transaction(key):
            with transaction.atomic():
                yield
            return
        lease, deadline = self._try_redis(session_id, timeout)
        if lease is None:  # Redis unreachable: the fallback lock, for the time that is left
            remaining = max(deadline - time.monotonic(), MIN_FALLBACK_TIMEOUT)
            self._count("fallbacks")
            with ExitStack() as stack:
                try:
                    stack.enter_context(self.fallback.locked(session_id, timeout=remaining))
                except LockTimeout:
                    self._count("timeouts")
                    raise
                yield
            return
        with atomic_holding(key, partial(self._release, lease)):
            yield

    def _try_redis(self, session_id: int, timeout: float) -> tuple[Lease | None, float]:
        """A Redis lease within ``timeout`` (None: Redis unreachable), and the deadline."""
        deadline = time.monotonic() + timeout
        route = self._route()
        if route is None:
            return None, deadline
        return self._acquire(session_id, timeout=timeout, deadline=deadline, probe=route), deadline

    def hold(self, session_id: int, *, timeout: float) -> None:
        if not transaction.get_connection().in_atomic_block:
            raise TransactionManagementError(
                "SessionLock.hold() must be called inside transaction.atomic()"
            )
        key = (id(self), session_id)
        if held_in_transaction(key):
            return
        lease, deadline = self._try_redis(session_id, timeout)
        if lease is None:
            remaining = max(deadline - time.monotonic(), MIN_FALLBACK_TIMEOUT)
            self._count("fallbacks")
            try:
                self.fallback.hold(session_id, timeout=remaining)
            except LockTimeout:
                self._count("timeouts")
                raise
            return
        release_at_transaction_end(key, partial(self._release, lease))

    def close(self) -> None:
        self._renewer.stop()
        with self._connecting, self._state:
            client, self._client = self._client, None
            fallback, self._fallback = self._fallback, None
        close_quietly(client)
        if fallback is not None:
            fallback.close()

    def erase_sessions(self, session_ids: list[int]) -> int:
        """Delete every Redis key of these sessions (namespace erasure); returns how many.

        A lock key this process still holds (the erase ran inside a caller's transaction that
        has not ended) is left to its release at that transaction's end.
        """
        client = self._get_client()
        with self._state:
            held = {lease.key for lease in self._held.values()}
        deleted = 0
        for session_id in session_ids:
            pattern = session_keys_pattern(session_id, key_prefix=self.key_prefix)
            keys = list(client.scan_iter(match=pattern, count=500))
            for key in keys:  # one key per call: keys of a session share a slot anyway
                name = key.decode() if isinstance(key, bytes) else str(key)
                if name not in held:
                    deleted += int(client.delete(key))
        return deleted

    # -- Redis -------------------------------------------------------------------------------

    def _get_client(self) -> Any:
        if self._client is not None:
            return self._client
        with self._connecting:
            if self._client is None:
                client = fail_fast_client(
                    self.url, socket_timeout=self.socket_timeout, cluster=self.cluster
                )
                self._release_script = client.register_script(RELEASE_SCRIPT)
                self._renew_script = client.register_script(RENEW_SCRIPT)
                self._client = client
            return self._client

    def _acquire(
        self, session_id: int, *, timeout: float, deadline: float, probe: bool
    ) -> Lease | None:
        """Take the Redis lock, or return None when Redis failed (the fallback is used).

        ``probe``: this caller tries Redis again after the breaker period; its first answer
        from Redis closes the breaker.
        """
        from redis.exceptions import RedisClusterException, RedisError  # optional dependency

        lease_seconds = self.lease if self.lease is not None else app_settings.LOCK_LEASE
        lease_ms = max(1, int(lease_seconds * 1000))
        key = self.key(session_id)
        token = secrets.token_hex(16)
        delay = POLL_START
        self._count("redis_attempts")
        try:
            client = self._get_client()
            while True:
                taken = client.set(key, token, nx=True, px=lease_ms)
                if probe:
                    self._answered()
                    probe = False
                if taken:
                    break
                now = time.monotonic()
                if now >= deadline:
                    self._count("timeouts")
                    raise LockTimeout(
                        lock_timeout_message(
                            session_id, timeout, f"Redis lock at {redacted_url(self.url)}"
                        )
                    )
                time.sleep(min(random.uniform(delay / 2, delay), deadline - now))
                delay = min(delay * 2, POLL_CAP)
        except (RedisError, RedisClusterException, OSError) as exc:
            self._count("redis_errors")
            self._unreachable(exc)
            return None
        except BaseException:
            if probe:  # ended before Redis answered or failed: let another caller probe
                with self._state:
                    self._probing = False
            raise
        self._count("acquired")
        lease = Lease(key, token, lease_ms, session_id, time.monotonic() + lease_ms / 3000.0)
        with self._state:
            self._held[token] = lease
        if self.renew:
            self._renewer.add(lease)
        return lease

    def _release(self, lease: Lease) -> None:
        """Compare-and-delete the key; errors are logged, never raised (the lease expires)."""
        from redis.exceptions import RedisClusterException, RedisError  # optional dependency

        self._renewer.remove(lease.token)
        with self._state:
            self._held.pop(lease.token, None)
        script = self._release_script
        if script is None:  # closed while held: the lease expires
            return
        try:
            script(keys=[lease.key], args=[lease.token])
        except (RedisError, RedisClusterException, OSError) as exc:
            logger.info(
                "Could not release the Redis lock of session %s (%s: %s); it expires within %gs",
                lease.session_id,
                type(exc).__name__,
                exc,
                lease.lease_ms / 1000,
            )
            self._unreachable(exc)

    def _release_token(self, key: str, token: str) -> bool:
        """Run the release script for ``key`` and ``token``; True when the key was deleted."""
        self._get_client()
        assert self._release_script is not None
        return bool(self._release_script(keys=[key], args=[token]))

    def _renew(self, lease: Lease, *, still_held: Callable[[str], bool]) -> None:
        from redis.exceptions import RedisClusterException, RedisError  # optional dependency

        script = self._renew_script
        if script is None:
            return
        try:
            extended = script(keys=[lease.key], args=[lease.token, lease.lease_ms])
        except (RedisError, RedisClusterException, OSError) as exc:
            logger.debug("renewing the Redis lock of session %s failed: %s", lease.session_id, exc)
            return
        self._renewer.settle(lease, extended=bool(extended), still_held=still_held)

    # -- circuit breaker ---------------------------------------------------------------------

    def _route(self) -> bool | None:
        """None: use the fallback (breaker open). False: use Redis. True: use Redis as the probe.

        After ``breaker_seconds`` one caller at a time probes Redis; the others keep using the
        fallback, so an outage never makes every writer wait for a socket timeout.
        """
        with self._state:
            if not self._outage:
                return False
            if self._probing or time.monotonic() < self._retry_at:
                return None
            self._probing = True
            return True

    def _answered(self) -> None:
        """The probe got an answer: close the breaker."""
        with self._state:
            back = self._outage
            self._outage = False
            self._probing = False
        if back:
            logger.info("Redis is back at %s; session locks use it again", redacted_url(self.url))

    def _unreachable(self, exc: BaseException) -> None:
        with self._state:
            first = not self._outage
            self._outage = True
            self._probing = False
            self._retry_at = time.monotonic() + self.breaker_seconds
        if first:
            logger.warning(
                "Redis unreachable at %s (%s: %s); session locks use %s until it answers again",
                redacted_url(self.url),
                type(exc).__name__,
                exc,
                type(self.fallback).__name__,
            )

    def _count(self, name: str) -> None:
        with self._state:
            if name in ("acquired", "timeouts", "fallbacks"):
                setattr(self.stats, name, getattr(self.stats, name) + 1)
            else:
                self.stats.extra[name] = self.stats.extra.get(name, 0) + 1
        if name == "fallbacks":
            telemetry.count("ttmemory.lock.fallbacks", **{"ttmemory.lock.backend": "RedisLock"})
