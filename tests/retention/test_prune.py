"""The data lifecycle: idle sessions expire, active and held ones live on, a rerun finds nothing."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from tests.conftest import user
from tests.retention.conftest import Clock
from ttmemory import memory
from ttmemory.exceptions import LegalHoldError
from ttmemory.models import (
    AuditEntry,
    Fact,
    FactUsage,
    LedgerEntry,
    MemorySession,
    Message,
    Snapshot,
)
from ttmemory.selectors.retention import session_expires_at
from ttmemory.services.audit import audit_record
from ttmemory.services.facts import facts_touch_recalled
from ttmemory.services.holds import legal_hold_lift, legal_hold_place
from ttmemory.services.ledger import ledger_record
from ttmemory.services.prune import prune_expired
from ttmemory.services.retention import retention_policy_set

DAY = dt.timedelta(days=1)


def chat(namespace: str, key: str, turns: int = 2) -> MemorySession:
    session = memory.session_open(namespace=namespace, key=key)
    memory.message_add_many(session=session, messages=[user(f"turn {n}") for n in range(turns)])
    return session


def rows_of(session: MemorySession) -> tuple[int, int, int]:
    return (
        MemorySession.objects.filter(pk=session.pk).count(),
        Message.objects.filter(session_id=session.pk).count(),
        Snapshot.objects.filter(session_id=session.pk).count(),
    )


def test_an_idle_session_expires_with_its_rows_and_an_active_one_lives_on(
    db: Any, clock: Clock, lifetimes: Any
) -> None:
    lifetimes(SESSION_TTL=dt.timedelta(days=30))
    idle = chat("user-1", "idle")
    memory.snapshot_create(session=idle, label="before")
    fact = memory.fact_remember(
        namespace="user-1", text="Ada prefers tea", source={"session": idle, "seqs": [1]}
    )
    active = chat("user-1", "active")
    clock.advance(days=20)
    memory.message_add(session=active, message=user("still here"))  # touched before expiry
    clock.advance(days=11)  # idle: 31 days since its last write; active: 11

    report = prune_expired()

    assert rows_of(idle) == (0, 0, 0)
    assert rows_of(active) == (1, 3, 0)
    assert report.counts["memory_session"] == 1
    assert report.counts["message"] == 2 and report.counts["snapshot"] == 1
    # The fact learned from it stays long-term memory, its source marked expired.
    kept = Fact.objects.get(pk=fact.pk)
    assert kept.source_session_id is None and kept.source_expired_at == clock.now
    assert memory.fact_recall(namespace="user-1", query="tea").hits
    # Counts, never content, in the audit trail and the ledger.
    entry = AuditEntry.objects.get(action="prune")
    assert entry.namespace == "user-1" and entry.actor == "ttmemory.prune_expired"
    assert entry.details["counts"]["memory_session"] == 1
    assert "turn" not in str(entry.details)
    assert LedgerEntry.objects.filter(namespace="user-1", purpose="prune").count() == 1


def test_a_second_run_deletes_nothing_and_records_nothing(
    db: Any, clock: Clock, lifetimes: Any
) -> None:
    lifetimes(
        SESSION_TTL=3600, SNAPSHOT_TTL=dt.timedelta(days=2), LEDGER_TTL=DAY, AUDIT_TTL=10 * DAY
    )
    for n in range(3):
        chat("user-2", f"s{n}")
    kept = chat("user-2", "kept")
    memory.snapshot_create(session=kept)
    ledger_record(namespace="user-2", purpose="extract", model="m", prompt_tokens=5)
    clock.advance(days=3)
    memory.message_add(session=kept, message=user("back"))  # lives on; its snapshot ages out

    first = prune_expired(batch_size=2)
    audit = AuditEntry.objects.count()
    second = prune_expired(batch_size=2)

    assert first.counts["memory_session"] == 3
    assert first.counts["snapshot"] == 1 and first.counts["ledger_entry"] == 1
    assert first.batches >= 2  # three sessions in batches of two
    assert second.total == 0 and second.counts == {}
    assert AuditEntry.objects.count() == audit  # nothing new to record
    assert rows_of(kept) == (1, 3, 0)


def test_a_held_session_survives_until_the_hold_is_lifted(
    db: Any, clock: Clock, lifetimes: Any
) -> None:
    lifetimes(SESSION_TTL=DAY)
    held = chat("user-3", "held")
    other = chat("user-3", "other")
    legal_hold_place(namespace="user-3", session=held, reason="case 2026-17", actor="legal")
    clock.advance(days=5)

    prune_expired()
    assert rows_of(held) == (1, 2, 0) and rows_of(other) == (0, 0, 0)
    with pytest.raises(LegalHoldError, match="case 2026-17"):
        memory.session_delete(session=held)
    with pytest.raises(LegalHoldError, match="under legal hold"):
        memory.namespace_erase(namespace="user-3")
    assert rows_of(held) == (1, 2, 0)

    assert legal_hold_lift(namespace="user-3", session=held, actor="legal")
    prune_expired()
    assert rows_of(held) == (0, 0, 0)
    actions = list(AuditEntry.objects.order_by("pk").values_list("action", flat=True))
    assert actions == ["hold", "prune", "hold_lift", "prune"]


def test_a_namespace_hold_suspends_every_deletion_there(
    db: Any, clock: Clock, lifetimes: Any
) -> None:
    lifetimes(SESSION_TTL=DAY, LEDGER_TTL=DAY, AUDIT_TTL=DAY)
    held = chat("acme/held", "a")
    memory.fact_remember(namespace="acme/held", text="gone soon", expires_at=clock.now + DAY)
    fact = memory.fact_remember(namespace="acme/held", text="Ada likes jazz")
    ledger_record(namespace="acme/held", purpose="extract", model="m")
    audit_record(action="export", namespace="acme/held", actor="ops")
    free = chat("acme/free", "a")
    legal_hold_place(namespace="acme/held", reason="litigation", actor="legal")
    clock.advance(days=3)

    report = prune_expired()

    assert rows_of(held) == (1, 2, 0) and rows_of(free) == (0, 0, 0)
    assert Fact.objects.filter(namespace="acme/held").count() == 2
    assert LedgerEntry.objects.filter(namespace="acme/held").count() == 1
    assert AuditEntry.objects.filter(namespace="acme/held").count() == 2  # export + hold
    assert set(report.by_namespace) == {"acme/free"}
    with pytest.raises(LegalHoldError) as refused:
        memory.namespace_erase(namespace="acme/held")
    assert refused.value.namespace == "acme/held" and refused.value.session_id is None
    assert "namespace 'acme/held' is under legal hold (litigation)" in str(refused.value)
    with pytest.raises(LegalHoldError):
        memory.session_clear(session=held)
    with pytest.raises(LegalHoldError):
        memory.fact_forget(namespace="acme/held", fact_id=fact.pk)
    assert Message.objects.filter(session=held).count() == 2


def test_archive_mode_archives_then_archived_messages_age_out(
    db: Any, clock: Clock, lifetimes: Any
) -> None:
    lifetimes(SESSION_TTL=DAY, SESSION_EXPIRY="archive", ARCHIVED_MESSAGE_TTL=10 * DAY)
    session = chat("user-4", "cold")
    clock.advance(days=2)

    report = prune_expired()

    assert report.counts == {"session_archived": 1, "message_archived": 2}
    session.refresh_from_db()
    assert memory.message_recent(session=session) == []
    assert session.message_count == 0 and Message.objects.filter(session=session).count() == 2
    assert session_expires_at(session=session) is None  # nothing live left to expire
    assert prune_expired().total == 0
    clock.advance(days=11)
    assert prune_expired().counts == {"archived_message": 2}
    assert rows_of(session) == (1, 0, 0)


def test_a_namespace_policy_overrides_the_settings(db: Any, clock: Clock, lifetimes: Any) -> None:
    lifetimes(SESSION_TTL=dt.timedelta(days=90))
    short = chat("user-short", "a")
    forever = chat("user-forever", "a")
    default = chat("user-default", "a")
    retention_policy_set(namespace="user-short", session_ttl=dt.timedelta(days=7))
    retention_policy_set(namespace="user-forever", session_ttl=0)
    clock.advance(days=8)
    assert session_expires_at(session=short) == short.updated_at + dt.timedelta(days=7)
    assert session_expires_at(session=forever) is None

    prune_expired()
    assert rows_of(short)[0] == 0 and rows_of(default)[0] == 1

    clock.advance(days=100)
    prune_expired()
    assert rows_of(default)[0] == 0 and rows_of(forever)[0] == 1


def test_expires_at_moves_on_with_every_write(db: Any, clock: Clock, lifetimes: Any) -> None:
    lifetimes(SESSION_TTL=dt.timedelta(hours=1))
    session = chat("user-5", "a")
    assert session_expires_at(session=session) == clock.now + dt.timedelta(hours=1)
    clock.advance(minutes=50)
    memory.message_add(session=session, message=user("again"))
    assert session_expires_at(session=session) == clock.now + dt.timedelta(hours=1)


def test_without_lifetimes_nothing_but_expired_facts_goes(db: Any, clock: Clock) -> None:
    """The defaults keep today's behaviour: sessions, snapshots, ledger and audit forever."""
    session = chat("user-6", "a")
    memory.snapshot_create(session=session)
    ledger_record(namespace="user-6", purpose="extract", model="m")
    memory.fact_remember(namespace="user-6", text="old news", expires_at=clock.now + DAY)
    clock.advance(days=3650)
    assert prune_expired().counts == {"fact": 1}
    assert rows_of(session) == (1, 2, 1) and session_expires_at(session=session) is None


