"""Snapshots and safe rollback: exact restore, undo, preview, retention (every database)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from tests.conftest import assistant, raw_rows, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError, SnapshotIntegrityError
from ttmemory.models import MemorySession, Message, Snapshot, SnapshotKind

pytestmark = pytest.mark.contract


def state(session: MemorySession) -> tuple[Any, ...]:
    """Everything a user could observe about a session's live state."""
    stored = MemorySession.objects.get(pk=session.pk)
    rows = list(
        Message.objects.live()
        .filter(session=session)
        .order_by("seq")
        .values_list("seq", "data", "token_count", "group_seq")
    )
    return rows, stored.message_count, stored.token_count, stored.summary


def set_payload(snapshot: Snapshot, blob: bytes) -> None:
    """Write a snapshot's stored bytes as someone with access to the database would."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ttmemory_snapshot SET payload = %s WHERE id = %s", [blob, snapshot.pk]
        )


def test_rollback_restores_exactly_what_the_snapshot_captured(session: MemorySession) -> None:
    memory.message_add_many(
        session=session,
        messages=[
            {"role": "system", "content": "rules"},
            user("hi"),
            tool_call(["c1"]),
            tool_result("c1"),
        ],
    )
    MemorySession.objects.filter(pk=session.pk).update(summary="Ada likes trains.")
    before = state(session)
    snapshot = memory.snapshot_create(session=session, label="good turn")

    memory.message_add_many(session=session, messages=[assistant("something wrong"), user("what?")])
    MemorySession.objects.filter(pk=session.pk).update(summary="changed")
    assert state(session) != before

    safety = memory.snapshot_rollback(session=session, snapshot=snapshot)

    assert state(session) == before
    assert safety is not None and safety.kind == SnapshotKind.SAFETY
    assert (snapshot.message_count, snapshot.label) == (4, "good turn")


def test_rolling_back_to_the_safety_snapshot_undoes_the_rollback(session: MemorySession) -> None:
    memory.message_add(session=session, message=user("one"))
    snapshot = memory.snapshot_create(session=session)
    memory.message_add_many(session=session, messages=[assistant("two"), user("three")])
    after_three = state(session)

    safety = memory.snapshot_rollback(session=session, snapshot=snapshot)
    assert [m["content"] for m in memory.message_recent(session=session)] == ["one"]

    assert safety is not None
    memory.snapshot_rollback(session=session, snapshot=safety)
    assert state(session) == after_three


def test_rollback_brings_back_trimmed_messages_and_seqs_are_never_reused(
    session: MemorySession,
) -> None:
    memory.message_add_many(
        session=session, messages=[user(f"m{i} " + "x" * 80) for i in range(10)]
    )
    snapshot = memory.snapshot_create(session=session)
    memory.session_trim(session=session, max_tokens=60)
    memory.message_add(session=session, message=user("after trim"))  # seq 11

    memory.snapshot_rollback(session=session, snapshot=snapshot, safe=False)

    assert [m["content"][:2] for m in memory.message_recent(session=session)] == [
        f"m{i}" for i in range(10)
    ]
    assert memory.message_add(session=session, message=user("next")).seq == 12


def test_unsafe_rollback_stores_no_safety_snapshot(session: MemorySession) -> None:
    memory.message_add(session=session, message=user("one"))
    snapshot = memory.snapshot_create(session=session)

    assert memory.snapshot_rollback(session=session, snapshot=snapshot, safe=False) is None
    assert Snapshot.objects.filter(session=session).count() == 1


def test_the_preview_lists_what_a_rollback_would_remove_and_restore(session: MemorySession) -> None:
    memory.message_add_many(session=session, messages=[user(f"m{i}") for i in range(4)])
    snapshot = memory.snapshot_create(session=session)
    memory.session_trim(session=session, max_tokens=10)  # keeps only m3
    memory.message_add_many(session=session, messages=[assistant("bad"), user("worse")])
    before = state(session)

    diff = memory.snapshot_diff(session=session, snapshot=snapshot)

    assert [(seq, m["content"]) for seq, m in diff.remove] == [(5, "bad"), (6, "worse")]
    assert [(seq, m["content"]) for seq, m in diff.restore] == [(1, "m0"), (2, "m1"), (3, "m2")]
    assert (diff.remove_count, diff.restore_count) == (2, 3)
    assert (diff.remove_seq_range, diff.restore_seq_range) == ((5, 6), (1, 3))
    assert diff.tokens_removed > 0 and diff.tokens_restored > 0
    assert state(session) == before  # a preview changes nothing

    memory.snapshot_rollback(session=session, snapshot=snapshot)
    assert memory.snapshot_diff(session=session, snapshot=snapshot).is_empty


def test_snapshot_list_is_newest_first(session: MemorySession) -> None:
    first = memory.snapshot_create(session=session, label="a")
    second = memory.snapshot_create(session=session, label="b")

    assert [s.pk for s in memory.snapshot_list(session=session)] == [second.pk, first.pk]


def test_retention_keeps_the_newest_and_never_the_safety_snapshot_just_made(
    session: MemorySession, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MAX_SNAPSHOTS_PER_SESSION": 3}
    made = [memory.snapshot_create(session=session, label=str(i)) for i in range(5)]

    assert [s.label for s in memory.snapshot_list(session=session)] == ["4", "3", "2"]

    settings.TTMEMORY = {**settings.TTMEMORY, "MAX_SNAPSHOTS_PER_SESSION": 1}
    safety = memory.snapshot_rollback(session=session, snapshot=made[4])
    assert safety is not None
    assert [s.pk for s in memory.snapshot_list(session=session)] == [safety.pk]


def test_a_snapshot_of_another_session_is_refused(session: MemorySession) -> None:
    other = memory.session_open(namespace="user-2", key="chat")
    foreign = memory.snapshot_create(session=other)

    with pytest.raises(MemoryValidationError) as excinfo:
        memory.snapshot_rollback(session=session, snapshot=foreign)
    assert excinfo.value.field == "snapshot"
    with pytest.raises(MemoryValidationError):
        memory.snapshot_diff(session=session, snapshot=foreign)


def test_a_tampered_snapshot_is_refused_and_nothing_changes(session: MemorySession) -> None:
    memory.message_add(session=session, message=user("one"))
    snapshot = memory.snapshot_create(session=session)
    memory.message_add(session=session, message=user("two"))
    before = state(session)
    (blob,) = raw_rows("SELECT payload FROM ttmemory_snapshot WHERE id = %s", [snapshot.pk])[0]
    tampered = bytearray(bytes(blob))
    tampered[-20] ^= 0x01  # one bit of the ciphertext
    set_payload(snapshot, bytes(tampered))

    with pytest.raises(SnapshotIntegrityError):
        memory.snapshot_rollback(session=session, snapshot=snapshot)
    assert state(session) == before


def test_a_payload_moved_from_another_snapshot_of_the_session_is_refused(
    session: MemorySession,
) -> None:
    memory.message_add(session=session, message=user("one"))
    early = memory.snapshot_create(session=session)
    memory.message_add(session=session, message=user("two"))
    late = memory.snapshot_create(session=session)
    memory.message_add(session=session, message=user("three"))
    before = state(session)
    (blob,) = raw_rows("SELECT payload FROM ttmemory_snapshot WHERE id = %s", [early.pk])[0]
    set_payload(late, bytes(blob))

    with pytest.raises(SnapshotIntegrityError):
        memory.snapshot_rollback(session=session, snapshot=late)
    assert state(session) == before


def test_automatic_snapshots_every_n_messages(session: MemorySession, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "AUTO_SNAPSHOT_EVERY": 5}

    memory.message_add_many(session=session, messages=[user(str(i)) for i in range(4)])
    assert Snapshot.objects.filter(session=session).count() == 0
    memory.message_add_many(
        session=session, messages=[user(str(i)) for i in range(7)]
    )  # crosses 5, 10

    automatic = memory.snapshot_list(session=session)
    assert [(s.kind, s.upto_seq) for s in automatic] == [("automatic", 11)]


def test_snapshot_payload_is_encrypted_at_rest(session: MemorySession) -> None:
    from django.db import connection

    from tests.conftest import raw_rows

    memory.message_add(session=session, message=user("the vault code is 4711"))
    memory.snapshot_create(session=session)

    table = connection.ops.quote_name(Snapshot._meta.db_table)
    (blob,) = raw_rows(f"SELECT payload FROM {table}")[0]
    assert b"4711" not in bytes(blob) and b"vault" not in bytes(blob)
