"""Every way a message is deleted takes its episodic index rows with it, so message_search
never finds deleted content and no hashed term of it outlives it (erase guarantees)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.test import TestCase

from tests.conftest import user
from tests.retention.conftest import Clock
from ttmemory import memory
from ttmemory.models import MemorySession, MessageEntry, MessageTerm
from ttmemory.services.prune import prune_expired
from ttmemory.services.sessions import message_pop

DAY = dt.timedelta(days=1)


def indexed_seqs(session: MemorySession) -> tuple[list[int], list[int]]:
    entries = MessageEntry.objects.filter(session_id=session.pk).values_list("seq", flat=True)
    terms = MessageTerm.objects.filter(session_id=session.pk).values_list("seq", flat=True)
    return sorted(entries), sorted(set(terms))


def found(namespace: str, query: str) -> list[int]:
    return [hit.seq for hit in memory.message_search(namespace=namespace, query=query, window=0)]


def test_a_rewind_in_delete_mode_and_a_pop_remove_their_index_rows(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "TRIM_MODE": "delete"}
    chat = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):  # runs the message_index job
        memory.message_add_many(
            session=chat,
            messages=[user("zebra crossing"), user("walrus tusk"), user("ocelot spots")],
        )
    assert indexed_seqs(chat) == ([1, 2, 3], [1, 2, 3])

    memory.session_rewind(session=chat, to_seq=1)
    assert indexed_seqs(chat) == ([1], [1])
    assert found("user-1", "walrus tusk") == []

    message_pop(session=chat)
    assert indexed_seqs(chat) == ([], [])
    assert found("user-1", "zebra crossing") == []


def test_the_prune_job_removes_the_index_rows_of_what_it_deletes(
    db: Any, clock: Clock, lifetimes: Any
) -> None:
    lifetimes(SESSION_TTL=DAY, SESSION_EXPIRY="archive", ARCHIVED_MESSAGE_TTL=10 * DAY)
    archived = memory.session_open(namespace="user-1", key="archived")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=archived, messages=[user("narwhal horn")])
    assert indexed_seqs(archived) == ([1], [1])
    clock.advance(days=2)
    prune_expired()  # archives the idle session: its messages stay searchable
    assert found("user-1", "narwhal horn") == [1]

    clock.advance(days=11)
    prune_expired()  # the archived messages' own lifetime is over
    assert indexed_seqs(archived) == ([], [])
    assert found("user-1", "narwhal horn") == []

    lifetimes(SESSION_TTL=DAY, SESSION_EXPIRY="delete")
    gone = memory.session_open(namespace="user-1", key="gone")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=gone, messages=[user("axolotl gills")])
    assert indexed_seqs(gone) == ([1], [1])
    clock.advance(days=2)
    prune_expired()
    assert not MemorySession.objects.filter(pk=gone.pk).exists()
    assert indexed_seqs(gone) == ([], [])
    assert found("user-1", "axolotl gills") == []


def test_a_deleted_session_takes_its_postings_with_it_by_service_and_through_the_orm(
    db: Any,
) -> None:
    # message_term has no foreign-key constraint in the database (0021): what removes a
    # session's postings is the service, or Django's cascade for a session deleted by the ORM.
    by_service = memory.session_open(namespace="user-1", key="service")
    by_orm = memory.session_open(namespace="user-1", key="orm")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=by_service, messages=[user("quokka smile")])
        memory.message_add_many(session=by_orm, messages=[user("pangolin scales")])
    assert indexed_seqs(by_service) == ([1], [1])
    assert indexed_seqs(by_orm) == ([1], [1])

    memory.session_delete(session=by_service)
    MemorySession.objects.filter(pk=by_orm.pk).delete()

    assert indexed_seqs(by_service) == ([], [])
    assert indexed_seqs(by_orm) == ([], [])
    assert MessageTerm.objects.filter(namespace="user-1").count() == 0
    assert found("user-1", "quokka smile") == []
    assert found("user-1", "pangolin scales") == []
