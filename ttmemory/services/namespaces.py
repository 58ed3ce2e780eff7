"""Whole-namespace operations: erase everything a namespace owns; session state variables."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from ttmemory import events
from ttmemory.backends.locks import get_lock, session_lock
from ttmemory.exceptions import MemoryValidationError
from ttmemory.fields import seal
from ttmemory.models import (
    Fact,
    FactTerm,
    IdempotencyRecord,
    LearnJob,
    MemorySession,
    Message,
    Profile,
    SessionLease,
    Snapshot,
)
from ttmemory.results import ErasureReceipt
from ttmemory.validation import clean_identifier, clean_json_object, merged

logger = logging.getLogger(__name__)


def namespace_erase(*, namespace: str) -> ErasureReceipt:
    """Delete every row of ``namespace`` in every ttmemory table, and its sessions' Redis keys.

    One transaction for the database; the receipt counts rows per table (no content). Queued
    tasks for the namespace find nothing and do nothing.
    """
    namespace = clean_identifier(namespace, field="namespace")
    with transaction.atomic():
        session_ids = list(
            MemorySession.objects.filter(namespace=namespace).values_list("pk", flat=True)
        )
        counts = {
            "message": Message.objects.filter(namespace=namespace).delete()[0],
            "snapshot": Snapshot.objects.filter(namespace=namespace).delete()[0],
            "session_lease": SessionLease.objects.filter(session_id__in=session_ids).delete()[0],
            "fact_term": FactTerm.objects.filter(namespace=namespace).delete()[0],
            "profile": Profile.objects.filter(namespace=namespace).delete()[0],
            "idempotency_record": IdempotencyRecord.objects.filter(namespace=namespace).delete()[0],
            "learn_job": LearnJob.objects.filter(namespace=namespace).delete()[0],
        }
        Fact.objects.filter(namespace=namespace).update(superseded_by=None)
        counts["fact"] = Fact.objects.filter(namespace=namespace).delete()[0]
        counts["memory_session"] = MemorySession.objects.filter(namespace=namespace).delete()[0]
        events.emit("namespace.erased", namespace=namespace, counts=counts)
    redis_keys = _erase_redis_keys(session_ids)
    return ErasureReceipt(
        namespace=namespace,
        counts=counts,
        redis_keys=redis_keys,
        erased_at=timezone.now().isoformat(),
    )


def _erase_redis_keys(session_ids: list[int]) -> int:
    lock = get_lock()
    erase = getattr(lock, "erase_sessions", None)
    if erase is None or not session_ids:
        return 0
    try:
        return int(erase(session_ids))
    except Exception:  # Redis down: lock keys expire by lease anyway
        logger.warning("could not delete Redis keys of an erased namespace", exc_info=True)
        return 0


def session_state_update(*, session: MemorySession, values: Mapping[str, Any]) -> dict[str, Any]:
    """Merge named variables into the session's state (None removes one); returns the state.

    The state is encrypted and shown by ``prompt_build``.
    """
    if not isinstance(values, Mapping) or not all(isinstance(k, str) and k for k in values):
        raise MemoryValidationError("values", "must be a JSON object with non-empty string keys")
    clean = clean_json_object(values, field="values")
    with session_lock(session):
        current = MemorySession.objects.filter(pk=session.pk).values_list("state", flat=True).get()
        state = merged(current, clean)
        MemorySession.objects.filter(pk=session.pk).update(
            state=seal(session, "state", state), updated_at=timezone.now()
        )
    session.state = state
    return state
