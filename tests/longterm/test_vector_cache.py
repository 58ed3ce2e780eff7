"""SQLite recall's in-memory vectors (``longterm/vector_cache.py``) answer as the database does.

Served from memory only while the database is unchanged: a write by another connection or
another process, a forget, an erase, an ended or expired fact is seen by the very next query.
Every test runs on a real SQLite file outside any transaction (the cache is bypassed inside
one) and checks the cache did serve, so none passes by reading the database instead.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone

from ttmemory import memory
from ttmemory.backends.embedders import get_embedder
from ttmemory.longterm import blind, candidates, vector_cache
from ttmemory.models import Fact

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the vector cache serves SQLite's numpy search"
)

ROOT = Path(__file__).resolve().parents[2]
NS = "user-vcache"
TEXTS = [
    "Ada is allergic to peanuts and carries an epipen",
    "Ada prefers window seats on long flights",
    "Ada's cat Pixel is allergic to fish",
    "Ada lives in Lisbon near the river",
    "Ada plays the cello on Sundays with friends",
    "Ada's brother Tom lives in Porto",
    "Peanut butter is Tom's favourite snack",
    "Ada flies to Tokyo in March for work",
    "Ada's favourite colour is teal",
    "Ada is learning Japanese before her trip",
]
QUESTIONS = [
    "what is Ada allergic to and what does she carry",
    "where does her brother live these days",
    "which seat does she like on long flights",
    "what is she learning for the trip to Tokyo",
]


@pytest.fixture
def vcache(transactional_db: Any, settings: Any) -> Any:
    """An empty cache of the default size, for recall outside any transaction."""
    settings.TTMEMORY = {**settings.TTMEMORY, "RECALL_VECTOR_CACHE_MB": 128}
    vector_cache.clear()
    yield vector_cache
    vector_cache.clear()


def remember(texts: list[str], *, namespace: str = NS, **extra: Any) -> list[Fact]:
    return [memory.fact_remember(namespace=namespace, text=t, **extra) for t in texts]


def vector_list(
    question: str, *, namespace: str = NS, kinds: list[str] | None = None, limit: int = 5
) -> dict[int, float]:
    """The vector candidates of ``question`` (fact id -> cosine), as recall gets them."""
    embedder = get_embedder()
    found = candidates.candidates(
        namespace,
        terms=blind.query_hashes(question, namespace=namespace),
        vector=embedder.embed([question])[0],
        model=embedder.model,
        limit=limit,
        kinds=kinds,
    )
    return found.vector


def from_database(question: str, **kwargs: Any) -> dict[int, float]:
    """The same list with the cache off: every vector read from the database."""
    from django.conf import settings

    with override_settings(TTMEMORY={**settings.TTMEMORY, "RECALL_VECTOR_CACHE_MB": 0}):
        return vector_list(question, **kwargs)


def served(action: Any) -> Any:
    """Run ``action``; fail unless the cache answered it (no read of the database's vectors)."""
    hits, reads = vector_cache.stats.hits, vector_cache.stats.reads
    result = action()
    assert vector_cache.stats.hits > hits, "not served from memory"
    assert vector_cache.stats.reads == reads, "the vectors were read again"
    return result


@contextmanager
def raw_sqlite() -> Iterator[sqlite3.Connection]:
    """Another connection to the test database, as another process would have (autocommit)."""
    other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None, timeout=30)
    try:
        yield other
    finally:
        other.close()


def test_memory_ranks_exactly_as_the_database(vcache: Any) -> None:
    facts = remember(TEXTS[:6]) + remember(TEXTS[6:], kind="preference")
    memory.fact_supersede(namespace=NS, fact_id=facts[3].pk, text="Ada moved to Faro last May")
    Fact.objects.filter(pk=facts[5].pk).update(expires_at=timezone.now() - dt.timedelta(days=1))
    Fact.objects.filter(pk=facts[4].pk).update(expires_at=timezone.now() + dt.timedelta(days=9))
    for question in QUESTIONS:
        for kinds in (None, ["preference"], ["fact", "preference"], ["nothing"]):
            for limit in (1, 3, 50):
                expected = from_database(question, kinds=kinds, limit=limit)
                vector_list(question, kinds=kinds, limit=limit)  # read into memory
                got = served(lambda: vector_list(question, kinds=kinds, limit=limit))  # noqa: B023
                assert list(got.items()) == list(expected.items())  # same ids, order, scores
    assert facts[3].pk not in got and facts[5].pk not in got  # superseded, expired


