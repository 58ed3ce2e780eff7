"""Time travel: rewind to any message, fork, edit-and-regenerate, branches (every database)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from tests.conftest import assistant, raw_rows, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.exceptions import HistoryPointError, MemoryValidationError
from ttmemory.models import Fact, MemorySession, Message, Snapshot, SnapshotKind

pytestmark = pytest.mark.contract


def state(session: MemorySession) -> tuple[Any, ...]:
    """Everything a user could observe about a session's live state."""
    stored = MemorySession.objects.get(pk=session.pk)
    rows = list(
        Message.objects.live()
        .filter(session=session)
        .order_by("seq")
        .values_list("seq", "role", "data", "token_count", "group_seq", "created_at")
    )
    return (
        rows,
        stored.message_count,
        stored.token_count,
        stored.summary,
        stored.summary_upto_seq,
        stored.last_seq,
        stored.state,
    )


def contents(session: MemorySession) -> list[Any]:
    return [m.get("content") for m in memory.message_recent(session=session)]


def live_seqs(session: MemorySession) -> list[int]:
    return list(
        Message.objects.live().filter(session=session).order_by("seq").values_list("seq", flat=True)
    )


def chat_with_tools(session: MemorySession) -> None:
    """#1 system, #2 user, #3 call (c1, c2), #4 result c1, #5 result c2, #6 answer, #7 user,
    #8 wrong answer."""
    memory.message_add_many(
        session=session,
        messages=[
            {"role": "system", "content": "rules"},
            user("weather and time in Lisbon?"),
            tool_call(["c1", "c2"]),
            tool_result("c1", "sunny"),
            tool_result("c2", "10:00"),
            assistant("Sunny, 10:00."),
            user("book it"),
            assistant("I booked Paris."),
        ],
    )


# -- rewind --------------------------------------------------------------------------------


def test_rewind_then_undo_restores_exactly(session: MemorySession) -> None:
    chat_with_tools(session)
    memory.session_state_update(session=session, values={"city": "Lisbon"})
    MemorySession.objects.filter(pk=session.pk).update(summary="Ada plans a trip.")
    before = state(session)

    result = memory.session_rewind(session=session, to_seq=6, reason="ticket 7: wrong city")

    assert result.removed_seqs == (7, 8) and result.restored_seqs == ()
    assert contents(session)[-1] == "Sunny, 10:00."
    assert result.safety.kind == SnapshotKind.SAFETY
    assert result.safety.label == "before rewind to #6: ticket 7: wrong city"
    stored = MemorySession.objects.get(pk=session.pk)
    assert (stored.message_count, stored.last_seq) == (6, 8)

    memory.snapshot_rollback(session=session, snapshot=result.safety)  # the undo
    assert state(session) == before
    assert not Message.objects.filter(session=session, archived_at__isnull=False).exists()
    # Seqs are never reused, after a rewind or its undo.
    assert memory.message_add(session=session, message=user("next")).seq == 9


def test_rewind_archives_or_deletes_per_trim_mode(session: MemorySession, settings: Any) -> None:
    memory.message_add_many(session=session, messages=[user(f"m{i}") for i in range(5)])
    memory.session_rewind(session=session, to_seq=3)
    archived = Message.objects.filter(session=session, archived_at__isnull=False)
    assert sorted(archived.values_list("seq", flat=True)) == [4, 5]
    # Marked as rewound, unlike what a trim archives.
    assert all(at is not None for at in archived.values_list("rewound_at", flat=True))

    settings.TTMEMORY = {**settings.TTMEMORY, "TRIM_MODE": "delete"}
    memory.session_rewind(session=session, to_seq=1)
    assert sorted(Message.objects.filter(session=session).values_list("seq", flat=True)) == [
        1,
        4,
        5,
    ]
    assert contents(session) == ["m0"]


def test_with_a_summariser_rewound_messages_are_deleted_and_never_summarised(
    session: MemorySession, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "SUMMARISE_AT_TOKENS": 100_000}
    memory.message_add_many(session=session, messages=[user(f"m{i}") for i in range(4)])

    memory.session_rewind(session=session, to_seq=2)

    assert sorted(Message.objects.filter(session=session).values_list("seq", flat=True)) == [1, 2]


