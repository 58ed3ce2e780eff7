"""Session services: open, counters, trim (archive and delete), clear."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message


def test_session_open_gets_the_same_session_and_keeps_its_metadata(db: Any) -> None:
    first = memory.session_open(namespace="acme/user-42", key="chat", metadata={"channel": "web"})
    again = memory.session_open(namespace="acme/user-42", key="chat", metadata={"channel": "app"})

    assert again.pk == first.pk
    assert again.metadata == {"channel": "web"}
    assert memory.session_open(namespace="acme/user-43", key="chat").pk != first.pk


def test_counters_are_exact_after_every_write(session: MemorySession) -> None:
    rows = memory.message_add_many(session=session, messages=[user("hi"), assistant("hello there")])
    memory.message_add(session=session, message=user("bye"))

    stored = MemorySession.objects.get(pk=session.pk)
    tokens = sum(Message.objects.filter(session=session).values_list("token_count", flat=True))
    assert (stored.message_count, stored.last_seq, stored.token_count) == (3, 3, tokens)
    assert (session.message_count, session.token_count) == (3, tokens)
    assert [r.seq for r in rows] == [1, 2]
    assert all(r.token_count > 3 for r in rows)


def test_a_tool_result_added_later_joins_its_call_group(session: MemorySession) -> None:
    memory.message_add(session=session, message=tool_call(["a", "b"]))
    memory.message_add(session=session, message=user("meanwhile"))
    late = memory.message_add(session=session, message=tool_result("b"))
    with pytest.raises(MemoryValidationError, match="answers no tool call"):
        memory.message_add(session=session, message=tool_result("zzz"))

    assert late.group_seq == 1
    assert Message.objects.filter(session=session).count() == 3


def test_context_window_repairs_unanswered_calls_without_touching_storage(
    session: MemorySession,
) -> None:
    memory.message_add_many(
        session=session, messages=[user("go"), tool_call(["a", "b"]), tool_result("a")]
    )

    window = memory.context_window(session=session, max_tokens=1000)

    assert [(m["role"], m.get("tool_call_id")) for m in window] == [
        ("user", None),
        ("assistant", None),
        ("tool", "a"),
        ("tool", "b"),
    ]
    assert Message.objects.filter(session=session).count() == 3


def test_context_window_puts_the_summary_first(session: MemorySession) -> None:
    memory.message_add(session=session, message=user("latest"))
    MemorySession.objects.filter(pk=session.pk).update(summary="Ada likes trains.")

    window = memory.context_window(session=session, max_tokens=1000)

    assert window[0]["role"] == "system"
    assert window[0]["content"].endswith("Ada likes trains.")
    assert window[1] == user("latest")


@pytest.mark.parametrize("mode", ["archive", "delete"])
def test_trim_keeps_exactly_the_context_window(
    session: MemorySession, settings: Any, mode: str
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "TRIM_MODE": mode}
    memory.message_add(session=session, message={"role": "system", "content": "rules"})
    memory.message_add_many(
        session=session, messages=[user(f"turn {i} " + "w" * 100) for i in range(30)]
    )
    expected = memory.context_window(session=session, max_tokens=200)

    result = memory.session_trim(session=session, max_tokens=200)

    assert memory.message_recent(session=session) == expected
    assert result.mode == mode
    assert result.removed == 31 - len(expected)
    assert result.kept == len(expected)
    stored = MemorySession.objects.get(pk=session.pk)
    live_tokens = sum(
        Message.objects.live().filter(session=session).values_list("token_count", flat=True)
    )
    assert (stored.message_count, stored.token_count) == (len(expected), live_tokens)
    assert stored.last_seq == 31
    total_rows = Message.objects.filter(session=session).count()
    assert total_rows == (31 if mode == "archive" else len(expected))
    # New messages continue the sequence after a trim.
    assert memory.message_add(session=session, message=user("next")).seq == 32


def test_trim_never_splits_a_tool_group_nor_cuts_a_hole_in_the_newest_turn(
    session: MemorySession,
) -> None:
    memory.message_add_many(
        session=session,
        messages=[
            user("x" * 400),
            assistant("old answer"),
            user("q"),
            tool_call(["c"]),
            tool_result("c", "r" * 200),
            assistant("ok"),
        ],
    )

    # The window keeps the question and the answer (the tool group does not fit); trimming
    # keeps the whole newest turn (no hole for the rolling summary) and takes the older out.
    assert memory.context_window(session=session, max_tokens=20) == [user("q"), assistant("ok")]
    result = memory.session_trim(session=session, max_tokens=20)

    assert result.removed_seqs == (1, 2)
    roles = [m["role"] for m in memory.message_recent(session=session)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    memory.session_trim(session=session, max_tokens=0)  # what must be kept stays over budget
    assert len(memory.message_recent(session=session)) == 4


def test_clear_removes_everything_but_never_reuses_seqs(session: MemorySession) -> None:
    memory.message_add_many(session=session, messages=[user("a"), user("b"), user("c")])
    memory.session_trim(session=session, max_tokens=10)

    assert memory.session_clear(session=session) == 3

    assert memory.message_recent(session=session) == []
    stored = MemorySession.objects.get(pk=session.pk)
    assert (stored.message_count, stored.token_count, stored.last_seq) == (0, 0, 3)
    assert memory.message_add(session=session, message=user("d")).seq == 4


@pytest.mark.parametrize("bad", [-1, "10", None, 1.5, True])
def test_budgets_and_limits_must_be_whole_numbers(session: MemorySession, bad: Any) -> None:
    with pytest.raises(MemoryValidationError) as excinfo:
        memory.context_window(session=session, max_tokens=bad)
    assert excinfo.value.field == "max_tokens"
    if bad is not None:
        with pytest.raises(MemoryValidationError) as excinfo:
            memory.message_recent(session=session, limit=bad if bad != -1 else 0)
        assert excinfo.value.field == "limit"


def test_message_add_many_rejects_a_non_list(session: MemorySession) -> None:
    with pytest.raises(MemoryValidationError) as excinfo:
        memory.message_add_many(session=session, messages=user("not a list"))  # type: ignore[arg-type]
    assert excinfo.value.field == "messages"
