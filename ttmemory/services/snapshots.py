"""Snapshots: capture a session's whole state, and roll back to it safely under the session lock."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import F
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ttmemory.conf import app_settings
from ttmemory.exceptions import DecryptionError, MemoryValidationError, SnapshotIntegrityError
from ttmemory.fields import seal
from ttmemory.models import MemorySession, Message, Snapshot, SnapshotKind
from ttmemory.results import RollbackResult
from ttmemory.selectors.retention import legal_hold_find
from ttmemory.services.episodes import index_delete_locked
from ttmemory.services.facts import facts_supersede_sources
from ttmemory.services.gate import change
from ttmemory.services.rows import (
    MESSAGE_STATE_FIELDS,
    SEQ_CHUNK,
    insert_messages,
    touch_session,
)

PAYLOAD_VERSION = 1


def snapshot_create(
    *,
    session: MemorySession,
    label: str = "",
    kind: str = SnapshotKind.MANUAL,
    created_by: AbstractBaseUser | None = None,
) -> Snapshot:
    """Store the session's live messages, summary and counters as one encrypted snapshot.

    Taken under the session lock, so it is a state some serial order of writes produced. Then
    retention keeps at most ``MAX_SNAPSHOTS_PER_SESSION`` (the new one always stays).
    """
    label = _clean_label(label)
    if kind not in SnapshotKind.values:
        raise MemoryValidationError("kind", f"must be one of {', '.join(SnapshotKind.values)}")
    with change("snapshot", session=session, hold="allow") as gate:
        snapshot = take_snapshot_locked(session, label=label, kind=kind, created_by=created_by)
        apply_retention_locked(session, protect={snapshot.pk})
        gate.emit(
            "snapshot.created",
            counts={"messages": snapshot.message_count},
            ids={"snapshot": snapshot.pk},
        )
    return snapshot


def snapshot_rollback(
    *,
    session: MemorySession,
    snapshot: Snapshot,
    safe: bool = True,
    created_by: AbstractBaseUser | None = None,
) -> Snapshot | None:
    """Restore ``session`` to ``snapshot`` exactly, in one transaction under the session lock.

    With ``safe`` (the default) the current state is first stored as a safety snapshot, which
    is returned: rolling back to it undoes this rollback. Messages added after the snapshot are
    deleted (the safety snapshot keeps them); messages trimmed or cleared since are restored;
    summary and counters are the snapshot's. Facts whose only sources were removed messages are
    superseded (ended, not deleted). Seqs are never reused: the next message continues after
    the highest seq ever assigned. Raises MemoryValidationError if the snapshot belongs to
    another session and SnapshotIntegrityError if its payload fails authentication (tampered,
    moved, or its key is gone) or disagrees with the snapshot's counters.
    ``snapshot_rollback_detailed`` returns the full ``RollbackResult``.
    """
    return snapshot_rollback_detailed(
        session=session, snapshot=snapshot, safe=safe, created_by=created_by
    ).safety


def snapshot_rollback_detailed(
    *,
    session: MemorySession,
    snapshot: Snapshot,
    safe: bool = True,
    created_by: AbstractBaseUser | None = None,
) -> RollbackResult:
    """``snapshot_rollback`` returning what changed: seqs removed and restored, facts ended."""
    if snapshot.session_id != session.pk:
        raise MemoryValidationError("snapshot", "belongs to another session")
    with change("rollback", session=session, hold="check") as gate:
        stored = Snapshot.objects.filter(pk=snapshot.pk, session=session).first()
        if stored is None:
            raise MemoryValidationError("snapshot", "no longer exists (removed by retention?)")
        try:  # the payload is decrypted here, on first access, bound to its row
            payload = stored.payload
        except DecryptionError as exc:
            raise SnapshotIntegrityError(
                f"snapshot {snapshot.pk} cannot be restored: {exc}; nothing was restored"
            ) from exc
        verify_payload(stored, payload)
        # A rollback deletes live messages (safe or not): a hold freezes them.
        gate.refuse_if_held()
        safety = None
        if safe:
            safety = take_snapshot_locked(
                session,
                label=f"before rollback to snapshot {stored.pk}",
                kind=SnapshotKind.SAFETY,
                created_by=created_by,
            )
        live = set(Message.objects.live().filter(session=session).values_list("seq", flat=True))
        wanted = {m["seq"] for m in payload["messages"]}
        removed = sorted(live - wanted)
        restore_locked(session, payload)
        superseded = facts_supersede_sources(gate=gate, removed_seqs=removed)
        apply_retention_locked(session, protect={safety.pk} if safety else set())
        gate.emit(
            "snapshot.rolled_back",
            counts={
                "removed": len(removed),
                "restored": len(wanted - live),
                "facts_superseded": len(superseded),
            },
            ids={"snapshot": stored.pk, "safety": safety.pk if safety else None},
        )
    return RollbackResult(
        safety=safety,
        removed_seqs=tuple(removed),
        restored_seqs=tuple(sorted(wanted - live)),
        superseded_facts=superseded,
    )


def capture_state_locked(session: MemorySession) -> dict[str, Any]:
    """The session's state as a JSON payload. Call holding the session lock."""
    touch_session(session)
    summary, summary_upto = (
        MemorySession.objects.filter(pk=session.pk).values_list("summary", "summary_upto_seq").get()
    )
    rows = (
        Message.objects.live()
        .filter(session=session)
        .order_by("seq")
        .values_list(*MESSAGE_STATE_FIELDS)
    )
    messages = []
    for row in rows:
        message = dict(zip(MESSAGE_STATE_FIELDS, row, strict=True))
        message["created_at"] = message["created_at"].isoformat()
        messages.append(message)
    return {
        "version": PAYLOAD_VERSION,
        "messages": messages,
        "summary": summary,
        "summary_upto_seq": summary_upto,
        "message_count": session.message_count,
        "token_count": session.token_count,
        "last_seq": session.last_seq,
    }