def test_a_summary_covering_removed_turns_is_dropped(session: MemorySession) -> None:
    memory.message_add(session=session, message={"role": "system", "content": "rules"})
    memory.message_add_many(session=session, messages=[user(f"m{i} " + "x" * 80) for i in range(6)])
    memory.session_trim(session=session, max_tokens=80)  # archives the oldest user turns
    first_user = live_seqs(session)[1]
    assert first_user > 2
    MemorySession.objects.filter(pk=session.pk).update(
        summary="about the first turns", summary_upto_seq=first_user - 1
    )

    preview = memory.session_rewind_preview(session=session, to_seq=first_user)
    assert not preview.summary_changes
    memory.session_rewind(session=session, to_seq=first_user)
    assert MemorySession.objects.get(pk=session.pk).summary == "about the first turns"

    assert memory.session_rewind_preview(session=session, to_seq=1).summary_changes
    memory.session_rewind(session=session, to_seq=1)  # back to the system message alone
    stored = MemorySession.objects.get(pk=session.pk)
    assert stored.summary is None
    assert memory.context_window(session=session, max_tokens=1000) == [
        {"role": "system", "content": "rules"}
    ]


def test_facts_learned_only_from_removed_messages_are_superseded(session: MemorySession) -> None:
    memory.message_add_many(
        session=session, messages=[user("I live in Lisbon"), user("I moved to Paris")]
    )
    kept = memory.fact_remember(
        namespace="user-1", text="Lives in Lisbon", source={"session": session, "seqs": [1]}
    )
    doomed = memory.fact_remember(
        namespace="user-1", text="Lives in Paris", source={"session": session, "seqs": [2]}
    )
    preview = memory.session_rewind_preview(session=session, to_seq=1)
    assert [f.pk for f in preview.facts_superseded] == [doomed.pk]

    result = memory.session_rewind(session=session, to_seq=1)

    assert [f.pk for f in result.superseded_facts] == [doomed.pk]
    assert Fact.objects.get(pk=doomed.pk).valid_to is not None
    assert Fact.objects.get(pk=kept.pk).valid_to is None


def test_the_preview_shows_the_rewind_and_changes_nothing(session: MemorySession) -> None:
    chat_with_tools(session)
    before = state(session)

    diff = memory.session_rewind_preview(session=session, to_seq=2)

    assert [seq for seq, _ in diff.remove] == [3, 4, 5, 6, 7, 8]
    assert diff.remove[-1][1]["content"] == "I booked Paris."
    assert diff.restore == () and diff.tokens_removed > 0
    assert state(session) == before
    assert Snapshot.objects.filter(session=session).count() == 0


@pytest.mark.parametrize("to_seq", [0, 1, 6, 99])
def test_a_point_that_is_not_a_live_message_is_refused_and_nothing_changes(
    session: MemorySession, to_seq: int
) -> None:
    memory.message_add_many(session=session, messages=[user(f"m{i}") for i in range(8)])
    memory.session_rewind(session=session, to_seq=5, reason="first")  # 6-8 removed
    memory.session_trim(session=session, max_tokens=1)  # only #5 stays live
    memory.message_add(session=session, message=user("after"))  # 9
    assert live_seqs(session) == [5, 9]
    before = state(session)
    snapshots = Snapshot.objects.filter(session=session).count()

    with pytest.raises(MemoryValidationError) as excinfo:
        memory.session_rewind(session=session, to_seq=to_seq)
    if to_seq:
        assert isinstance(excinfo.value, HistoryPointError)
        assert "not a live message" in str(excinfo.value)
    assert excinfo.value.field == "to_seq"
    with pytest.raises(MemoryValidationError):
        memory.session_rewind_preview(session=session, to_seq=to_seq)
    assert state(session) == before
    assert Snapshot.objects.filter(session=session).count() == snapshots


def test_rewinding_into_a_tool_group_is_refused_and_names_the_group(
    session: MemorySession,
) -> None:
    chat_with_tools(session)
    before = state(session)
    for inside in (3, 4):
        with pytest.raises(HistoryPointError) as excinfo:
            memory.session_rewind(session=session, to_seq=inside)
        assert excinfo.value.group == (3, 5)
        assert "cut before #3 or at #5" in str(excinfo.value)
    assert state(session) == before

    memory.session_rewind(session=session, to_seq=5)  # after the whole group: allowed
    assert [m["role"] for m in memory.message_recent(session=session)][-3:] == [
        "assistant",
        "tool",
        "tool",
    ]


