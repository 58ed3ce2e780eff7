"""The prune: applies every lifetime, in bounded batches, leaving what a legal hold covers.

``prune_expired`` applies every lifetime (``SESSION_TTL``, ``ARCHIVED_MESSAGE_TTL``,
``SNAPSHOT_TTL``, ``LEDGER_TTL``, ``AUDIT_TTL``, each overridable per namespace by a
``RetentionPolicy``: ``services/retention.py``) plus the expiry of facts, profiles and
Idempotency-Key answers. It works in bounded batches, each its own transaction holding the
locks of the sessions it touches, and re-checks every row under those locks: a session written
to meanwhile lives on, a row under a legal hold stays. Progress is the data itself (what is
gone is gone), so a run stopped half-way resumes where it left off and a second run right
after deletes nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connection, models, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from ttmemory.backends.locks import session_lock_hold
from ttmemory.conf import app_settings
from ttmemory.exceptions import LockTimeout
from ttmemory.models import (
    AuditEntry,
    Fact,
    FactUsage,
    IdempotencyRecord,
    LearnJob,
    LedgerEntry,
    LegalHold,
    MemorySession,
    Message,
    MessageEntry,
    MessageTerm,
    Profile,
    RetentionPolicy,
    Snapshot,
)
from ttmemory.results import PruneReport
from ttmemory.selectors.retention import lifetime
from ttmemory.services.episodes import index_delete_locked
from ttmemory.services.gate import Change, change
from ttmemory.services.ledger import ledger_record

logger = logging.getLogger(__name__)
# Who the audit trail and the ledger name for what the prune did.
PRUNE_ACTOR = "ttmemory.prune_expired"
Progress = Callable[[str, int], None]


class _Holds:
    """The holds in force, read inside each batch's transaction (a new hold wins at once)."""

    def __init__(self) -> None:
        self.namespaces: set[str] = set()
        self.sessions: set[int] = set()
        for namespace, session_id in LegalHold.objects.values_list("namespace", "session_id"):
            if session_id is None:
                self.namespaces.add(namespace)
            else:
                self.sessions.add(session_id)

    def exclude(self, *, session_field: str | None) -> Q:
        """Rows outside every hold."""
        free = ~Q(namespace__in=sorted(self.namespaces)) if self.namespaces else Q()
        if session_field and self.sessions:
            free &= ~Q(**{f"{session_field}__in": sorted(self.sessions)})
        return free


def _cutoffs(
    policies: dict[str, RetentionPolicy], field: str, default: dt.timedelta | None, now: dt.datetime
) -> Iterator[tuple[Q, dt.datetime, RetentionPolicy | None]]:
    """(namespace filter, cutoff, policy) for each group sharing one lifetime of ``field``:
    the namespaces without their own value (the setting), then each with one."""
    own = sorted(ns for ns, policy in policies.items() if getattr(policy, field) is not None)
    if default is not None:
        yield (~Q(namespace__in=own) if own else Q()), now - default, None
    for namespace in own:
        ttl = lifetime(getattr(policies[namespace], field), default)
        if ttl is not None:
            yield Q(namespace=namespace), now - ttl, policies[namespace]


def _rows_chunks(page: list[tuple[int, int]], budget: int) -> Iterator[list[int]]:
    """Split (session id, last_seq) pairs so each chunk holds about ``budget`` message rows
    (``last_seq`` bounds a session's rows); one large session is a chunk of its own."""
    chunk: list[int] = []
    rows = 0
    for session_id, last_seq in page:
        if chunk and rows + last_seq > budget:
            yield chunk
            chunk, rows = [], 0
        chunk.append(session_id)
        rows += last_seq + 1
    if chunk:
        yield chunk


