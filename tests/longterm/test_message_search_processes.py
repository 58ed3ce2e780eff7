"""Read-your-writes for ``message_search`` across processes, and a crash between an append and
its indexing: a committed message is found at once from any process, whether or not the
``message_index`` job has run, and a message whose indexing died with its process is still
found and is indexed later (by the next append's job, or ``ttmemory_reindex``)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from tests.conftest import user
from ttmemory import jobs, memory
from ttmemory.models import MemorySession, Message, MessageEntry

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "user-rw"

pytestmark = [pytest.mark.contract, pytest.mark.django_db(transaction=True)]


def other_process(mode: str, key: str, text: str) -> subprocess.CompletedProcess[str]:
    from django.conf import settings

    overrides = {k: v for k, v in settings.TTMEMORY.items() if k != "ENCRYPTION_KEYS"}
    return subprocess.run(
        [sys.executable, "-m", "tests.longterm.episodic_worker", mode,
         connection.settings_dict["NAME"], NAMESPACE, key, text],
        cwd=ROOT, env={**os.environ, "TTM_OVERRIDES": json.dumps(overrides)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def found(query: str) -> list[tuple[str, int]]:
    """The hits of ``query``; a catch-up job the search queues is not run."""
    previous = jobs.get_dispatcher()
    jobs.set_dispatcher(lambda name, args: None)
    try:
        hits = memory.message_search(namespace=NAMESPACE, query=query, window=0)
    finally:
        jobs.set_dispatcher(previous)
    return [(hit.session.key, hit.seq) for hit in hits]


def indexed(key: str) -> list[int]:
    session = MemorySession.objects.get(namespace=NAMESPACE, key=key)
    return sorted(MessageEntry.objects.filter(session=session).values_list("seq", flat=True))


def test_a_committed_message_is_found_at_once_from_another_process(monkeypatch: Any) -> None:
    # The job goes to a worker that has not run it yet, in both processes.
    monkeypatch.setattr(jobs, "_dispatcher", lambda name, args: None)
    session = memory.session_open(namespace=NAMESPACE, key="here")
    memory.message_add(session=session, message=user("The gate code is 4471, ask Ines."))
    assert indexed("here") == []
    searched = other_process("search", "-", "gate code Ines")
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout) == [["here", 1]]

    appended = other_process("append", "there", "The spare tyre is in the garage loft.")
    assert appended.returncode == 0, appended.stderr
    assert indexed("there") == []
    assert found("spare tyre garage") == [("there", 1)]


def test_a_crash_between_append_and_indexing_loses_no_search_hit() -> None:
    crashed = other_process("append-then-die", "c", "The boat keys hang behind the fridge.")
    assert crashed.returncode == -signal.SIGKILL, (crashed.returncode, crashed.stderr)
    # Dead in message_add, after its commit and before the job ran: stored, not indexed.
    assert Message.objects.filter(session__key="c", namespace=NAMESPACE).count() == 1
    assert indexed("c") == []
    assert found("boat keys fridge") == [("c", 1)]

    # The next append's job (on this process's background thread) indexes what the dead
    # process left behind.
    session = MemorySession.objects.get(namespace=NAMESPACE, key="c")
    for n in range(2, 33):  # up to the next MESSAGE_INDEX_EVERY crossing
        memory.message_add(session=session, message=user(f"small talk {n}"))
        assert jobs.drain(30)
        if indexed("c"):
            break
    assert indexed("c")[0] == 1
    assert found("boat keys fridge") == [("c", 1)]


def test_ttmemory_reindex_indexes_what_a_crash_left_behind() -> None:
    crashed = other_process("append-then-die", "d", "The ladder is chained to the shed.")
    assert crashed.returncode == -signal.SIGKILL, (crashed.returncode, crashed.stderr)
    assert indexed("d") == []
    call_command("ttmemory_reindex", stdout=io.StringIO())
    assert indexed("d") == [1]
    assert found("ladder chained shed") == [("d", 1)]
