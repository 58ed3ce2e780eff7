"""message_pop: the newest live message out, counters down, its seq never reused."""

from __future__ import annotations

from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.models import MemorySession, Message
from ttmemory.services.sessions import message_pop


def test_pop_removes_the_newest_live_message_and_keeps_counters_exact(
    session: MemorySession,
) -> None:
    memory.message_add_many(
        session=session,
        messages=[user("hi"), tool_call(["c1"]), tool_result("c1"), assistant("done")],
    )
    assert message_pop(session=session) == assistant("done")
    assert message_pop(session=session) == tool_result("c1")

    stored = MemorySession.objects.get(pk=session.pk)
    tokens = sum(Message.objects.filter(session=session).values_list("token_count", flat=True))
    assert (stored.message_count, stored.token_count, stored.last_seq) == (2, tokens, 4)
    assert memory.message_add(session=session, message=tool_result("c1")).seq == 5  # not reused
    assert [m["role"] for m in memory.message_recent(session=session)] == [
        "user",
        "assistant",
        "tool",
    ]


def test_pop_takes_live_messages_only_and_none_when_there_is_none(
    session: MemorySession,
) -> None:
    assert message_pop(session=session) is None
    memory.message_add_many(session=session, messages=[user("one"), user("two")])
    trimmed = memory.session_trim(session=session, max_tokens=1, archive=True)
    assert trimmed.removed_seqs == (1,)  # "one" archived; the newest group stays live
    assert message_pop(session=session) == user("two")
    assert message_pop(session=session) is None
    assert Message.objects.filter(session=session).count() == 1  # the archive is untouched
