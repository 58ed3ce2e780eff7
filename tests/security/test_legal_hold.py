"""Legal holds enforced by the database: the six ways held content was lost (issue 34), the
raw ORM and SQL, partitions, expiry, and lifting the hold. Each asserts the namespace's
protected rows are exactly as they were (``protected_checksum``)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Permission, User
from django.db import connection, connections, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from tests.security.holds import filled_namespace, hold, protected_checksum
from ttmemory import jobs, memory
from ttmemory.exceptions import LegalHoldError
from ttmemory.integrations.langgraph import TTMemorySaver
from ttmemory.integrations.openai_agents import TTMemorySession
from ttmemory.models import Fact, LegalHold, Message, MessageTerm, Profile, Snapshot
from ttmemory.models.holds import missing_triggers
from ttmemory.models.partitioning import message_partitions, partition_message_table
from ttmemory.services.access import api_key_create
from ttmemory.services.facts import facts_prune_expired
from ttmemory.services.holds import legal_hold_lift
from ttmemory.services.prune import prune_expired
from ttmemory.services.sessions import message_pop

BASE = "/api/memory/"


def test_every_hold_trigger_is_installed(db: Any) -> None:
    assert missing_triggers(connection) == []


def test_a_raw_orm_delete_in_a_shell_is_refused_until_the_hold_is_lifted(db: Any) -> None:
    session = filled_namespace("acme/held")
    other = filled_namespace("acme/free")
    hold("acme/held")
    before = protected_checksum("acme/held")

    for attempt in (
        lambda: Message.objects.all().delete(),
        lambda: Message.objects.filter(session=session).delete(),
        lambda: Snapshot.objects.all().delete(),
        lambda: Fact.objects.filter(namespace="acme/held").delete(),
        lambda: Profile.objects.all().delete(),
        lambda: MessageTerm.objects.all().delete(),
        lambda: session.delete(),
        lambda: Message.objects.filter(session=session).update(data={"role": "user"}),
        lambda: Message.objects.filter(session=session).update(seq=999),
    ):
        with pytest.raises(LegalHoldError, match="under legal hold"), transaction.atomic():
            attempt()
    with pytest.raises(LegalHoldError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM ttmemory_message WHERE namespace = %s", ["acme/held"])
    assert protected_checksum("acme/held") == before

    # Outside the hold nothing changed: another namespace deletes as before.
    assert Message.objects.filter(namespace="acme/free").delete()[0] == 6
    # What rewrites no content goes on: archiving a held message, appending to it.
    Message.objects.filter(session=session, seq=1).update(archived_at=timezone.now())
    memory.message_add(session=session, message={"role": "user", "content": "still here"})

    assert legal_hold_lift(namespace="acme/held", actor="legal")
    assert Message.objects.filter(session=session).delete()[0] == 7
    assert other.pk


def test_a_session_hold_protects_that_session_only(db: Any) -> None:
    held = filled_namespace("acme/one", key="held")
    free = memory.session_open(namespace="acme/one", key="free")
    memory.message_add(session=free, message={"role": "user", "content": "bye"})
    hold("acme/one", session=held)
    with pytest.raises(LegalHoldError) as refused, transaction.atomic():
        Message.objects.filter(namespace="acme/one").delete()
    if connection.vendor == "postgresql":  # SQLite's refusal cannot carry the hold's name
        assert f"session {held.pk} of namespace 'acme/one'" in str(refused.value)
    assert Message.objects.filter(session=free).delete()[0] == 1
    # The fact learnt from the held session is held with it.
    with pytest.raises(LegalHoldError), transaction.atomic():
        Fact.objects.filter(namespace="acme/one").delete()


def test_an_unsafe_rollback_is_refused_under_a_hold(db: Any) -> None:
    session = filled_namespace("acme/rb")
    snapshot = memory.snapshot_list(session=session)[0]
    memory.message_add(session=session, message={"role": "user", "content": "after"})
    hold("acme/rb")
    before = protected_checksum("acme/rb")
    for safe in (False, True):
        with pytest.raises(LegalHoldError, match="rollback refused"):
            memory.snapshot_rollback(session=session, snapshot=snapshot, safe=safe)
    assert protected_checksum("acme/rb") == before


def test_an_unsafe_rollback_over_http_by_a_rollback_key_gets_423(db: Any) -> None:
    _, raw = api_key_create(name="bot", namespaces=["tenant-rb"], can_rollback=True)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    session = filled_namespace("tenant-rb")
    snapshot = memory.snapshot_list(session=session)[0]
    memory.message_add(session=session, message={"role": "user", "content": "after"})
    hold("tenant-rb")
    before = protected_checksum("tenant-rb")
    response = client.post(
        f"{BASE}sessions/{session.pk}/snapshots/{snapshot.pk}/rollback/",
        {"safe": False},
        format="json",
    )
    assert response.status_code == 423, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["hold"]["reason"] == "case 34"
    assert protected_checksum("tenant-rb") == before


def test_message_pop_is_refused_under_a_hold(db: Any) -> None:
    session = filled_namespace("acme/pop")
    hold("acme/pop", session=session)
    before = protected_checksum("acme/pop")
    with pytest.raises(LegalHoldError, match="pop refused"):
        message_pop(session=session)
    assert protected_checksum("acme/pop") == before


def test_a_rewind_then_25_snapshots_keeps_every_snapshot(db: Any) -> None:
    session = filled_namespace("acme/rw")
    hold("acme/rw")
    result = memory.session_rewind(session=session, to_seq=4, reason="undo")
    for n in range(25):
        memory.snapshot_create(session=session, label=f"s{n}")
    kept = set(Snapshot.objects.filter(session=session).values_list("pk", flat=True))
    assert result.safety.pk in kept
    assert len(kept) == 27  # the first, the safety one, 25 more: none evicted
    assert Message.objects.filter(session=session).count() == 6  # archived, not deleted
    legal_hold_lift(namespace="acme/rw", actor="legal")
    memory.snapshot_create(session=session, label="after the hold")
    assert Snapshot.objects.filter(session=session).count() == 20  # eviction resumes


def test_a_deleting_rewind_is_refused_under_a_hold(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "TRIM_MODE": "delete"}
    session = filled_namespace("acme/rwd")
    hold("acme/rwd")
    before = protected_checksum("acme/rwd")
    with pytest.raises(LegalHoldError, match="rewind refused"):
        memory.session_rewind(session=session, to_seq=4)
    assert protected_checksum("acme/rwd") == before


def test_a_profile_key_set_to_none_is_refused_under_a_hold(db: Any) -> None:
    filled_namespace("acme/pf")
    hold("acme/pf")
    before = protected_checksum("acme/pf")
    with pytest.raises(LegalHoldError, match="profile update refused"):
        memory.profile_update(namespace="acme/pf", kind="user", data={"tier": None})
    assert protected_checksum("acme/pf") == before
    assert memory.profile_get(namespace="acme/pf", kind="user") == {
        "city": "Lisbon",
        "tier": "gold",
    }


def test_a_profile_key_patched_to_null_over_http_gets_423(db: Any) -> None:
    user = User.objects.create_user("carol", password="pw")
    client = APIClient()
    client.force_authenticate(user)
    namespace = f"user-{user.pk}"
    filled_namespace(namespace)
    hold(namespace)
    before = protected_checksum(namespace)
    response = client.patch(f"{BASE}profile/user/", {"data": {"tier": None}}, format="json")
    assert response.status_code == 423, response.content
    assert protected_checksum(namespace) == before


def test_the_langgraph_saver_cannot_delete_a_held_thread(db: Any) -> None:
    filled_namespace("acme/lg")
    hold("acme/lg")
    before = protected_checksum("acme/lg")
    saver = TTMemorySaver(namespace="acme/lg")
    with pytest.raises(LegalHoldError):
        saver.delete_thread("thread-1")
    with pytest.raises(LegalHoldError):
        saver.delete_for_runs(["run-1"])
    assert protected_checksum("acme/lg") == before


def test_expiry_and_prune_keep_held_rows(db: Any, settings: Any) -> None:
    session = filled_namespace("acme/ttl")
    Fact.objects.filter(namespace="acme/ttl").update(expires_at=timezone.now())
    Profile.objects.filter(namespace="acme/ttl").update(expires_at=timezone.now())
    hold("acme/ttl")
    before = protected_checksum("acme/ttl")
    later = timezone.now() + dt.timedelta(days=3650)
    assert facts_prune_expired(now=later) == 0
    settings.TTMEMORY = {**settings.TTMEMORY, "SESSION_TTL": dt.timedelta(days=1)}
    prune_expired(now=later)
    assert protected_checksum("acme/ttl") == before
    with pytest.raises(LegalHoldError, match="erase refused: namespace 'acme/ttl'"):
        memory.namespace_erase(namespace="acme/ttl")
    assert protected_checksum("acme/ttl") == before
    assert session.pk


@pytest.mark.skipif(connection.vendor != "postgresql", reason="partitioning is PostgreSQL's")
def test_a_partitioned_message_table_keeps_its_hold_triggers(db: Any) -> None:
    session = filled_namespace("acme/part")
    partition_message_table(connection, partitions=4)
    assert message_partitions(connection) == 4
    assert missing_triggers(connection) == []
    hold("acme/part")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text FROM ttmemory_message WHERE session_id = %s LIMIT 1",
            [session.pk],
        )
        (partition,) = cursor.fetchone()
    before = protected_checksum("acme/part")
    for statement in (
        "DELETE FROM ttmemory_message WHERE namespace = %s",
        f"DELETE FROM {partition} WHERE namespace = %s",  # the partition itself, by name
    ):
        with pytest.raises(LegalHoldError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, ["acme/part"])
    assert protected_checksum("acme/part") == before


@pytest.fixture
def _lift_holds_after() -> Iterator[None]:
    """A transactional test's tables are emptied afterwards: the holds must go first."""
    yield
    LegalHold.objects.all().delete()
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("_lift_holds_after")
def test_the_agents_session_pop_item_is_refused_under_a_hold() -> None:
    agents_session = TTMemorySession("trip", namespace="acme/agents")

    async def run() -> None:
        await agents_session.add_items(
            [
                {"role": "user", "content": "Book Lisbon"},
                {"role": "assistant", "content": "Booked."},
            ]
        )

    asyncio.run(run())
    assert jobs.drain(30)  # the index job of the two messages, on the background thread
    hold("acme/agents")
    before = protected_checksum("acme/agents")
    with pytest.raises(LegalHoldError):
        asyncio.run(agents_session.pop_item())
    assert protected_checksum("acme/agents") == before
    assert Permission.objects.exists()  # the database is still usable after the refusal