def test_a_stopped_run_resumes_where_it_left_off(db: Any, clock: Clock, lifetimes: Any) -> None:
    lifetimes(SESSION_TTL=DAY)
    sessions = [chat("user-7", f"s{n}") for n in range(4)]
    clock.advance(days=2)
    seen: list[str] = []

    def crash_in_second_batch(execute: Any, sql: str, *args: Any) -> Any:
        if sql.startswith('DELETE FROM "ttmemory_memorysession"'):
            seen.append(sql)
            if len(seen) == 2:
                raise RuntimeError("worker killed")
        return execute(sql, *args)

    with connection.execute_wrapper(crash_in_second_batch), pytest.raises(RuntimeError):
        prune_expired(batch_size=2)
    # Two messages a session, batches of two rows: one session per batch. The first batch
    # committed; the second rolled back whole (its session and messages are all there).
    assert [rows_of(s) for s in sessions] == [(0, 0, 0)] + [(1, 2, 0)] * 3

    assert prune_expired(batch_size=2).counts["memory_session"] == 3
    assert sum(rows_of(s)[0] for s in sessions) == 0


def test_the_command_shows_progress_and_counts(db: Any, clock: Clock, lifetimes: Any) -> None:
    lifetimes(SESSION_TTL=DAY)
    for n in range(3):
        chat("user-8", f"s{n}")
    clock.advance(days=2)
    out, err = io.StringIO(), io.StringIO()
    call_command("ttmemory_prune", "--batch-size", "1", stdout=out, stderr=err)
    assert "expired sessions deleted: 3" in out.getvalue()
    assert "messages of expired sessions deleted: 6" in out.getvalue()
    assert "... sessions: 3" in err.getvalue()