def test_no_rewind_point_leaves_half_a_tool_group(session: MemorySession) -> None:
    """Every seq of a history with interleaved and late tool results: the rewind is refused,
    or what stays holds each tool call with all of its results."""
    messages = [
        {"role": "system", "content": "rules"},
        user("q1"),
        tool_call(["a1"]),
        tool_result("a1"),
        tool_call(["b1", "b2"]),
        tool_result("b1"),
        user("still there?"),  # between b1 and a late b2
        tool_result("b2"),
        assistant("done"),
        tool_call(["c1"]),  # never answered
        user("q2"),
    ]
    refused = []
    for seq in range(1, len(messages) + 1):
        other = memory.session_open(namespace="user-1", key=f"groups-{seq}")
        memory.message_add_many(session=other, messages=messages)
        try:
            memory.session_rewind(session=other, to_seq=seq)
        except HistoryPointError as exc:
            assert exc.group is not None
            refused.append(seq)
            assert live_seqs(other) == list(range(1, len(messages) + 1))
            continue
        kept = memory.message_recent(session=other)
        calls = {c["id"] for m in kept for c in m.get("tool_calls") or []}
        answered = [m["tool_call_id"] for m in kept if m["role"] == "tool"]
        expected = {r["tool_call_id"] for r in messages if r["role"] == "tool"}
        assert set(answered) <= calls, seq  # no result without its call
        assert {c for c in calls if c in expected} == set(answered), seq  # no call half answered
    assert refused == [3, 5, 6, 7]


def test_rewind_to_the_last_message_removes_nothing_but_is_undoable(
    session: MemorySession,
) -> None:
    memory.message_add_many(session=session, messages=[user("a"), user("b")])
    result = memory.session_rewind(session=session, to_seq=2)
    assert result.removed_seqs == ()
    assert result.safety is not None and contents(session) == ["a", "b"]


# -- fork ----------------------------------------------------------------------------------


def test_a_fork_copies_the_history_and_is_independent_of_its_parent(
    session: MemorySession,
) -> None:
    chat_with_tools(session)
    memory.session_state_update(session=session, values={"city": "Lisbon"})
    parent_before = state(session)
    parent_row = MemorySession.objects.get(pk=session.pk)

    fork = memory.session_fork(session=session, at_seq=6, key="chat-1-retry")

    assert (fork.namespace, fork.key, fork.parent_id, fork.forked_at_seq) == (
        "user-1",
        "chat-1-retry",
        session.pk,
        6,
    )
    assert contents(fork) == contents(session)[:6]
    assert state(session) == parent_before  # forking never touches the parent
    after = MemorySession.objects.get(pk=session.pk)
    assert (after.updated_at, after.history_version) == (
        parent_row.updated_at,
        parent_row.history_version,
    )
    stored = MemorySession.objects.get(pk=fork.pk)
    assert (stored.message_count, stored.last_seq, stored.state) == (6, 6, {"city": "Lisbon"})
    assert stored.token_count == sum(
        Message.objects.filter(session=fork).values_list("token_count", flat=True)
    )

    # Later writes to either side stay on that side.
    memory.message_add(session=session, message=user("parent only"))
    assert memory.message_add(session=fork, message=user("fork only")).seq == 7
    memory.session_rewind(session=session, to_seq=2)
    memory.session_state_update(session=fork, values={"city": "Porto"})
    assert contents(fork)[-2:] == ["Sunny, 10:00.", "fork only"]
    assert contents(session) == ["rules", "weather and time in Lisbon?"]
    assert MemorySession.objects.get(pk=session.pk).state == {"city": "Lisbon"}
    assert "parent only" not in contents(fork)
    assert memory.context_window(session=fork, max_tokens=10_000)[-1]["content"] == "fork only"


def test_a_forks_values_are_encrypted_for_its_own_rows(session: MemorySession) -> None:
    memory.message_add(session=session, message=user("the vault code is 4711"))
    MemorySession.objects.filter(pk=session.pk).update(summary="vault code 4711")
    fork = memory.session_fork(session=session)

    table = connection.ops.quote_name(Message._meta.db_table)
    blobs = dict(raw_rows(f"SELECT session_id, data FROM {table}"))
    assert bytes(blobs[fork.pk]) != bytes(blobs[session.pk])
    assert b"4711" not in bytes(blobs[fork.pk])
    assert MemorySession.objects.get(pk=fork.pk).summary == "vault code 4711"
    assert contents(fork) == ["the vault code is 4711"]


