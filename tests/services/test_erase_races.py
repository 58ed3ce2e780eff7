"""Erasing a namespace while its sessions are written to: the erase finishes and erases."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections

from tests.conftest import user
from ttmemory import memory
from ttmemory.models import AuditEntry, LedgerEntry, MemorySession, Message
from ttmemory.services.audit import audit_record
from ttmemory.services.ledger import ledger_record

WAIT = 20.0


def backend_waits_for_a_lock(pid: int) -> bool:
    """True while the PostgreSQL backend ``pid`` waits for a lock (pg_locks is never cached)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted", [pid])
        row = cursor.fetchone()
    return bool(row and row[0])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite has one writer at a time")
def test_an_append_arriving_inside_the_erase_cannot_outlive_it(transactional_db: Any) -> None:
    """The append is let in at the erase's last statement (deleting the sessions): before the
    fix it committed a message there and the erase died on the foreign key."""
    session = memory.session_open(namespace="erase-race", key="chat")
    memory.message_add(session=session, message=user("before"))

    ready = threading.Event()
    go = threading.Event()
    done = threading.Event()
    pid: list[int] = []
    outcome: list[object] = []

    def appender() -> None:
        try:
            connection.ensure_connection()
            pid.append(connection.connection.info.backend_pid)
            ready.set()
            go.wait(WAIT)
            outcome.append(memory.message_add(session=session, message=user("during")))
        except Exception as exc:
            outcome.append(exc)
        finally:
            done.set()
            connections.close_all()

    inside: list[str] = []

    def let_the_append_in(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
        if sql.startswith('DELETE FROM "ttmemory_memorysession"') and not inside:
            go.set()
            end = time.monotonic() + WAIT
            while time.monotonic() < end:
                if done.is_set():
                    inside.append("committed")  # it wrote while the erase was running
                    break
                if backend_waits_for_a_lock(pid[0]):
                    inside.append("waiting")  # it is blocked by a lock the erase holds
                    break
                time.sleep(0.005)
        return execute(sql, *args)

    thread = threading.Thread(target=appender, daemon=True)
    thread.start()
    assert ready.wait(WAIT)
    with connection.execute_wrapper(let_the_append_in):
        receipt = memory.namespace_erase(namespace="erase-race")
    thread.join(WAIT)

    assert inside, "the append never reached the database inside the erase (no overlap)"
    assert len(inside) == 1  # the overlap: one append inside the erase's transaction
    assert receipt.counts["memory_session"] == 1 and receipt.counts["message"] == 1
    assert isinstance(outcome[0], MemorySession.DoesNotExist)
    assert not MemorySession.objects.filter(namespace="erase-race").exists()
    assert not Message.objects.filter(namespace="erase-race").exists()


def test_appends_racing_an_erase_leave_nothing_behind(transactional_db: Any) -> None:
    """Writers on three sessions keep appending while the erase runs; afterwards the namespace
    is empty and every append either happened before the erase or was refused after it."""
    sessions = [memory.session_open(namespace="erase-many", key=f"chat-{i}") for i in range(3)]
    started = threading.Barrier(len(sessions) + 1)
    refused: list[int] = []
    stored: list[int] = []
    stop = threading.Event()

    def write(session: MemorySession) -> None:
        try:
            started.wait(WAIT)
            for i in range(400):
                if stop.is_set():
                    break
                try:
                    memory.message_add(session=session, message=user(f"m{i}"))
                    stored.append(session.pk)
                except MemorySession.DoesNotExist:
                    refused.append(session.pk)
                    break
        finally:
            connections.close_all()

    threads = [threading.Thread(target=write, args=(s,), daemon=True) for s in sessions]
    for thread in threads:
        thread.start()
    started.wait(WAIT)
    end = time.monotonic() + WAIT
    while len(stored) < 3 * len(sessions) and time.monotonic() < end:
        time.sleep(0.005)  # the erase starts while every writer is mid-stream
    receipt = memory.namespace_erase(namespace="erase-many")
    for thread in threads:
        thread.join(WAIT)
    stop.set()

    # The overlap: writers that were still appending when the erase ran, and found it.
    assert len(refused) > 0
    assert receipt.counts["message"] == len(stored)
    assert not MemorySession.objects.filter(namespace="erase-many").exists()
    assert not Message.objects.filter(namespace="erase-many").exists()


def test_the_erase_removes_the_cost_ledger_and_says_what_it_keeps(transactional_db: Any) -> None:
    session = memory.session_open(namespace="erase-ledger", key="chat")
    memory.message_add(session=session, message=user("hi"))
    for purpose in ("embed", "extract", "summarise"):
        ledger_record(namespace="erase-ledger", purpose=purpose, model="m", prompt_tokens=7)
    ledger_record(namespace="other", purpose="embed", model="m", prompt_tokens=3)
    audit_record(action="export", namespace="erase-ledger", actor="support")

    receipt = memory.namespace_erase(namespace="erase-ledger")

    assert receipt.counts["ledger_entry"] == 3
    assert not LedgerEntry.objects.filter(namespace="erase-ledger").exists()
    assert LedgerEntry.objects.filter(namespace="other").count() == 1
    # What outlives an erase is named, and is only the audit trail.
    assert receipt.kept == {"audit_entry": 1}
    assert AuditEntry.objects.filter(namespace="erase-ledger").count() == 1
