"""Derived rows (index postings, recall counts) commit without waiting for the WAL flush on
PostgreSQL, and never switch the flush off for a caller's transaction around them."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction

from ttmemory.models import MemorySession
from ttmemory.models.binding import derived_write

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="synchronous_commit is PostgreSQL's"
)


def flush_setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('synchronous_commit')")
        return str(cursor.fetchone()[0])


@postgres_only
def test_its_own_commit_skips_the_flush_and_the_setting_ends_with_it(
    transactional_db: Any,
) -> None:
    assert not connection.in_atomic_block
    with derived_write():
        assert flush_setting() == "off"
    assert flush_setting() == "on"


@postgres_only
def test_inside_a_callers_transaction_the_callers_commit_still_waits(
    transactional_db: Any,
) -> None:
    with transaction.atomic():
        with derived_write():
            assert flush_setting() == "on"
        assert flush_setting() == "on"


def test_it_is_a_transaction(transactional_db: Any) -> None:
    with pytest.raises(RuntimeError), derived_write():
        MemorySession.objects.create(namespace="derived", key="rolled-back")
        raise RuntimeError("boom")
    assert not MemorySession.objects.filter(namespace="derived").exists()
