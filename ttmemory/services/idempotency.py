"""Idempotent requests: a POST retried with the same ``Idempotency-Key`` is answered, not redone."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError, TTMemoryError
from ttmemory.models import IdempotencyRecord
from ttmemory.models.compiled import CompiledQuery

MAX_KEY_LENGTH = 255


class IdempotencyKeyReusedError(TTMemoryError):
    """The key was used before for a different request; nothing was done."""


def idempotent_call(
    *,
    namespace: str,
    scope: str,
    key: str,
    fingerprint: str,
    call: Callable[[], tuple[int, dict[str, Any]]],
) -> tuple[int, dict[str, Any], bool]:
    """Run ``call`` once per ``(namespace, scope, key)``; returns (status, body, replayed).

    The record is inserted before ``call`` runs, in the same transaction, so a concurrent
    retry waits on the unique key and then replays the stored answer instead of repeating
    the write. If ``call`` raises, nothing is stored and a retry runs it again. Raises
    IdempotencyKeyReusedError when the key was used for a request with another fingerprint.
    """
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY_LENGTH:
        raise MemoryValidationError(
            "Idempotency-Key", f"must be 1 to {MAX_KEY_LENGTH} visible characters"
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in key):
        raise MemoryValidationError("Idempotency-Key", "must not contain control characters")
    earlier = _replay(namespace, scope, key, fingerprint)
    if earlier is not None:
        return earlier
    try:
        with transaction.atomic():
            record = IdempotencyRecord.objects.create(
                namespace=namespace,
                scope=scope,
                key=key,
                fingerprint=fingerprint,
                status_code=0,
                response={},
            )
            status, body = call()
            record.status_code = status
            record.response = body
            record.save(update_fields=["status_code", "response"])
    except IntegrityError:
        earlier = _replay(namespace, scope, key, fingerprint)
        if earlier is None:
            raise
        return earlier
    return status, body, False


def _replay(
    namespace: str, scope: str, key: str, fingerprint: str
) -> tuple[int, dict[str, Any], bool] | None:
    # The key's record whatever its age, in one compiled statement: a new key (the usual
    # case) then costs that read alone, not also a DELETE in its own transaction.
    record = next(_RECORD.objects(namespace=namespace, scope=scope, record_key=key), None)
    if record is None:
        return None
    cutoff = timezone.now() - dt.timedelta(seconds=app_settings.API_IDEMPOTENCY_SECONDS)
    if record.created_at <= cutoff:
        # Only the expired record: a fresh one committed since the query above is the answer
        # a concurrent retry must get, not something to delete.
        IdempotencyRecord.objects.filter(
            namespace=namespace, scope=scope, key=key, created_at__lte=cutoff
        ).delete()
        return None
    if record.fingerprint != fingerprint:
        raise IdempotencyKeyReusedError(
            "this Idempotency-Key was already used for a different request"
        )
    return record.status_code, dict(record.response), True


def _record(shape: object, *, namespace: str, scope: str, record_key: str) -> QuerySet[Any]:
    return IdempotencyRecord.objects.filter(namespace=namespace, scope=scope, key=record_key)


# One row at most (unique per namespace, scope and key); compiled once per connection.
_RECORD = CompiledQuery(IdempotencyRecord, _record)


def idempotency_prune(*, now: dt.datetime | None = None) -> int:
    """Delete records older than ``API_IDEMPOTENCY_SECONDS``; returns how many."""
    now = now or timezone.now()
    cutoff = now - dt.timedelta(seconds=app_settings.API_IDEMPOTENCY_SECONDS)
    return IdempotencyRecord.objects.filter(created_at__lte=cutoff).delete()[0]