def test_fork_points(session: MemorySession) -> None:
    chat_with_tools(session)
    MemorySession.objects.filter(pk=session.pk).update(summary="s", summary_upto_seq=0)

    whole = memory.session_fork(session=session)
    assert (whole.forked_at_seq, whole.last_seq, whole.message_count) == (8, 8, 8)
    assert whole.key.startswith("chat-1~fork-")

    empty = memory.session_fork(session=session, at_seq=0)
    assert (contents(empty), empty.forked_at_seq) == ([], 0)
    assert memory.message_add(session=empty, message=user("fresh")).seq == 1

    with pytest.raises(HistoryPointError) as excinfo:
        memory.session_fork(session=session, at_seq=4)
    assert (excinfo.value.field, excinfo.value.group) == ("at_seq", (3, 5))
    with pytest.raises(HistoryPointError):
        memory.session_fork(session=session, at_seq=42)
    with pytest.raises(MemoryValidationError) as taken:
        memory.session_fork(session=session, key=whole.key)
    assert taken.value.field == "key"
    assert MemorySession.objects.filter(parent=session).count() == 2


def test_a_fork_before_the_summarised_turns_has_no_summary(session: MemorySession) -> None:
    memory.message_add(session=session, message={"role": "system", "content": "rules"})
    memory.message_add_many(session=session, messages=[user(f"m{i} " + "x" * 80) for i in range(4)])
    memory.session_trim(session=session, max_tokens=40)
    first_user = live_seqs(session)[1]
    assert first_user > 2
    MemorySession.objects.filter(pk=session.pk).update(
        summary="about the first turns", summary_upto_seq=first_user - 1
    )

    early = memory.session_fork(session=session, at_seq=1)
    late = memory.session_fork(session=session, at_seq=first_user)

    assert (early.summary, early.summary_upto_seq) == (None, 0)
    assert (late.summary, late.summary_upto_seq) == ("about the first turns", first_user - 1)


# -- edit and branches ---------------------------------------------------------------------


def test_editing_a_message_makes_a_new_branch_and_keeps_the_old_one(
    session: MemorySession,
) -> None:
    chat_with_tools(session)
    before = state(session)

    branch = memory.session_edit(session=session, seq=7, message=user("book Lisbon, not Paris"))

    assert contents(branch)[-2:] == ["Sunny, 10:00.", "book Lisbon, not Paris"]
    assert (branch.parent_id, branch.forked_at_seq) == (session.pk, 6)
    assert state(session) == before
    assert [b.pk for b in memory.session_branches(session=session)] == [branch.pk]
    assert memory.session_branches(session=branch) == []

    first = memory.session_edit(session=session, seq=1, message={"role": "system", "content": "x"})
    assert contents(first) == ["x"]
    assert [b.pk for b in memory.session_branches(session=session)] == [branch.pk, first.pk]
    exported = {s["key"]: s for s in memory.namespace_export(namespace="user-1")["sessions"]}
    assert exported[branch.key]["forked_from"] == {"key": "chat-1", "seq": 6}
    assert exported["chat-1"]["forked_from"] is None


def test_an_invalid_edit_leaves_no_branch(session: MemorySession) -> None:
    chat_with_tools(session)

    with pytest.raises(MemoryValidationError) as excinfo:
        memory.session_edit(session=session, seq=7, message={"role": "wizard", "content": "x"})
    assert excinfo.value.field == "message.role"
    with pytest.raises(HistoryPointError):
        memory.session_edit(session=session, seq=5, message=tool_result("c2", "11:00"))
    with pytest.raises(HistoryPointError):
        memory.session_edit(session=session, seq=99, message=user("x"))
    assert memory.session_branches(session=session) == []
    assert MemorySession.objects.count() == 1


def test_deleting_or_erasing_a_parent_keeps_or_removes_its_forks(session: MemorySession) -> None:
    memory.message_add(session=session, message=user("hello"))
    fork = memory.session_fork(session=session)
    memory.session_fork(session=fork)

    memory.session_delete(session=session)
    fork.refresh_from_db()
    assert (fork.parent_id, fork.forked_at_seq, contents(fork)) == (None, 1, ["hello"])

    receipt = memory.namespace_erase(namespace="user-1")
    assert receipt.counts["memory_session"] == 2
    assert not MemorySession.objects.filter(namespace="user-1").exists()