def test_a_write_by_another_connection_is_seen_by_the_next_query(vcache: Any) -> None:
    facts = remember(TEXTS)
    question = QUESTIONS[0]
    before = vector_list(question)
    assert served(lambda: vector_list(question)) == before
    best, other = next(iter(before)), facts[-1]
    own = struct.pack("<384f", *get_embedder().embed([question])[0])
    with raw_sqlite() as other_process:
        # Ends the best hit and gives another fact the question's own vector.
        other_process.execute(
            "UPDATE ttmemory_fact SET valid_to = '2020-01-01' WHERE id = ?", [best]
        )
        other_process.execute(
            "UPDATE ttmemory_fact SET embedding = ? WHERE id = ?", [own, other.pk]
        )
    after = vector_list(question)
    assert best not in after
    assert next(iter(after)) == other.pk
    assert after == from_database(question)


def test_a_model_change_by_another_connection_drops_those_vectors(vcache: Any) -> None:
    facts = remember(TEXTS)
    question = QUESTIONS[1]
    first = vector_list(question)
    served(lambda: vector_list(question))
    with raw_sqlite() as other_process:  # re-embedded with another model elsewhere
        other_process.execute(
            "UPDATE ttmemory_fact SET embedding_model = 'another-model' WHERE id = ?",
            [next(iter(first))],
        )
    after = vector_list(question, limit=len(facts))
    assert next(iter(first)) not in after
    assert len(after) == len(facts) - 1


