"""Whole-namespace operations: erase everything a namespace owns; session state variables."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.db import models
from django.utils import timezone

from ttmemory.backends.locks import get_lock, session_lock_hold
from ttmemory.exceptions import MemoryValidationError
from ttmemory.fields import seal
from ttmemory.models import (
    AuditEntry,
    Fact,
    FactGeneration,
    FactTerm,
    FactUsage,
    GraphCheckpoint,
    GraphCheckpointWrite,
    GraphStoreItem,
    IdempotencyRecord,
    LearnJob,
    LedgerEntry,
    MemorySession,
    Message,
    MessageEntry,
    MessageTerm,
    Profile,
    RateBucket,
    SessionLease,
    Snapshot,
)
from ttmemory.results import ErasureReceipt
from ttmemory.services.gate import change
from ttmemory.services.rows import SEQ_CHUNK
from ttmemory.validation import clean_json_object, merged

logger = logging.getLogger(__name__)


def namespace_erase(*, namespace: str) -> ErasureReceipt:
    """Delete every row of ``namespace`` in every ttmemory table, and its sessions' Redis keys.

    One transaction for the database, holding the lock of every session of the namespace
    (taken in id order, until the transaction ends), so an append, trim or rollback running
    meanwhile either finishes before the erase reads or finds its session gone afterwards
    (``MemorySession.DoesNotExist``); the erase itself always finishes. Erased: sessions,
    messages and their episodic index (``message_entry``, ``message_term``), snapshots,
    leases, facts and their terms, profiles, idempotency records, learn jobs, cost-ledger rows,
    and agent-framework state (graph checkpoints with their writes, store items). Kept by
    design (``receipt.kept``): the audit log, whose entries name the namespace with ids and
    counts but no content, so the erasure stays on record. A session opened after the erase
    took its locks is not erased. The receipt counts rows per table (no content). Queued tasks
    for the namespace find nothing and do nothing. Raises ``LegalHoldError`` naming the hold,
    deleting nothing, while the namespace or any of its sessions is under legal hold.
    """
    # Every session's lock is taken below (not one session's): the hold is checked after.
    with change("erase", namespace=namespace, stored=True, hold="check") as gate:
        namespace = gate.namespace
        session_ids = _lock_sessions(namespace)
        gate.refuse_if_held(any_session=True)
        counts = {
            "message": _delete_for_sessions(Message, session_ids),
            "message_term": _delete_for_sessions(MessageTerm, session_ids),
            "message_entry": MessageEntry.objects.filter(namespace=namespace).delete()[0],
            "snapshot": _delete_for_sessions(Snapshot, session_ids),
            "session_lease": _delete_for_sessions(SessionLease, session_ids),
            "fact_term": FactTerm.objects.filter(namespace=namespace).delete()[0],
            "profile": Profile.objects.filter(namespace=namespace).delete()[0],
            "idempotency_record": IdempotencyRecord.objects.filter(namespace=namespace).delete()[0],
            "learn_job": LearnJob.objects.filter(namespace=namespace).delete()[0],
            "ledger_entry": LedgerEntry.objects.filter(namespace=namespace).delete()[0],
            "rate_bucket": RateBucket.objects.filter(namespace=namespace).delete()[0],
            "graph_store_item": GraphStoreItem.objects.filter(namespace=namespace).delete()[0],
            "graph_checkpoint_write": GraphCheckpointWrite.objects.filter(
                namespace=namespace
            ).delete()[0],
            "graph_checkpoint": GraphCheckpoint.objects.filter(namespace=namespace).delete()[0],
        }
        Fact.objects.filter(namespace=namespace).update(superseded_by=None)
        counts["fact_usage"] = FactUsage.objects.filter(fact__namespace=namespace).delete()[0]
        counts["fact"] = Fact.objects.filter(namespace=namespace).delete()[0]
        # Its row was just given a new generation by the deletes; no row: recall keeps
        # nothing of the namespace in memory (ttmemory.models.generation).
        FactGeneration.objects.filter(namespace=namespace).delete()
        counts["memory_session"] = _delete_for_sessions(MemorySession, session_ids)
        kept = {"audit_entry": AuditEntry.objects.filter(namespace=namespace).count()}
        gate.emit("namespace.erased", counts=counts)
    redis_keys = _erase_redis_keys(session_ids)
    return ErasureReceipt(
        namespace=namespace,
        counts=counts,
        redis_keys=redis_keys,
        erased_at=timezone.now().isoformat(),
        kept=kept,
    )


def _lock_sessions(namespace: str) -> list[int]:
    """Lock every session of ``namespace`` until the transaction ends; return their ids.

    Listed again after each round, so a session opened while the locks were being taken is
    locked (and erased) too.
    """
    locked: set[int] = set()
    while True:
        listed = set(MemorySession.objects.filter(namespace=namespace).values_list("pk", flat=True))
        new = sorted(listed - locked)
        if not new:
            return sorted(locked)
        for session_id in new:
            session_lock_hold(session_id)
        locked.update(new)


def _delete_for_sessions(model: type[models.Model], session_ids: list[int]) -> int:
    """Delete ``model``'s rows of these sessions (its own rows for MemorySession)."""
    column = "pk" if model is MemorySession else "session_id"
    deleted = 0
    for start in range(0, len(session_ids), SEQ_CHUNK):
        chunk = session_ids[start : start + SEQ_CHUNK]
        deleted += model._default_manager.filter(**{f"{column}__in": chunk}).delete()[0]
    return deleted


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
    with change("state update", session=session):
        current = MemorySession.objects.filter(pk=session.pk).values_list("state", flat=True).get()
        state = merged(current, clean)
        MemorySession.objects.filter(pk=session.pk).update(
            state=seal(session, "state", state), updated_at=timezone.now()
        )
    session.state = state
    return state