def test_a_missing_hold_trigger_stops_start_up(db: Any) -> None:
    from ttmemory.checks import check_hold_triggers

    assert check_hold_triggers(databases=["default"]) == []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("DROP TRIGGER ttm_hold_message_delete ON ttmemory_message")
        else:
            cursor.execute("DROP TRIGGER ttm_hold_message_delete")
    (error,) = check_hold_triggers(databases=["default"])
    assert error.id == "ttmemory.E072" and "ttm_hold_message_delete" in error.msg


def test_a_deleting_trim_archives_instead_under_a_hold(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "TRIM_MODE": "delete"}
    session = filled_namespace("acme/trim")
    hold("acme/trim")
    before = protected_checksum("acme/trim")
    result = memory.session_trim(session=session, max_tokens=10)
    assert result.removed and result.mode == "archive"  # out of the window...
    assert protected_checksum("acme/trim") == before  # ...and every row kept (archived)
    assert Message.objects.filter(session=session, archived_at__isnull=False).exists()


def test_key_rotation_leaves_held_rows_and_rotates_the_rest(db: Any, settings: Any) -> None:
    import io

    from django.core.management import call_command

    from ttmemory.crypto import generate_key, key_id_of

    old = settings.TTMEMORY["ENCRYPTION_KEYS"][0]
    held = filled_namespace("acme/rot-held")
    free = filled_namespace("acme/rot-free")
    hold("acme/rot-held")
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [generate_key("rot9"), old]}
    out = io.StringIO()
    call_command("ttmemory_rotate_keys", stdout=out)

    def message_keys(session: Any) -> set[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT data FROM ttmemory_message WHERE session_id = %s", [session.pk])
            return {key_id_of(bytes(row[0])) for row in cursor.fetchall()}

    assert message_keys(free) == {"rot9"}
    assert "rot9" not in message_keys(held)
    assert "under legal hold were not re-encrypted" in out.getvalue()
    legal_hold_lift(namespace="acme/rot-held", actor="legal")
    call_command("ttmemory_rotate_keys", stdout=io.StringIO())
    assert message_keys(held) == {"rot9"}


def test_reindexing_leaves_held_facts_and_rebuilds_the_rest(db: Any) -> None:
    from ttmemory.services.reindex import facts_reindex

    filled_namespace("acme/ri-held")
    filled_namespace("acme/ri-free")
    Fact.objects.update(index_version="")  # stale, as after a blind-index key change
    hold("acme/ri-held")
    stats = facts_reindex(batch_size=10)
    assert stats.held == 1 and stats.reindexed == 1
    assert Fact.objects.get(namespace="acme/ri-held").index_version == ""
    assert Fact.objects.get(namespace="acme/ri-free").index_version != ""


def test_a_held_sessions_state_is_kept(db: Any) -> None:
    session = filled_namespace("acme/state")
    memory.session_state_update(session=session, values={"step": 1})
    hold("acme/state", session=session)
    with pytest.raises(LegalHoldError, match="state update refused"):
        memory.session_state_update(session=session, values={"step": None})
    with pytest.raises(LegalHoldError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE ttmemory_memorysession SET state = NULL WHERE id = %s", [session.pk])
    session.refresh_from_db()
    assert session.state == {"step": 1}