def _expire_sessions(
    gate: Change,
    report: PruneReport,
    policies: dict[str, RetentionPolicy],
    now: dt.datetime,
    batch: int,
    progress: Progress | None,
) -> None:
    default_mode = app_settings.SESSION_EXPIRY
    # Namespaces whose policy sets only the mode stay in the default group, with their mode.
    modes = {ns: policy.session_expiry for ns, policy in policies.items() if policy.session_expiry}
    groups = _cutoffs(policies, "session_ttl", app_settings.SESSION_TTL, now)
    # Held when the run starts: not even listed (each batch reads the holds again).
    free = _Holds().exclude(session_field="pk")
    for namespaces, cutoff, _ in groups:
        due = MemorySession.objects.filter(namespaces, updated_at__lte=cutoff)
        cursor = 0
        while True:
            page = list(
                due.filter(free, pk__gt=cursor)
                .order_by("pk")
                .values_list("pk", "last_seq", "namespace", "message_count")[:batch]
            )
            if not page:
                break
            cursor = page[-1][0]
            split: dict[str, list[tuple[int, int]]] = {}
            for pk, last_seq, namespace, live in page:
                mode = modes.get(namespace) or default_mode
                if mode == "archive" and not live:
                    continue  # archived already: nothing left to expire
                split.setdefault(mode, []).append((pk, last_seq))
            for mode, pairs in split.items():
                for chunk in _rows_chunks(pairs, batch):
                    report.batches += 1
                    try:
                        _expire_locked(gate, report, due, chunk, mode, now)
                    except LockTimeout:
                        _skip(report, len(chunk), "session")
                    if progress is not None:
                        progress("sessions", report.counts.get("memory_session", 0))


def _expire_locked(
    gate: Change,
    report: PruneReport,
    due: models.QuerySet[MemorySession],
    ids: list[int],
    mode: str,
    now: dt.datetime,
) -> None:
    """Expire the sessions ``ids`` still due, in one transaction holding their locks."""
    with transaction.atomic():
        for session_id in sorted(ids):
            session_lock_hold(session_id)
        holds = _Holds()
        # Read again under the locks: an append that got in first moved updated_at on.
        still = due.filter(pk__in=ids).filter(holds.exclude(session_field="pk"))
        if mode == "archive":
            still = still.filter(message_count__gt=0)
        rows = list(still.values_list("pk", "namespace"))
        by_namespace: dict[str, list[int]] = {}
        for pk, namespace in rows:
            by_namespace.setdefault(namespace, []).append(pk)
        for namespace, pks in by_namespace.items():
            if mode == "archive":
                archived = Message.objects.filter(
                    session_id__in=pks, archived_at__isnull=True
                ).update(archived_at=now)
                # updated_at stays: archiving is not activity (the session does not live on).
                MemorySession.objects.filter(pk__in=pks).update(
                    message_count=0, token_count=0, history_version=F("history_version") + 1
                )
                report.add(namespace, "session_archived", len(pks))
                report.add(namespace, "message_archived", archived)
                counts = {"sessions_archived": len(pks), "messages_archived": archived}
            else:
                # Facts learned from them stay long-term memory, their source marked expired.
                facts = Fact.objects.filter(source_session_id__in=pks).update(
                    source_session=None, source_expired_at=now
                )
                messages = Message.objects.filter(session_id__in=pks).delete()[0]
                MessageTerm.objects.filter(session_id__in=pks).delete()
                MessageEntry.objects.filter(session_id__in=pks).delete()
                snapshots = Snapshot.objects.filter(session_id__in=pks).delete()[0]
                LearnJob.objects.filter(session_id__in=pks).update(session=None)
                # Every row pointing at them is gone or unlinked above (a held session was left
                # out, and its hold's foreign key would refuse this anyway): one plain DELETE,
                # without the collector fetching and decrypting each session first.
                MemorySession.objects.filter(pk__in=pks)._raw_delete(connection.alias)
                report.add(namespace, "memory_session", len(pks))
                report.add(namespace, "message", messages)
                report.add(namespace, "snapshot", snapshots)
                report.add(namespace, "fact_source_expired", facts)
                counts = {"sessions": len(pks), "messages": messages, "snapshots": snapshots}
            gate.emit("session.expired", namespace=namespace, counts=counts, ids={"sessions": pks})


