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


def test_an_expired_key_is_free_again_also_for_another_request(session: MemorySession) -> None:
    args = {"namespace": "user-1", "scope": "s", "key": "k1"}
    idempotent_call(**args, fingerprint="f", call=_append(session, "a"))
    IdempotencyRecord.objects.update(created_at=timezone.now() - dt.timedelta(days=2))
    # Past API_IDEMPOTENCY_SECONDS the key is not "reused": the new request runs and its
    # answer replaces the old one.
    assert idempotent_call(**args, fingerprint="g", call=_append(session, "b")) == (
        201,
        {"seq": 2},
        False,
    )
    assert idempotent_call(**args, fingerprint="g", call=_append(session, "b")) == (
        201,
        {"seq": 2},
        True,
    )
    record = IdempotencyRecord.objects.get()
    assert record.fingerprint == "g" and record.response == {"seq": 2}


def test_a_key_is_its_namespace_and_scope_s_own(session: MemorySession) -> None:
    other = memory.session_open(namespace="user-2", key="other")
    calls = [
        ({"namespace": "user-1", "scope": "s"}, session, "a", 1),
        ({"namespace": "user-1", "scope": "t"}, session, "b", 2),
        ({"namespace": "user-2", "scope": "s"}, other, "c", 1),
    ]
    for where, target, text, seq in calls:
        first = idempotent_call(**where, key="k", fingerprint=text, call=_append(target, text))
        assert first == (201, {"seq": seq}, False)
    for where, target, text, seq in calls:  # each replays its own answer
        again = idempotent_call(**where, key="k", fingerprint=text, call=_append(target, text))
        assert again == (201, {"seq": seq}, True)
    assert IdempotencyRecord.objects.count() == 3


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
