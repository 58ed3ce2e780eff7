"""Recall statistics live in ``FactUsage``, off the wide fact row (migration 0022): counts add
up across flushes, go with their fact, survive the upgrade and its reversal, and writing them
never touches the fact row (nor, so, its indexes or the vector cache's generation)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from ttmemory import memory
from ttmemory.models import Fact, FactUsage
from ttmemory.services.facts import facts_touch_recalled

NS = "user-usage"


def watch_fact_writes() -> None:
    """On SQLite, count the writes to fact rows (a temporary trigger of this connection):
    SQLite has no row version such as PostgreSQL's xmin."""
    if connection.vendor == "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE IF NOT EXISTS fact_writes (fact_id INTEGER)")
        cursor.execute(
            "CREATE TEMP TRIGGER IF NOT EXISTS fact_written AFTER UPDATE ON ttmemory_fact "
            "BEGIN INSERT INTO fact_writes VALUES (NEW.id); END"
        )


def row_version(fact: Fact) -> str:
    """Changes whenever the fact's row is written: PostgreSQL's xmin of the row; on SQLite the
    number of writes ``watch_fact_writes`` counted."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT xmin::text FROM ttmemory_fact WHERE id = %s", [fact.pk])
            return f"xmin {cursor.fetchone()[0]}"
        cursor.execute("SELECT count(*) FROM fact_writes WHERE fact_id = %s", [fact.pk])
        return f"{cursor.fetchone()[0]} writes"


def test_counts_add_up_across_flushes_and_leave_the_fact_row_alone(db: Any) -> None:
    watch_fact_writes()
    ada = memory.fact_remember(namespace=NS, text="Ada collects vinyl records")
    bob = memory.fact_remember(namespace=NS, text="Bob keeps bees on the roof")
    before = row_version(ada)
    assert ada.recall_count == 0 and ada.last_recalled_at is None  # never recalled: no row

    assert facts_touch_recalled(counts=[(ada.pk, 2), (bob.pk, 1), (999_999_999, 4)]) == 2
    assert facts_touch_recalled(counts=[(ada.pk, 3)]) == 1

    ada = Fact.objects.get(pk=ada.pk)
    assert (ada.recall_count, Fact.objects.get(pk=bob.pk).recall_count) == (5, 1)
    assert ada.last_recalled_at is not None
    assert not FactUsage.objects.filter(pk=999_999_999).exists()  # unknown ids are ignored
    assert row_version(ada) == before  # the fact row was not written
    with transaction.atomic():  # the probe sees a write (a savepoint: a new xmin)
        Fact.objects.filter(pk=ada.pk).update(kind=ada.kind)
    assert row_version(ada) != before

    memory.fact_forget(namespace=NS, fact_id=bob.pk)
    assert not FactUsage.objects.filter(pk=bob.pk).exists()  # gone with its fact


def test_migration_0022_moves_counts_and_moves_them_back(transactional_db: Any) -> None:
    fact = memory.fact_remember(namespace=NS, text="Ada collects vinyl records")
    other = memory.fact_remember(namespace=NS, text="Bob keeps bees on the roof")
    at = timezone.now().replace(microsecond=0) - dt.timedelta(days=2)
    executor = MigrationExecutor(connection)
    leaf = executor.loader.graph.leaf_nodes()
    try:
        executor.migrate([("ttmemory", "0021_message_term_no_db_constraint")])
        with connection.cursor() as cursor:  # counts written by the release before 0022
            cursor.execute(
                "UPDATE ttmemory_fact SET recall_count = 7, last_recalled_at = %s WHERE id = %s",
                [at, fact.pk],
            )
        MigrationExecutor(connection).migrate(leaf)
        moved = Fact.objects.get(pk=fact.pk)
        assert (moved.recall_count, moved.last_recalled_at) == (7, at)
        assert not FactUsage.objects.filter(pk=other.pk).exists()  # never recalled: no row
        facts_touch_recalled(counts=[(fact.pk, 1)])

        MigrationExecutor(connection).migrate([("ttmemory", "0021_message_term_no_db_constraint")])
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, recall_count FROM ttmemory_fact WHERE namespace = %s ORDER BY id",
                [NS],
            )
            assert cursor.fetchall() == [(fact.pk, 8), (other.pk, 0)]
    finally:
        MigrationExecutor(connection).migrate(leaf)


def test_recalled_facts_read_their_counts_in_one_query(
    db: Any, django_assert_num_queries: Any
) -> None:
    """A Python caller reading ``recall_count`` of its hits: one query for all of them."""
    texts = ["Ada collects vinyl records", "Ada keeps vinyl in the attic", "Bob sells vinyl"]
    facts = [memory.fact_remember(namespace=NS, text=text) for text in texts]
    facts_touch_recalled(counts=[(facts[0].pk, 4), (facts[1].pk, 2)])
    stored = {u.pk: u.last_recalled_at for u in FactUsage.objects.all()}

    found = memory.fact_recall(namespace=NS, query="vinyl records", k=5)
    hits = {fact.pk: fact for fact, _ in found.hits}
    assert set(hits) == {fact.pk for fact in facts}
    with django_assert_num_queries(1):  # all the hits' counts at the first read, not one each
        seen = {pk: (fact.recall_count, fact.last_recalled_at) for pk, fact in hits.items()}
    # The counts as they were before this recall (its own are written after it, in the
    # background), their time a timezone-aware datetime on every database.
    assert seen == {
        facts[0].pk: (4, stored[facts[0].pk]),
        facts[1].pk: (2, stored[facts[1].pk]),
        facts[2].pk: (0, None),  # never recalled before
    }
    assert isinstance(stored[facts[0].pk], dt.datetime) and stored[facts[0].pk].tzinfo