def _prune_rows(
    report: PruneReport,
    kind: str,
    model: type[models.Model],
    groups: Iterator[tuple[Q, dt.datetime, RetentionPolicy | None]],
    time_field: str,
    batch: int,
    progress: Progress | None,
    *,
    session_field: str | None = None,
) -> None:
    """Delete ``model`` rows whose ``time_field`` is at or before each group's cutoff.

    With ``session_field`` the rows belong to sessions: each batch takes their locks first (so
    no rollback or summary reads a row as it goes) and moves their ``history_version`` on.
    """
    manager = model._default_manager
    fields = ["pk", "namespace", time_field] + ([session_field] if session_field else [])
    free = _Holds().exclude(session_field=session_field)
    for namespaces, cutoff, _ in groups:
        due = manager.filter(namespaces, **{f"{time_field}__lte": cutoff})
        # Pages in (time, pk) order, from where the last one ended: the index on the time
        # column finds each page at once, and rows left behind (held) are never read again.
        after = Q()
        while True:
            page = list(
                due.filter(free, after).order_by(time_field, "pk").values_list(*fields)[:batch]
            )
            if not page:
                break
            last_pk, last_time = page[-1][0], page[-1][2]
            after = Q(**{f"{time_field}__gt": last_time}) | Q(
                **{time_field: last_time, "pk__gt": last_pk}
            )
            report.batches += 1
            sessions = sorted({row[3] for row in page}) if session_field else []
            try:
                rows = _delete_page(due, [row[0] for row in page], sessions, session_field)
            except LockTimeout:
                _skip(report, len(page), kind)
                continue
            for _, namespace in rows:
                report.add(namespace, kind, 1)
            if progress is not None:
                progress(kind, report.counts.get(kind, 0))


def _delete_page(
    due: models.QuerySet[Any], ids: list[int], sessions: list[int], session_field: str | None
) -> list[tuple[int, str]]:
    """Delete the rows ``ids`` still due and not held, holding the locks of ``sessions``."""
    with transaction.atomic():
        for session_id in sessions:
            session_lock_hold(session_id)
        holds = _Holds()
        still = due.filter(pk__in=ids).filter(holds.exclude(session_field=session_field))
        rows = list(still.values_list("pk", "namespace"))
        if due.model is Message:
            # Their episodic index rows go with them (keyed by session and seq, no cascade).
            gone: dict[int, list[int]] = {}
            for session_id, seq in Message.objects.filter(
                pk__in=[pk for pk, _ in rows]
            ).values_list("session_id", "seq"):
                gone.setdefault(session_id, []).append(seq)
            for session_id, seqs in gone.items():
                index_delete_locked(session_id, seqs)
        due.model._default_manager.filter(pk__in=[pk for pk, _ in rows]).delete()
        if sessions:
            MemorySession.objects.filter(pk__in=sessions).update(
                history_version=F("history_version") + 1
            )
    return rows


def _skip(report: PruneReport, rows: int, kind: str) -> None:
    """A batch whose session lock stayed busy past LOCK_TIMEOUT: left for the next run."""
    report.skipped += rows
    logger.warning(
        "ttmemory prune: %d %s rows skipped, a session lock was busy; the next run takes them",
        rows,
        kind,
    )


def _fixed(cutoff: dt.datetime) -> Iterator[tuple[Q, dt.datetime, RetentionPolicy | None]]:
    yield Q(), cutoff, None