def take_snapshot_locked(
    session: MemorySession,
    *,
    label: str,
    kind: str,
    created_by: AbstractBaseUser | None = None,
) -> Snapshot:
    """Capture and store a snapshot. Call holding the session lock."""
    payload = capture_state_locked(session)
    return Snapshot.objects.create(
        session=session,
        namespace=session.namespace,
        label=label,
        kind=kind,
        payload=payload,
        message_count=payload["message_count"],
        token_count=payload["token_count"],
        upto_seq=payload["last_seq"],
        created_by_id=getattr(created_by, "pk", None),
    )


def restore_locked(session: MemorySession, payload: dict[str, Any]) -> None:
    """Make the live history, summary and counters equal to ``payload``. Call holding the lock."""
    if payload.get("version") != PAYLOAD_VERSION:
        raise SnapshotIntegrityError(f"unknown snapshot payload version {payload.get('version')!r}")
    touch_session(session)
    live = Message.objects.live().filter(session=session)
    seqs = [m["seq"] for m in payload["messages"]]
    # A seq always holds the same message: restored ones keep their index rows.
    restored = set(seqs)
    gone = [seq for seq in live.values_list("seq", flat=True) if seq not in restored]
    index_delete_locked(session, gone)
    live.delete()
    for start in range(0, len(seqs), SEQ_CHUNK):  # archived copies of restored messages
        Message.objects.filter(session=session, seq__in=seqs[start : start + SEQ_CHUNK]).delete()
    rows = [
        Message(
            session=session,
            namespace=session.namespace,
            seq=m["seq"],
            role=m["role"],
            data=m["data"],
            token_count=m["token_count"],
            tool_call_id=m["tool_call_id"],
            tool_call_ids=m["tool_call_ids"],
            group_seq=m["group_seq"],
            created_at=parse_datetime(m["created_at"]) or timezone.now(),
        )
        for m in payload["messages"]
    ]
    insert_messages(rows)
    now = timezone.now()
    MemorySession.objects.filter(pk=session.pk).update(
        message_count=payload["message_count"],
        token_count=payload["token_count"],
        summary=seal(session, "summary", payload["summary"]),
        summary_upto_seq=payload["summary_upto_seq"],
        history_version=F("history_version") + 1,  # never restored: a rollback is a new state
        updated_at=now,
    )
    session.message_count = payload["message_count"]
    session.token_count = payload["token_count"]
    session.summary = payload["summary"]
    session.summary_upto_seq = payload["summary_upto_seq"]
    session.updated_at = now


def apply_retention_locked(session: MemorySession, *, protect: set[int]) -> int:
    """Delete the oldest snapshots beyond ``MAX_SNAPSHOTS_PER_SESSION``; ``protect`` stays.

    Returns how many were deleted (none while the session or its namespace is under legal
    hold). Call holding the session lock.
    """
    if legal_hold_find(namespace=session.namespace, session_id=session.pk) is not None:
        return 0  # a hold keeps every snapshot (beyond the limit too) until it is lifted
    limit = app_settings.MAX_SNAPSHOTS_PER_SESSION
    ordered = list(
        Snapshot.objects.filter(session=session).newest_first().values_list("pk", flat=True)
    )
    ranked = [pk for pk in ordered if pk in protect] + [pk for pk in ordered if pk not in protect]
    doomed = ranked[max(limit, len(protect & set(ordered))) :]
    if doomed:
        Snapshot.objects.filter(pk__in=doomed).delete()
    return len(doomed)


def verify_payload(snapshot: Snapshot, payload: Any) -> None:
    """SnapshotIntegrityError unless ``payload`` is the one ``snapshot`` was stored with.

    AES-256-GCM has already authenticated the payload (a changed byte fails to decrypt); this
    checks that the counters it carries agree with the snapshot's clear columns, so a payload
    copied from another snapshot of the session is refused too. Snapshots keep no digest of
    their own: an unkeyed hash of the plaintext would let anyone holding the database test
    guesses of the content, and a keyed one would only repeat what GCM's tag proves.
    """
    expected = {
        "message_count": snapshot.message_count,
        "token_count": snapshot.token_count,
        "last_seq": snapshot.upto_seq,
    }
    if not isinstance(payload, dict) or any(
        payload.get(name) != value for name, value in expected.items()
    ):
        raise SnapshotIntegrityError(
            f"snapshot {snapshot.pk}'s payload does not match its counters; nothing was restored"
        )


def _clean_label(label: Any) -> str:
    if not isinstance(label, str):
        raise MemoryValidationError("label", "must be a string")
    if len(label) > 200:
        raise MemoryValidationError("label", f"is {len(label)} characters; the limit is 200")
    return label
