"""Snapshot reads: the timeline and what a rollback would change."""

from __future__ import annotations

from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message, Snapshot
from ttmemory.results import SnapshotDiff
from ttmemory.selectors.facts import facts_orphaned_by


def snapshot_list(*, session: MemorySession) -> list[Snapshot]:
    """The session's snapshots, newest first (payloads are decrypted only when read)."""
    return list(Snapshot.objects.filter(session=session).newest_first().defer("payload"))


def snapshot_diff(*, session: MemorySession, snapshot: Snapshot) -> SnapshotDiff:
    """What ``snapshot_rollback`` to ``snapshot`` would remove and restore, without changing it."""
    if snapshot.session_id != session.pk:
        raise MemoryValidationError("snapshot", "belongs to another session")
    # By pk AND session: the caller's ``snapshot.session_id`` is not proof of ownership.
    payload = (
        Snapshot.objects.filter(pk=snapshot.pk, session=session)
        .values_list("payload", flat=True)
        .first()
    )
    if payload is None:
        raise MemoryValidationError("snapshot", "no longer exists (removed by retention?)")
    live = {
        seq: (data, tokens)
        for seq, data, tokens in Message.objects.live()
        .filter(session=session)
        .values_list("seq", "data", "token_count")
    }
    snap = {m["seq"]: (m["data"], m["token_count"]) for m in payload["messages"]}
    remove = tuple((seq, live[seq][0]) for seq in sorted(set(live) - set(snap)))
    restore = tuple((seq, snap[seq][0]) for seq in sorted(set(snap) - set(live)))
    summary = MemorySession.objects.filter(pk=session.pk).values_list("summary", flat=True).get()
    doomed = facts_orphaned_by(session=session, removed_seqs=[seq for seq, _ in remove])
    return SnapshotDiff(
        remove=remove,
        restore=restore,
        tokens_removed=sum(live[seq][1] for seq, _ in remove),
        tokens_restored=sum(snap[seq][1] for seq, _ in restore),
        summary_changes=summary != payload["summary"],
        facts_superseded=tuple(doomed),
    )
