"""Helpers of the legal-hold tests: a namespace full of content, and a checksum of what a hold
protects (every protected table, read as stored: ciphertext, not decrypted values)."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import connection

from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.models import LegalHold, MemorySession
from ttmemory.models.holds import PROTECTED
from ttmemory.services.episodes import messages_index_pending
from ttmemory.services.graph import graph_checkpoint_put
from ttmemory.services.holds import legal_hold_place


def protected_rows(namespace: str) -> dict[str, set[tuple[Any, ...]]]:
    """Per protected table, the namespace's rows as what a hold protects: the id (where there
    is one) and the watched columns, as stored (ciphertext, not decrypted values)."""
    rows: dict[str, set[tuple[Any, ...]]] = {}
    with connection.cursor() as cursor:
        for spec in PROTECTED:
            columns = list(dict.fromkeys(["id", *spec.watched]))
            if spec.short == "msgterm":
                columns.remove("id")
            cursor.execute(
                f"SELECT {', '.join(columns)} FROM {spec.table} WHERE namespace = %s", [namespace]
            )
            rows[spec.table] = {tuple(_plain(v) for v in row) for row in cursor.fetchall()}
    return rows


def protected_checksum(namespace: str) -> dict[str, str]:
    """Per protected table, a digest and count of ``protected_rows``."""
    sums: dict[str, str] = {}
    for table, rows in protected_rows(namespace).items():
        digest = hashlib.sha256("\n".join(sorted(map(repr, rows))).encode()).hexdigest()[:16]
        sums[table] = f"{digest}/{len(rows)}"
    return sums


def _plain(value: Any) -> Any:
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def filled_namespace(namespace: str, key: str = "chat") -> MemorySession:
    """A session with a tool turn, a snapshot, a fact learnt from it, a profile, episodic
    index rows and a LangGraph checkpoint: a row in every protected table."""
    session = memory.session_open(namespace=namespace, key=key)
    memory.message_add_many(
        session=session,
        messages=[
            user("Where is my parcel to Lisbon?"),
            tool_call(["call-1"], name="track_parcel"),
            tool_result("call-1", "in transit"),
            assistant("It is in transit to Lisbon."),
            user("Thanks, and the invoice?"),
            assistant("Sent to your email."),
        ],
    )
    memory.snapshot_create(session=session, label="after the parcel")
    memory.fact_remember(
        namespace=namespace,
        text="The user ships parcels to Lisbon",
        source={"session": session, "seqs": [1]},
    )
    memory.profile_update(namespace=namespace, kind="user", data={"city": "Lisbon", "tier": "gold"})
    messages_index_pending(session_id=session.pk)
    graph_checkpoint_put(
        namespace=namespace,
        thread_id="thread-1",
        checkpoint_ns="",
        checkpoint_id="cp-1",
        parent_checkpoint_id="",
        checkpoint=("msgpack", b"state"),
        metadata=("msgpack", b"meta"),
        run_id="run-1",
    )
    session.refresh_from_db()
    return session


def hold(namespace: str, session: MemorySession | None = None) -> LegalHold:
    return legal_hold_place(namespace=namespace, session=session, reason="case 34", actor="legal")
