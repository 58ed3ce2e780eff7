"""A plain ``DATABASES`` entry (no ``OPTIONS``: Django prepares nothing): ttmemory prepares its
two append statements and recall's candidate statement itself, nothing else, and nothing at all
with ``TTMEMORY["POOLED"]`` or
with an entry set up for a transaction pooler (``DISABLE_SERVER_SIDE_CURSORS``, or
``"prepare_threshold": None`` in ``OPTIONS``).

The test settings use the embedded default's ``prepare_threshold``; these tests reconnect with
the options a project's own ``DATABASES`` has, which is what most deployments run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, connections

from ttmemory import memory
from ttmemory.models import MemorySession

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's"
)


@pytest.fixture
def plain_options(transactional_db: Any) -> Iterator[None]:
    """The default database reconnected with no OPTIONS (psycopg's prepare_threshold None)."""
    database = connections.settings["default"]
    saved = dict(database)
    connections["default"].close()
    database["OPTIONS"] = {}
    try:
        yield
    finally:
        connections["default"].close()
        database.clear()
        database.update(saved)


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements ORDER BY prepare_time")
        return [row[0] for row in cursor.fetchall()]


def append_and_read(session: MemorySession) -> list[dict[str, Any]]:
    for i in range(3):
        memory.message_add(session=session, message={"role": "user", "content": f"one {i}"})
    for i in range(2):
        memory.message_add_many(
            session=session,
            messages=[{"role": "user", "content": f"batch {i}.{j}"} for j in range(3)],
        )
    for _ in range(6):  # Django's own statements, often enough for any threshold
        MemorySession.objects.get(pk=session.pk)
    return memory.message_recent(session=session)


def remember_and_recall(namespace: str) -> list[str]:
    for text in ("Ada lives in Lisbon", "Ada is allergic to cats", "Ada flies to Tokyo in May"):
        memory.fact_remember(namespace=namespace, text=text)
    found = []
    for _ in range(3):
        result = memory.fact_recall(namespace=namespace, query="where does Ada live", k=2)
        found.append(result.hits[0][0].text)
    return found


@postgres_only
def test_plain_databases_prepare_the_two_append_statements_and_nothing_else(
    plain_options: None, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "POOLED": False}
    session = memory.session_open(namespace="plain", key="chat")
    history = append_and_read(session)

    assert [m["content"] for m in history] == [
        *(f"one {i}" for i in range(3)),
        *(f"batch {i}.{j}" for i in range(2) for j in range(3)),
    ]
    prepared = set(prepared_statements())
    # Nothing but append statements: the one-message and the batch statement, each taking the
    # session lock inside it; and, when the lock was busy (the session's index job holds it for
    # a moment on the background thread), the same statements without the lock, run after
    # waiting for it.
    assert all(
        sql.startswith("WITH") and 'INSERT INTO "ttmemory_message"' in sql for sql in prepared
    ), "\n\n".join(prepared)
    in_statement = {sql for sql in prepared if "pg_try_advisory_xact_lock" in sql}
    assert len(in_statement) == 2, "\n\n".join(prepared)
    assert len(prepared - in_statement) <= 2, "\n\n".join(prepared)
    assert connection.connection.prepare_threshold is None  # Django's setting, untouched


@postgres_only
def test_plain_databases_prepare_the_recall_statement(plain_options: None, settings: Any) -> None:
    """Planning recall's one candidate statement cost more than running it (issue 16)."""
    settings.TTMEMORY = {**settings.TTMEMORY, "POOLED": False}
    assert remember_and_recall("plain") == ["Ada lives in Lisbon"] * 3
    prepared = prepared_statements()
    # Its variants: statistics counted or kept, vectors scanned or shortlisted in memory.
    assert 1 <= len(prepared) <= 3, prepared
    assert all(sql.startswith("SELECT * FROM (WITH q AS") for sql in prepared), prepared
    assert connection.connection.prepare_threshold is None


@postgres_only
def test_pooled_prepares_nothing(plain_options: None, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "POOLED": True}
    session = memory.session_open(namespace="pooled", key="chat")
    history = append_and_read(session)
    assert remember_and_recall("pooled") == ["Ada lives in Lisbon"] * 3

    assert len(history) == 9
    assert prepared_statements() == []


@postgres_only
@pytest.mark.parametrize(
    "entry",
    [{"DISABLE_SERVER_SIDE_CURSORS": True}, {"OPTIONS": {"prepare_threshold": None}}],
    ids=["disable-server-side-cursors", "prepare-threshold-none"],
)
def test_an_entry_set_up_for_a_pooler_prepares_nothing(
    plain_options: None, settings: Any, entry: dict[str, Any]
) -> None:
    # A project behind PgBouncer that followed Django's documentation before POOLED existed.
    settings.TTMEMORY = {**settings.TTMEMORY, "POOLED": False}
    connections.settings["default"].update(entry)
    connections["default"].close()
    session = memory.session_open(namespace="pooler-shaped", key="chat")
    history = append_and_read(session)
    assert remember_and_recall("pooler-shaped") == ["Ada lives in Lisbon"] * 3

    assert len(history) == 9
    assert prepared_statements() == []
