"""Idempotency records: replay, refusal of a reused key, expiry and pruning."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from tests.conftest import user
from ttmemory import memory
from ttmemory.models import IdempotencyRecord, MemorySession
from ttmemory.services.background import job_prune_expired
from ttmemory.services.idempotency import IdempotencyKeyReusedError, idempotent_call


def _append(session: MemorySession, text: str) -> Any:
    def call() -> tuple[int, dict[str, Any]]:
        rows = memory.message_add(session=session, message=user(text))
        return 201, {"seq": rows.seq}

    return call


def test_a_key_runs_once_and_replays(session: MemorySession) -> None:
    args = {"namespace": "user-1", "scope": "s", "key": "k1", "fingerprint": "f"}
    assert idempotent_call(**args, call=_append(session, "a")) == (201, {"seq": 1}, False)
    assert idempotent_call(**args, call=_append(session, "a")) == (201, {"seq": 1}, True)
    assert memory.message_recent(session=session) == [user("a")]
    with pytest.raises(IdempotencyKeyReusedError):
        idempotent_call(**{**args, "fingerprint": "other"}, call=_append(session, "b"))
    raw = IdempotencyRecord.objects.get()
    assert raw.response == {"seq": 1} and raw.status_code == 201


def test_expired_records_are_pruned_and_a_reused_old_key_runs_again(
    session: MemorySession,
) -> None:
    args = {"namespace": "user-1", "scope": "s", "key": "k1", "fingerprint": "f"}
    idempotent_call(**args, call=_append(session, "a"))
    IdempotencyRecord.objects.update(created_at=timezone.now() - dt.timedelta(days=2))
    assert idempotent_call(**args, call=_append(session, "a")) == (201, {"seq": 2}, False)
    IdempotencyRecord.objects.update(created_at=timezone.now() - dt.timedelta(days=2))
    assert job_prune_expired()["pruned"]["idempotency_record"] == 1
    assert not IdempotencyRecord.objects.exists()


@pytest.mark.parametrize("key", ["", " ", "x" * 256, "a\nb"])
def test_bad_keys_are_refused_before_anything_runs(session: MemorySession, key: str) -> None:
    with pytest.raises(memory_validation_error()):
        idempotent_call(
            namespace="user-1", scope="s", key=key, fingerprint="f", call=_append(session, "a")
        )
    assert session.message_count == 0


def memory_validation_error() -> type[Exception]:
    from ttmemory.exceptions import MemoryValidationError

    return MemoryValidationError
