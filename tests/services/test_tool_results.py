"""Tool results find their call however late they come; legacy function messages are refused;
a snapshot preview never reads another session's snapshot."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message, Snapshot

# More assistant messages between a call and its result than the old fixed look-back (200).
FAR = 260


def group_of(session: MemorySession, seq: int) -> int:
    return Message.objects.get(session=session, seq=seq).group_seq


@pytest.mark.parametrize("many", [False, True], ids=["one", "batch"])
def test_a_tool_result_long_after_its_call_joins_the_calls_group(
    session: MemorySession, many: bool
) -> None:
    call = memory.message_add(session=session, message=tool_call(["call-far"]))
    memory.message_add_many(session=session, messages=[assistant(f"a{i}") for i in range(FAR)])
    result = tool_result("call-far", "the late answer")
    if many:
        (stored,) = memory.message_add_many(session=session, messages=[result])
    else:
        stored = memory.message_add(session=session, message=result)

    assert stored.seq - call.seq > FAR
    assert group_of(session, stored.seq) == call.seq
    # One group with its call: a budget that keeps only the newest messages keeps the call
    # too (never the result alone, an orphan the model rejects), and the messages in between
    # are what gets dropped.
    window = memory.context_window(session=session, max_tokens=300)
    assert window[0].get("tool_calls") and window[1]["content"] == "the late answer"
    assert "a0" not in [m.get("content") for m in window]


def test_a_result_for_a_call_never_made_is_refused_after_searching_the_whole_history(
    session: MemorySession,
) -> None:
    memory.message_add_many(session=session, messages=[assistant(f"a{i}") for i in range(60)])

    with pytest.raises(MemoryValidationError) as caught:
        memory.message_add(session=session, message=tool_result("never-called"))

    assert caught.value.field == "message.tool_call_id"
    assert "none in its history" in str(caught.value)


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"role": "function", "name": "weather", "content": "sunny"}, "message.role"),
        (
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "weather", "arguments": "{}"},
            },
            "message.function_call",
        ),
    ],
    ids=["function-result", "function-call"],
)
def test_legacy_function_messages_are_refused_with_the_way_forward(
    session: MemorySession, message: dict[str, Any], field: str
) -> None:
    with pytest.raises(MemoryValidationError) as caught:
        memory.message_add(session=session, message=message)

    assert caught.value.field == field
    assert "tool_calls" in str(caught.value) and "tool_call_id" in str(caught.value)
    assert not Message.objects.filter(session=session).exists()


def test_a_snapshot_preview_does_not_trust_the_callers_session_id(db: Any) -> None:
    mine = memory.session_open(namespace="tenant-a", key="chat")
    theirs = memory.session_open(namespace="tenant-b", key="chat")
    memory.message_add(session=theirs, message=user("their secret"))
    foreign = memory.snapshot_create(session=theirs)

    forged = Snapshot(pk=foreign.pk, session_id=mine.pk)  # a pk from elsewhere, relabelled

    with pytest.raises(MemoryValidationError, match="no longer exists"):
        memory.snapshot_diff(session=mine, snapshot=forged)