def prune_expired(
    *,
    now: dt.datetime | None = None,
    batch_size: int | None = None,
    progress: Progress | None = None,
) -> PruneReport:
    """Apply every lifetime once, in batches of at most ``batch_size`` rows (``BATCH_SIZE``).

    Deletes (or, with ``SESSION_EXPIRY = "archive"``, archives) sessions idle longer than their
    ``SESSION_TTL`` with their messages and snapshots; archived messages, snapshots, ledger and
    audit entries older than their lifetimes; facts and profiles past ``expires_at``; and
    Idempotency-Key answers older than ``API_IDEMPOTENCY_SECONDS``. Nothing under a legal hold
    is touched. Facts learned from an expired session stay long-term memory with
    ``source_expired_at`` set. Each namespace that lost rows gets one audit entry (action
    ``prune``, counts only) and one ledger entry (purpose ``prune``). ``progress(kind, done)``
    is called after each batch. Returns the counts.
    """
    started = time.perf_counter()
    now = now or timezone.now()
    batch = batch_size or app_settings.BATCH_SIZE
    report = PruneReport()
    # Across namespaces, in batches that are each a transaction: every batch leaves held
    # rows out, read under its locks (_Holds), rather than refusing the whole run.
    with change("prune", atomic=False, hold="allow") as gate:
        policies = {policy.namespace: policy for policy in RetentionPolicy.objects.all()}
        _expire_sessions(gate, report, policies, now, batch, progress)
        steps: list[tuple[str, type[models.Model], Any, str, str | None]] = [
            (
                "archived_message",
                Message,
                _cutoffs(policies, "archived_message_ttl", app_settings.ARCHIVED_MESSAGE_TTL, now),
                "archived_at",
                "session_id",
            ),
            (
                "snapshot",
                Snapshot,
                _cutoffs(policies, "snapshot_ttl", app_settings.SNAPSHOT_TTL, now),
                "created_at",
                "session_id",
            ),
            ("fact", Fact, _fixed(now), "expires_at", None),
            ("profile", Profile, _fixed(now), "expires_at", None),
            (
                "idempotency_record",
                IdempotencyRecord,
                _fixed(now - dt.timedelta(seconds=app_settings.API_IDEMPOTENCY_SECONDS)),
                "created_at",
                None,
            ),
            (
                "ledger_entry",
                LedgerEntry,
                _cutoffs(policies, "ledger_ttl", app_settings.LEDGER_TTL, now),
                "created_at",
                None,
            ),
        ]
        audit_ttl = app_settings.AUDIT_TTL
        if audit_ttl is not None:
            steps.append(("audit_entry", AuditEntry, _fixed(now - audit_ttl), "created_at", None))
        for kind, model, groups, time_field, session_field in steps:
            _prune_rows(
                report,
                kind,
                model,
                groups,
                time_field,
                batch,
                progress,
                session_field=session_field,
            )
        _sweep_orphan_usage(report, batch, progress)
        report.seconds = time.perf_counter() - started
        _record(gate, report)
    return report


def _sweep_orphan_usage(report: PruneReport, batch: int, progress: Progress | None) -> None:
    """Delete recall statistics whose fact is gone (``fact_usage_orphan``, counted in total only:
    the row no longer says whose namespace it was).

    ``FactUsage`` has no foreign-key constraint in the database (models/fact.py), so a count
    written while its fact was being deleted, or a fact deleted by raw SQL, leaves its row
    behind. Nothing reads such a row; this keeps the table from growing with them. Pages in
    ``pk`` order; each delete checks again that the fact is still gone.
    """
    orphans = FactUsage.objects.filter(~Exists(Fact.objects.filter(pk=OuterRef("pk"))))
    after = 0
    while True:
        ids = list(orphans.filter(pk__gt=after).order_by("pk").values_list("pk", flat=True)[:batch])
        if not ids:
            return
        after = ids[-1]
        report.batches += 1
        deleted = orphans.filter(pk__in=ids)._raw_delete(connection.alias)
        if deleted:
            report.counts["fact_usage_orphan"] = report.counts.get("fact_usage_orphan", 0) + deleted
            if progress is not None:
                progress("fact_usage_orphan", report.counts["fact_usage_orphan"])


def _record(gate: Change, report: PruneReport) -> None:
    """One audit entry and one ledger entry per namespace that lost rows: counts, no content."""
    if not report.by_namespace:
        return
    total = max(1, report.total)
    with transaction.atomic():
        for namespace, counts in sorted(report.by_namespace.items()):
            gate.audit(
                action="prune", namespace=namespace, actor=PRUNE_ACTOR, details={"counts": counts}
            )
            ledger_record(
                namespace=namespace,
                purpose="prune",
                model=PRUNE_ACTOR,
                latency_ms=report.seconds * 1000 * sum(counts.values()) / total,
            )
