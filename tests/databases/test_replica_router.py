"""ReplicaRouter's choices and the replica settings' checks, on every database.

Here the ``replica`` alias is the test settings' mirror of the test database (one database
behind two aliases); tests/databases/test_replicas.py runs it against a real standby.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections, transaction

from ttmemory import memory, routers
from ttmemory.checks import check_options, check_replicas
from ttmemory.models import MemorySession, Message
from ttmemory.routers import ReplicaRouter

ROUTER = "ttmemory.routers.ReplicaRouter"


@pytest.fixture
def routed(settings: Any) -> Iterator[None]:
    settings.DATABASE_ROUTERS = [ROUTER]
    settings.TTMEMORY = {**settings.TTMEMORY, "READ_REPLICAS": ["replica"]}
    yield
    for alias in ("default", "replica"):  # this thread's connections outlive the test
        wrappers = connections[alias].execute_wrappers
        wrappers[:] = [w for w in wrappers if w.__module__ != routers.__name__]


def fresh(fn: Any) -> Any:
    """Run ``fn`` as a caller of its own (no write made yet in its context)."""
    return contextvars.Context().run(fn)


@pytest.mark.django_db(transaction=True, databases=["default", "replica"])
def test_reads_go_to_the_replica_and_writes_to_the_primary(routed: None) -> None:
    def caller() -> None:
        assert Message.objects.all().db == "replica"
        session = memory.session_open(namespace="router", key="chat")
        assert session._state.db == "default"
        memory.message_add(session=session, message={"role": "user", "content": "hi"})
        # A mirror is not behind the primary: the caller's reads go back to it at once.
        assert [m["content"] for m in memory.message_recent(session=session)] == ["hi"]
        assert MemorySession.objects.filter(pk=session.pk).db == "replica"
        with transaction.atomic():  # inside a primary transaction: the primary
            assert MemorySession.objects.filter(pk=session.pk).db == "default"
            assert MemorySession.objects.select_for_update().db == "default"
        # Other apps' models are not ttmemory's to route.
        assert User.objects.all().db == "default"

    fresh(caller)


def test_relations_across_primary_and_replica_and_no_migrations_on_a_replica(
    settings: Any,
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "READ_REPLICAS": ["replica"]}
    router = ReplicaRouter()
    on_replica, on_primary = MemorySession(), Message()
    on_replica._state.db, on_primary._state.db = "replica", "default"
    assert router.allow_relation(on_replica, on_primary) is True
    elsewhere = User()
    elsewhere._state.db = "other"
    assert router.allow_relation(on_replica, elsewhere) is None
    assert router.allow_migrate("replica", "ttmemory") is False
    assert router.allow_migrate("default", "ttmemory") is None


def test_replica_settings_name_databases_and_need_the_router(settings: Any) -> None:
    settings.DATABASE_ROUTERS = []
    settings.TTMEMORY = {**settings.TTMEMORY, "READ_REPLICAS": ["replica"]}
    assert [m.id for m in check_replicas()] == ["ttmemory.W063"]
    settings.DATABASE_ROUTERS = [ROUTER]
    assert check_replicas() == []
    settings.TTMEMORY = {**settings.TTMEMORY, "READ_REPLICAS": ["replica", "nowhere"]}
    errors = check_replicas()
    assert [m.id for m in errors] == ["ttmemory.E047"] and "'nowhere'" in errors[0].msg
    settings.TTMEMORY = {**settings.TTMEMORY, "READ_REPLICAS": "replica"}  # not a list
    assert check_replicas() == []  # the rule's error, reported once by check_options:
    assert [m.id for m in check_options() if "READ_REPLICAS" in m.msg] == ["ttmemory.E047"]
