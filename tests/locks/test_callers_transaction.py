"""The session lock lasts as long as the caller's transaction, not as long as the service call.

A host project with ``ATOMIC_REQUESTS`` (or the REST API's idempotent append, which stores its
replay record in the same transaction) appends a message and goes on working before it
commits. Another writer that took the session lock in that window would read a history without
the message and then delete it anyway: the rollback leaves the acknowledged turn out of its
report of what it removed, and a fact learned only from that turn stays current.

Each round forces the overlap without sleeping: the appender holds its transaction open until
PostgreSQL reports a backend waiting on it (``pg_blocking_pids``), so every round
proves that the two writers contended. SQLite's ``BEGIN IMMEDIATE`` already serialises whole
transactions, so the race cannot start there (tests/mutants.py lists the lock mutants as
equivalent on SQLite for that reason).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from tests.races import WAIT
from ttmemory import memory
from ttmemory.models import MemorySession, Message, Snapshot

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite's BEGIN IMMEDIATE serialises whole transactions: no window to race in",
)

ROUNDS = 5


def wait_until_someone_waits_on_me() -> bool:
    """Poll (bounded) until another backend waits on this transaction's locks.

    Any backend, not a pid noted beforehand: behind PgBouncer in transaction mode the
    rollback's transaction may run on another server connection than its first statement.
    """
    deadline = time.monotonic() + WAIT
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT pg_stat_clear_snapshot()")  # a fresh view inside a transaction
            cursor.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_stat_activity"
                " WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid)))"
            )
            if cursor.fetchone()[0]:
                return True
            time.sleep(0.001)
    return False


def roll_back(
    session_id: int, snapshot: Snapshot, appended: threading.Event, outcome: dict[str, Any]
) -> None:
    """The other writer: once the append is made, roll back (unsafe) to ``snapshot``."""
    try:
        assert appended.wait(WAIT)
        session = MemorySession.objects.get(pk=session_id)
        result = memory.snapshot_rollback_detailed(session=session, snapshot=snapshot, safe=False)
        outcome["removed"] = list(result.removed_seqs)
    except BaseException as exc:  # re-raised in the main thread
        outcome["error"] = exc
    finally:
        connection.close()


def test_a_rollback_waits_for_an_append_still_in_its_callers_transaction(
    transactional_db: Any,
) -> None:
    session = memory.session_open(namespace="race-outer", key="chat")
    memory.message_add(session=session, message={"role": "user", "content": "hello"})
    start = memory.snapshot_create(session=session, label="start")
    contended = 0
    for round_no in range(ROUNDS):
        appended = threading.Event()
        outcome: dict[str, Any] = {}

        roller = threading.Thread(target=roll_back, args=(session.pk, start, appended, outcome))
        roller.start()
        # The appender: this thread, in a transaction of its own (as under ATOMIC_REQUESTS).
        with transaction.atomic():
            row = memory.message_add(
                session=session, message={"role": "user", "content": f"round {round_no}"}
            )
            # Learned from that turn in the same request: it must end with the turn.
            learned = memory.fact_remember(
                namespace=session.namespace,
                text=f"the user likes round {round_no}",
                source=(session, [row.seq]),
            )
            appended.set()
            # The rollback has asked for the lock and waits on this transaction (on the lock
            # itself, or on a row this append wrote): the two writers overlap.
            contended += wait_until_someone_waits_on_me()
        # Committed: the caller now answers "appended as #seq" to its user.
        roller.join(WAIT * 2)
        assert not roller.is_alive(), "the rollback never finished"
        if "error" in outcome:
            raise outcome["error"]
        live = list(Message.objects.live().filter(session=session).values_list("seq", flat=True))
        assert row.seq not in live  # the rollback came after the append: the turn is gone,
        learned.refresh_from_db()  # so is what was learned from it alone,
        assert learned.valid_to is not None, "a fact learned only from a removed turn stays current"
        # and the rollback's report names every message it removed.
        assert row.seq in outcome["removed"], (
            f"round {round_no}: the rollback removed the acknowledged message #{row.seq} "
            f"but reported removing only {outcome['removed']}"
        )
    assert contended == ROUNDS  # checked last, so a mutant shows the state it leaves