def test_a_fact_forgotten_by_another_process_never_comes_back(vcache: Any) -> None:
    remember(TEXTS)
    question = QUESTIONS[2]
    gone = next(iter(vector_list(question)))
    served(lambda: vector_list(question))
    script = (
        "import os, sys, django; from django.conf import settings; "
        "settings.DATABASES['default']['NAME'] = os.environ['TTM_DB_NAME']; django.setup(); "
        "from ttmemory import memory; "
        "memory.fact_forget(namespace=sys.argv[1], fact_id=int(sys.argv[2]))"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "TTM_DB_NAME": str(connection.settings_dict["NAME"]),
    }
    done = subprocess.run(
        [sys.executable, "-c", script, NS, str(gone)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert not Fact.objects.filter(pk=gone).exists()
    after = vector_list(question)
    assert gone not in after
    hits = memory.fact_recall(namespace=NS, query=question, k=10).hits
    assert gone not in [fact.pk for fact, _ in hits]


def test_forget_and_erase_in_this_process_are_seen_at_once(vcache: Any) -> None:
    facts = remember(TEXTS)
    question = QUESTIONS[0]
    first = next(iter(vector_list(question)))
    served(lambda: vector_list(question))
    memory.fact_forget(namespace=NS, fact_id=first)
    assert first not in vector_list(question)
    served(lambda: vector_list(question))
    memory.namespace_erase(namespace=NS)
    assert vector_list(question) == {}
    assert memory.fact_recall(namespace=NS, query=question, k=10).hits == []
    assert all(not Fact.objects.filter(pk=f.pk).exists() for f in facts)


def test_an_expiry_passing_is_seen_without_any_write(vcache: Any, monkeypatch: Any) -> None:
    facts = remember(TEXTS)
    question = QUESTIONS[0]
    first = next(iter(vector_list(question)))
    Fact.objects.filter(pk=first).update(expires_at=timezone.now() + dt.timedelta(hours=1))
    assert first in vector_list(question)
    assert first in served(lambda: vector_list(question))
    later = timezone.now() + dt.timedelta(hours=2)
    monkeypatch.setattr(timezone, "now", lambda: later)
    after = vector_list(question, limit=len(facts))
    assert first not in after
    assert after == from_database(question, limit=len(facts))


def test_a_write_inside_the_callers_transaction_is_seen(vcache: Any) -> None:
    remember(TEXTS)
    question = "which tea does Ada drink in the morning"
    vector_list(question)
    served(lambda: vector_list(question))
    with transaction.atomic():
        new = memory.fact_remember(namespace=NS, text="Ada drinks green tea in the morning")
        assert next(iter(vector_list(question))) == new.pk  # uncommitted, this transaction's
        transaction.set_rollback(True)
    assert new.pk not in vector_list(question)


def test_namespaces_never_share_vectors(vcache: Any) -> None:
    mine = {f.pk for f in remember(TEXTS[:5], namespace="vcache-a")}
    theirs = {f.pk for f in remember(TEXTS[5:], namespace="vcache-b")}
    for question in QUESTIONS:
        for namespace, own in (("vcache-a", mine), ("vcache-b", theirs)):
            vector_list(question, namespace=namespace, limit=50)
            got = served(lambda: vector_list(question, namespace=namespace, limit=50))  # noqa: B023
            assert set(got) == own
            assert got == from_database(question, namespace=namespace, limit=50)


def test_memory_stays_within_its_bound(vcache: Any, settings: Any) -> None:
    # 4096 dimensions: 16 KiB a fact, so 1 MiB holds 64 of them.
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EMBEDDER": {
            "BACKEND": "ttmemory.backends.embedders.HashEmbedder",
            "OPTIONS": {"dimensions": 4096},
        },
        "RECALL_VECTOR_CACHE_MB": 1,
    }
    # 25 facts (400 KiB) a namespace: two fit, the third evicts the least recently used.
    for n in range(3):
        texts = [f"{text} ({n}, {i})" for i in range(5) for text in TEXTS[:5]]
        remember(texts, namespace=f"vb-{n}")
    question = QUESTIONS[0]
    for n in (0, 1):
        vector_list(question, namespace=f"vb-{n}")
    served(lambda: vector_list(question, namespace="vb-0"))  # vb-0 now the most recent
    vector_list(question, namespace="vb-2")
    assert vector_cache.size() <= 1024 * 1024
    assert vector_cache.stats.evictions >= 1
    served(lambda: vector_list(question, namespace="vb-0"))  # kept
    reads = vector_cache.stats.reads
    assert vector_list(question, namespace="vb-1") == from_database(question, namespace="vb-1")
    assert vector_cache.stats.reads == reads + 1  # vb-1 was the one dropped
    # A namespace larger than the whole bound is answered from the database, never kept.
    remember([f"{text} [{i}]" for i in range(7) for text in TEXTS], namespace="vb-big")
    assert vector_list("vb", namespace="vb-big") == from_database("vb", namespace="vb-big")
    assert vector_cache.size() <= 1024 * 1024
    assert all(key[1] != "vb-big" for key in vector_cache._matrices)


def test_an_open_statement_on_djangos_connection_cannot_make_old_vectors_current(
    vcache: Any,
) -> None:
    """WAL mode: a statement left open on Django's connection (a queryset iterated in chunks
    around the recall) holds an older snapshot; vectors read through it after a commit would
    be kept as current. They are read through a connection of their own."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode=WAL")
        assert cursor.fetchone()[0] == "wal"
    try:
        remember(TEXTS)
        question = QUESTIONS[0]
        best = next(iter(vector_list(question)))
        served(lambda: vector_list(question))
        pending = connection.connection.cursor()
        pending.execute("SELECT id FROM ttmemory_fact")
        pending.fetchone()  # its read transaction stays open
        with raw_sqlite() as other_process:
            other_process.execute(
                "UPDATE ttmemory_fact SET valid_to = '2020-01-01' WHERE id = ?", [best]
            )
        vector_list(question)  # read again: the database changed
        pending.fetchall()
        pending.close()
        assert best not in served(lambda: vector_list(question))
        assert best not in from_database(question)
    finally:
        vector_cache.clear()  # its watcher too: leaving WAL needs the file to itself
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode=DELETE")
            assert cursor.fetchone()[0] == "delete"
