"""Migration 0018 (postings keyed by (session, seq, term), no surrogate id) keeps every posting,
both ways, and message_search finds the same turns before and after it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import TestCase

from tests.conftest import user
from tests.longterm.test_message_search import CHAT
from ttmemory import jobs, memory
from ttmemory.models import MemorySession, MessageTerm
from ttmemory.services.episodes import messages_index_pending

pytestmark = pytest.mark.contract

BEFORE = [("ttmemory", "0017_fact_neighbours")]
QUERIES = ["the cat that hates the vet", "who is the landlord", "sunny day", "Porto flat"]


def postings(model: Any) -> set[tuple[int, str, int, int, int]]:
    return set(model.objects.values_list("session_id", "namespace", "seq", "term", "tf"))


def searches() -> list[list[tuple[str, str, int, float]]]:
    return [
        [
            (hit.session.namespace, hit.session.key, hit.seq, round(hit.score, 9))
            for hit in memory.message_search(namespace=namespace, query=query, k=5)
        ]
        for namespace in ("user-1", "user-2")
        for query in QUERIES
    ]


def _migrate(target: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.migrate(target)
    return MigrationExecutor(connection).loader.project_state(target).apps


@pytest.mark.django_db(transaction=True)
def test_the_postings_survive_the_migration_both_ways() -> None:
    for namespace in ("user-1", "user-2"):
        for key in ("a", "b"):
            session = memory.session_open(namespace=namespace, key=key)
            with TestCase.captureOnCommitCallbacks(execute=True):
                memory.message_add_many(session=session, messages=CHAT)
    assert jobs.drain(30)  # the index jobs run on the background thread
    stored = postings(MessageTerm)
    found = searches()
    assert len(stored) > 100 and all(found)
    try:
        old = _migrate(BEFORE).get_model("ttmemory", "MessageTerm")
        assert postings(old) == stored
        ids = list(old.objects.values_list("id", flat=True))
        assert len(set(ids)) == len(stored)  # 0017's surrogate key, one per posting
    finally:
        leaf = MigrationExecutor(connection).loader.graph.leaf_nodes()
        _migrate(leaf)
    assert postings(MessageTerm) == stored
    assert searches() == found
    # The new layout takes the index job's postings of an append and still refuses a second
    # posting of one term in one message (its primary key took over the unique constraint).
    session = MemorySession.objects.get(namespace="user-1", key="a")
    memory.message_add(session=session, message=user("The spare key is under the blue pot."))
    assert messages_index_pending(session_id=session.pk) == 1
    hits = memory.message_search(namespace="user-1", query="spare key blue pot", k=1)
    assert hits[0].session == session and hits[0].seq == len(CHAT) + 1
    posting = MessageTerm.objects.filter(session_id=session.pk, seq=len(CHAT) + 1).first()
    assert posting is not None
    with pytest.raises(IntegrityError), transaction.atomic():
        MessageTerm.objects.create(
            session_id=session.pk, namespace="user-1", seq=posting.seq, term=posting.term, tf=3
        )
