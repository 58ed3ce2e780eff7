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
from ttmemory.services.retention import legal_hold_place


def protected_checksum(namespace: str) -> dict[str, str]:
    """Per protected table, a digest of the namespace's rows (every column, as stored)."""
    sums: dict[str, str] = {}
    with connection.cursor() as cursor:
        for spec in PROTECTED:
            cursor.execute(f"SELECT * FROM {spec.table} WHERE namespace = %s", [namespace])
            rows = sorted(repr(tuple(_plain(v) for v in row)) for row in cursor.fetchall())
            sums[spec.table] = hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16] + (
                f"/{len(rows)}"
            )
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