def test_recall_statistics_left_by_a_raw_delete_are_swept(db: Any, clock: Clock) -> None:
    """FactUsage has no database constraint: a fact deleted behind the services' back leaves
    its counts; the prune job removes them, keeps everyone else's, and then finds nothing."""
    kept, gone, also_gone = (
        memory.fact_remember(namespace="user-9", text=text)
        for text in ("Ada likes tea", "Ada likes jazz", "Ada likes chess")
    )
    facts_touch_recalled(counts=[(kept.pk, 3), (gone.pk, 1), (also_gone.pk, 2)])
    with connection.cursor() as cursor:  # what a hand-written cleanup script might do
        for table, column in (("ttmemory_factterm", "fact_id"), ("ttmemory_fact", "id")):
            cursor.execute(
                f"DELETE FROM {table} WHERE {column} IN (%s, %s)", [gone.pk, also_gone.pk]
            )
    assert FactUsage.objects.count() == 3

    out = io.StringIO()
    call_command("ttmemory_prune", "--batch-size", "1", stdout=out, stderr=io.StringIO())
    assert "recall statistics of deleted facts removed: 2" in out.getvalue()
    assert list(FactUsage.objects.values_list("pk", "recall_count")) == [(kept.pk, 3)]
    assert Fact.objects.get(pk=kept.pk).recall_count == 3
    again = prune_expired()
    assert again.total == 0 and again.batches == 0
