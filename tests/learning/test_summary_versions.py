"""A summary computed outside the lock is stored only if the history did not change meanwhile.

The switch point is the summariser itself (where the LLM call runs, outside the session lock):
a rollback made there restores an equal ``summary_upto_seq``, which the old compare-and-set
on that mark alone could not see.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import user
from ttmemory import memory
from ttmemory.models import MemorySession, Message
from ttmemory.services import learning
from ttmemory.services.snapshots import snapshot_rollback_detailed


def words(n: int) -> str:
    return " ".join(f"word{i}" for i in range(n))


@pytest.fixture
def chat(db: Any, settings: Any) -> MemorySession:
    settings.TTMEMORY = {**settings.TTMEMORY, "SUMMARY_KEEP_TOKENS": 60}
    session = memory.session_open(namespace="summary-race", key="chat")
    memory.message_add_many(
        session=session, messages=[user(f"Topic {i}: {words(20)}") for i in range(1, 9)]
    )
    return session


def live_seqs(session: MemorySession) -> list[int]:
    return list(
        Message.objects.live().filter(session=session).order_by("seq").values_list("seq", flat=True)
    )


def test_a_rollback_while_the_summary_is_written_voids_it(
    chat: MemorySession, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = memory.snapshot_create(session=chat, label="before summarising")
    summarise = learning._summarise
    restored: list[int] = []

    def summarise_during_a_rollback(namespace: str, previous: str, new: list[Any]) -> str:
        session = MemorySession.objects.get(pk=chat.pk)
        result = snapshot_rollback_detailed(session=session, snapshot=before)
        restored.extend(result.restored_seqs)  # archived by the summariser's trim, live again
        return summarise(namespace, previous, new)

    monkeypatch.setattr(learning, "_summarise", summarise_during_a_rollback)
    changed = learning.session_summarise(session_id=chat.pk)

    assert len(restored) > 0  # the overlap: messages made live again inside the window
    stored = MemorySession.objects.get(pk=chat.pk)
    # No message is both covered by the summary and live: nothing appears twice in a window.
    assert all(seq > stored.summary_upto_seq for seq in live_seqs(stored))
    assert changed is False and stored.summary is None
    assert live_seqs(stored) == list(range(1, 9))


def test_an_append_while_the_summary_is_written_does_not_void_it(
    chat: MemorySession, monkeypatch: pytest.MonkeyPatch
) -> None:
    summarise = learning._summarise
    appended: list[int] = []

    def summarise_during_an_append(namespace: str, previous: str, new: list[Any]) -> str:
        session = MemorySession.objects.get(pk=chat.pk)
        appended.append(memory.message_add(session=session, message=user("Topic 9")).seq)
        return summarise(namespace, previous, new)

    monkeypatch.setattr(learning, "_summarise", summarise_during_an_append)
    changed = learning.session_summarise(session_id=chat.pk)

    assert appended == [9]
    stored = MemorySession.objects.get(pk=chat.pk)
    assert changed is True and stored.summary
    assert all(seq > stored.summary_upto_seq for seq in live_seqs(stored))
    assert 9 in live_seqs(stored)


def test_the_version_survives_a_rollback_to_an_older_snapshot(chat: MemorySession) -> None:
    early = memory.snapshot_create(session=chat, label="early")
    memory.session_trim(session=chat, max_tokens=60, archive=True)
    trimmed = MemorySession.objects.get(pk=chat.pk).history_version

    memory.snapshot_rollback(session=chat, snapshot=early)

    # The version never goes back with the state: a rollback is a new write.
    assert MemorySession.objects.get(pk=chat.pk).history_version > trimmed
