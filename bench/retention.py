"""The prune job's cost: rows deleted per second when sessions expire and archives age out.

Seeds sessions of one namespace of its own (messages, a snapshot and a learned fact each),
gives that namespace a one-hour retention policy, and times ``prune_expired`` with its clock
two hours ahead: every session expires. Then the same for archived messages only, and a run
with nothing due (what an hourly beat costs on a quiet database). Removes what it made.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.utils import timezone

from ttmemory import memory
from ttmemory.models import AuditEntry, Fact, LedgerEntry, MemorySession, Message, RetentionPolicy
from ttmemory.services.prune import prune_expired
from ttmemory.services.retention import retention_policy_set

HOUR = dt.timedelta(hours=1)


def _seed(namespace: str, sessions: int, messages: int) -> list[MemorySession]:
    made = []
    for n in range(sessions):
        session = memory.session_open(namespace=namespace, key=f"s{n}")
        memory.message_add_many(
            session=session,
            messages=[
                {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} of {n}"}
                for i in range(messages)
            ],
        )
        memory.snapshot_create(session=session, label="bench")
        memory.fact_remember(
            namespace=namespace, text=f"fact {n} of the bench", source=(session, [1])
        )
        made.append(session)
    return made


def _row(name: str, rows: int, seconds: float, batches: int) -> dict[str, Any]:
    return {
        "operation": name,
        "rows": rows,
        "batches": batches,
        "ms": round(seconds * 1000, 1),
        "ms_per_1000_rows": round(seconds * 1000 * 1000 / rows, 1) if rows else None,
    }


def run(
    *,
    sessions: int = 200,
    messages: int = 50,
    batch_size: int | None = None,
    progress: Callable[[str], None] = lambda message: None,
) -> dict[str, Any]:
    """Time the three prunes; returns the environment and one row per measurement."""
    namespace = f"bench-prune-{uuid.uuid4().hex[:8]}"
    later = timezone.now() + 2 * HOUR
    results = []
    try:
        retention_policy_set(namespace=namespace, session_ttl=HOUR, archived_message_ttl=HOUR)
        progress(f"seeding {sessions} sessions of {messages} messages")
        _seed(namespace, sessions, messages)
        report = prune_expired(now=later, batch_size=batch_size)
        rows = report.total - report.counts.get("fact_source_expired", 0)
        results.append(_row("expire idle sessions", rows, report.seconds, report.batches))
        progress(f"expired: {report.counts}")

        retention_policy_set(namespace=namespace, session_ttl=0)  # keep sessions, age archives
        made = _seed(namespace, sessions, messages)
        Message.objects.filter(session__in=made).update(archived_at=timezone.now())
        report = prune_expired(now=later, batch_size=batch_size)
        results.append(
            _row("delete archived messages", report.total, report.seconds, report.batches)
        )
        progress(f"archived: {report.counts}")

        report = prune_expired(now=later, batch_size=batch_size)
        results.append(_row("a run with nothing due", report.total, report.seconds, report.batches))
    finally:
        MemorySession.objects.filter(namespace=namespace).delete()
        Fact.objects.filter(namespace=namespace).delete()
        RetentionPolicy.objects.filter(namespace=namespace).delete()
        AuditEntry.objects.filter(namespace=namespace).delete()
        LedgerEntry.objects.filter(namespace=namespace).delete()
    return {
        "environment": {
            "database": connection.vendor,
            "server": connection.connection.info.server_version
            if connection.vendor == "postgresql"
            else sqlite3.sqlite_version,
            "sessions": sessions,
            "messages_per_session": messages,
            "batch_size": batch_size,
        },
        "rows": results,
    }
