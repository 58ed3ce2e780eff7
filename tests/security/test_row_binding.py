"""Finding 1 of issue 12: a ciphertext is bound to its row, not only to its table and column.

The attacker can write the database (a leaked dump restored, an injection elsewhere, an
operator) and holds an ordinary account. Copying another tenant's encrypted bytes into a row
of their own must not make the library, or the REST API, decrypt and serve them.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import checks
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from rest_framework.test import APIClient

from tests.api.conftest import BASE, grant
from tests.conftest import raw_rows, user
from ttmemory import memory
from ttmemory.crypto import FORMAT_VERSION, LEGACY_FORMAT_VERSION, get_keyring
from ttmemory.exceptions import DecryptionError, SnapshotIntegrityError
from ttmemory.models import (
    CiphertextUpgrade,
    Fact,
    IdempotencyRecord,
    MemorySession,
    Message,
    Profile,
    Snapshot,
)
from ttmemory.models.ciphertext import ROW_BINDING, reset_legacy_format_cache
from ttmemory.services import rotation

SECRET = "PIN 4321"


def quote(name: str) -> str:
    return connection.ops.quote_name(name)


def copy_value(model: type[Any], column: str, source_pk: int, target_pk: int) -> None:
    """What the attacker does: one tenant's stored bytes into another tenant's row."""
    table = quote(model._meta.db_table)
    (value,) = raw_rows(f"SELECT {quote(column)} FROM {table} WHERE id = %s", [source_pk])[0]
    assert value is not None and SECRET.encode() not in bytes(value)  # ciphertext, not text
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {quote(column)} = %s WHERE id = %s", [value, target_pk])
        assert cursor.rowcount == 1


def tenant(namespace: str, secret: str) -> dict[str, Any]:
    """A tenant with one of everything that is encrypted, each holding ``secret``."""
    session = memory.session_open(namespace=namespace, key="chat")
    memory.message_add_many(
        session=session, messages=[user(f"{secret} (1)"), user(f"{secret} (2)")]
    )
    MemorySession.objects.filter(pk=session.pk).update(summary=f"summary: {secret}")
    memory.session_state_update(session=session, values={"pin": secret})
    snapshot = memory.snapshot_create(session=session, label="before")
    fact = memory.fact_remember(namespace=namespace, text=f"the user's {secret}")
    memory.profile_update(namespace=namespace, kind="user", data={"pin": secret})
    record = IdempotencyRecord.objects.create(
        namespace=namespace,
        scope=f"messages:{session.pk}",
        key="retry-1",
        fingerprint="f" * 64,
        status_code=201,
        response={"messages": [secret]},
    )
    session.refresh_from_db()
    return {
        "namespace": namespace,
        "session": session,
        "messages": list(Message.objects.filter(session=session).order_by("seq")),
        "snapshot": snapshot,
        "fact": fact,
        "profile": Profile.objects.get(namespace=namespace, kind="user"),
        "record": record,
    }


@pytest.fixture
def victim(db: Any) -> dict[str, Any]:
    return tenant("user-victim", SECRET)


@pytest.fixture
def attacker(db: Any) -> dict[str, Any]:
    return tenant("user-attacker", "nothing to see")


def _read_messages(a: dict[str, Any]) -> Any:
    return memory.message_recent(session=a["session"])


def _read_summary(a: dict[str, Any]) -> Any:
    return memory.context_window(session=a["session"], max_tokens=1000)


def _read_state(a: dict[str, Any]) -> Any:
    return memory.prompt_build(session=a["session"], max_tokens=1000)


def _read_snapshot(a: dict[str, Any]) -> Any:
    memory.snapshot_rollback(session=a["session"], snapshot=a["snapshot"])
    return memory.message_recent(session=a["session"])


def _read_fact(a: dict[str, Any]) -> Any:
    return [fact.text for fact in memory.fact_list(namespace=a["namespace"])]


def _read_profile(a: dict[str, Any]) -> Any:
    return memory.profile_get(namespace=a["namespace"])


def _read_record(a: dict[str, Any]) -> Any:
    return IdempotencyRecord.objects.get(pk=a["record"].pk).response


# (what is copied: model, column, the row of a tenant, how the library reads it)
SWAPS: list[tuple[str, type[Any], str, Callable[[dict[str, Any]], int], Callable[..., Any]]] = [
    ("message", Message, "data", lambda t: t["messages"][0].pk, _read_messages),
    ("summary", MemorySession, "summary", lambda t: t["session"].pk, _read_summary),
    ("state", MemorySession, "state", lambda t: t["session"].pk, _read_state),
    ("snapshot", Snapshot, "payload", lambda t: t["snapshot"].pk, _read_snapshot),
    ("fact", Fact, "text", lambda t: t["fact"].pk, _read_fact),
    ("profile", Profile, "data", lambda t: t["profile"].pk, _read_profile),
    ("idempotency", IdempotencyRecord, "response", lambda t: t["record"].pk, _read_record),
]


@pytest.mark.parametrize(
    ("model", "column", "row", "read"), [s[1:] for s in SWAPS], ids=[s[0] for s in SWAPS]
)
def test_another_tenants_ciphertext_copied_into_my_row_does_not_decrypt(
    victim: dict[str, Any],
    attacker: dict[str, Any],
    model: type[Any],
    column: str,
    row: Callable[[dict[str, Any]], int],
    read: Callable[[dict[str, Any]], Any],
) -> None:
    assert SECRET not in str(read(attacker))  # the attacker's own row reads fine before

    copy_value(model, column, row(victim), row(attacker))

    if model is Snapshot:  # a rollback refuses the payload and restores nothing
        with pytest.raises(SnapshotIntegrityError):
            read(attacker)
    else:
        with pytest.raises(DecryptionError, match=f"{model.__name__}.{column}"):
            read(attacker)
    with pytest.raises(DecryptionError):
        memory.namespace_export(namespace=attacker["namespace"]) if model not in (
            IdempotencyRecord,
        ) else IdempotencyRecord.objects.get(pk=row(attacker)).response
    # The victim's own row is untouched and still reads.
    assert SECRET in str(read(victim))


def test_a_message_moved_to_another_seq_of_the_same_session_does_not_decrypt(
    victim: dict[str, Any],
) -> None:
    first, second = victim["messages"]
    copy_value(Message, "data", first.pk, second.pk)

    with pytest.raises(DecryptionError, match="namespace, session_id, seq"):
        memory.message_recent(session=victim["session"])


def test_a_fact_moved_to_another_fact_of_the_same_namespace_does_not_decrypt(
    victim: dict[str, Any],
) -> None:
    other = memory.fact_remember(namespace=victim["namespace"], text="likes trains")
    copy_value(Fact, "text", victim["fact"].pk, other.pk)

    with pytest.raises(DecryptionError):
        Fact.objects.get(pk=other.pk).text  # noqa: B018


def test_a_snapshot_moved_to_another_snapshot_of_the_same_session_does_not_restore(
    victim: dict[str, Any],
) -> None:
    session = victim["session"]
    memory.message_add(session=session, message=user("after the first snapshot"))
    later = memory.snapshot_create(session=session, label="later")
    copy_value(Snapshot, "payload", victim["snapshot"].pk, later.pk)

    with pytest.raises(SnapshotIntegrityError):
        memory.snapshot_rollback(session=session, snapshot=later)
    assert [m["content"] for m in memory.message_recent(session=session)][-1] == (
        "after the first snapshot"
    )


def _last_message(t: dict[str, Any]) -> int:
    return Message.objects.filter(session=t["session"]).order_by("-seq").values_list("pk")[0][0]


def test_the_rest_api_answers_an_error_not_the_other_tenants_content(db: Any) -> None:
    victim_user = User.objects.create_user("victim")
    attacker_user = User.objects.create_user("attacker")
    grant(attacker_user, "rollback_memorysession")
    victim_ns, attacker_ns = f"user-{victim_user.pk}", f"user-{attacker_user.pk}"
    victim, attacker = tenant(victim_ns, SECRET), tenant(attacker_ns, "nothing to see")
    client = APIClient()
    client.force_authenticate(attacker_user)
    sid, snap = attacker["session"].pk, attacker["snapshot"].pk
    routes = [
        ("get", f"{BASE}sessions/{sid}/messages/", Message, "data", "messages"),
        ("get", f"{BASE}sessions/{sid}/", MemorySession, "summary", "session"),
        ("get", f"{BASE}sessions/{sid}/", MemorySession, "state", "session"),
        (
            "post",
            f"{BASE}sessions/{sid}/snapshots/{snap}/rollback/",
            Snapshot,
            "payload",
            "snapshot",
        ),
        ("get", f"{BASE}facts/", Fact, "text", "fact"),
        ("get", f"{BASE}profile/", Profile, "data", "profile"),
    ]
    for method, path, *_ in routes:
        assert getattr(client, method)(path, {}, format="json").status_code == 200, path

    for method, path, model, column, name in routes:
        rows = {
            "messages": (_last_message(victim), _last_message(attacker)),
            "session": (victim["session"].pk, attacker["session"].pk),
            "snapshot": (victim["snapshot"].pk, attacker["snapshot"].pk),
            "fact": (victim["fact"].pk, attacker["fact"].pk),
            "profile": (victim["profile"].pk, attacker["profile"].pk),
        }[name]
        table = quote(model._meta.db_table)
        (saved,) = raw_rows(f"SELECT {quote(column)} FROM {table} WHERE id = %s", [rows[1]])[0]
        copy_value(model, column, *rows)

        response = getattr(client, method)(path, {}, format="json")

        # A rollback refuses the snapshot (409, nothing restored); a read answers 500.
        expected = 409 if model is Snapshot else 500
        assert response.status_code == expected, (path, column, response.status_code)
        assert response["Content-Type"] == "application/problem+json"
        assert SECRET.encode() not in response.content
        assert victim_ns.encode() not in response.content
        with connection.cursor() as cursor:  # put the attacker's own value back
            cursor.execute(
                f"UPDATE {table} SET {quote(column)} = %s WHERE id = %s", [saved, rows[1]]
            )


def test_appends_from_a_stale_session_object_are_bound_to_the_seq_they_get(
    session: MemorySession,
) -> None:
    """The one-statement append encrypts for the seq it expects; another process appending in
    between makes it take the general path, and every message still reads at its own seq."""
    other_process = MemorySession.objects.get(pk=session.pk)
    memory.message_add(session=session, message=user("one"))
    memory.message_add(session=other_process, message=user("two"))  # its last_seq is stale
    memory.message_add(session=session, message=user("three"))  # and now this one's is

    assert [m["content"] for m in memory.message_recent(session=session)] == [
        "one",
        "two",
        "three",
    ]
    assert list(
        Message.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)
    ) == [
        1,
        2,
        3,
    ]


# --- upgrading a database written by the previous release ----------------------------------


def _migration_before_row_binding() -> str:
    """The migration before this change's, found by what it does, not by its number."""
    loader = MigrationLoader(connection)
    for (app, _name), migration in loader.disk_migrations.items():
        if app == "ttmemory" and any(
            getattr(op, "name", "") == "CiphertextUpgrade" for op in migration.operations
        ):
            parent = next(dep for dep in migration.dependencies if dep[0] == "ttmemory")
            return str(parent[1])
    raise AssertionError("no migration creates CiphertextUpgrade")


def _rewrite_as_previous_release() -> dict[bytes, tuple[type[Any], str, Any]]:
    """Re-encrypt every stored value exactly as the previous release wrote it: format byte 1,
    associated data ``ttmemory:<table>.<column>``. Returns the old bytes by value."""
    keyring = get_keyring()
    written = {}
    for model, fields in rotation.encrypted_columns():
        table = quote(model._meta.db_table)
        for field in fields:
            binding = [quote(model._meta.get_field(b).column) for b in field.bind]
            for pk, *row_binding, value in raw_rows(
                f"SELECT id, {', '.join([*binding, quote(field.column)])} FROM {table}"
            ):
                if value is None:
                    continue
                plaintext = keyring.decrypt(bytes(value), field.row_aad(row_binding))
                old = (
                    bytes([LEGACY_FORMAT_VERSION])
                    + keyring.encrypt(plaintext, field.associated_data)[1:]
                )
                with connection.cursor() as cursor:
                    cursor.execute(
                        f"UPDATE {table} SET {quote(field.column)} = %s WHERE id = %s", [old, pk]
                    )
                written[old] = (model, field.column, pk)
    return written


def _formats() -> set[int]:
    found = set()
    tables = set(connection.introspection.table_names())
    for model, fields in rotation.encrypted_columns():
        if model._meta.db_table not in tables:
            continue  # a table of a later migration (on the previous release's schema)
        for field in fields:
            table = quote(model._meta.db_table)
            found |= {
                bytes(v)[0]
                for (v,) in raw_rows(f"SELECT {quote(field.column)} FROM {table}")
                if v is not None
            }
    return found


def _everything(namespaces: list[str]) -> dict[str, Any]:
    return {
        "export": [memory.namespace_export(namespace=ns) for ns in namespaces],
        "context": [
            memory.context_window(session=s, max_tokens=10_000)
            for s in MemorySession.objects.order_by("pk")
        ],
        "answers": list(IdempotencyRecord.objects.order_by("pk").values_list("response")),
    }


def _w010() -> list[checks.CheckMessage]:
    messages = checks.run_checks(tags=[checks.Tags.database], databases=["default"])
    return [m for m in messages if m.id == "ttmemory.W010"]


@pytest.mark.django_db(transaction=True)
def test_a_database_of_the_previous_release_is_upgraded_and_every_value_reads_back(
    settings: Any,
) -> None:
    previous = _migration_before_row_binding()
    namespaces = ["user-a", "acme/user-b"]
    for n, ns in enumerate(namespaces):
        tenant(ns, f"secret {n}")
        more = memory.session_open(namespace=ns, key="second")
        memory.message_add_many(session=more, messages=[user(f"{ns} {i}") for i in range(7)])
    before = _everything(namespaces)
    # Written as the previous release wrote it (format 1), then taken back to its schema: the
    # later migrations' reverses read the old values (an upgrade in progress accepts them).
    CiphertextUpgrade.objects.get_or_create(name=ROW_BINDING)
    reset_legacy_format_cache()
    legacy = _rewrite_as_previous_release()
    assert _formats() == {LEGACY_FORMAT_VERSION}
    try:
        call_command("migrate", "ttmemory", previous, verbosity=0)
        assert _formats() == {LEGACY_FORMAT_VERSION}
    finally:
        call_command("migrate", "ttmemory", verbosity=0)
    reset_legacy_format_cache()

    # Migrated, not yet rebound: the old format still reads, and the check says what to run.
    assert CiphertextUpgrade.objects.get(name=ROW_BINDING).finished_at is None
    assert "ttmemory_rebind" in (_w010()[0].hint or "")
    assert _everything(namespaces) == before

    class Interrupted(Exception):
        pass

    out = io.StringIO()
    original = rotation.rotate_model

    def stop_in_messages(*args: Any, **kwargs: Any) -> Any:
        if args[0] is Message:
            kwargs["on_batch"] = lambda count: (_ for _ in ()).throw(Interrupted())
        return original(*args, **kwargs)

    rotation.rotate_model = stop_in_messages  # type: ignore[assignment]
    try:
        with pytest.raises(Interrupted):
            call_command("ttmemory_rebind", "--batch-size", "3", stdout=out)
    finally:
        rotation.rotate_model = original  # type: ignore[assignment]
    assert _formats() == {LEGACY_FORMAT_VERSION, FORMAT_VERSION}  # half done
    assert CiphertextUpgrade.objects.get(name=ROW_BINDING).finished_at is None
    assert _everything(namespaces) == before

    out = io.StringIO()
    call_command("ttmemory_rebind", "--batch-size", "3", stdout=out)

    assert "resumed after id" in out.getvalue()
    assert "100%" in out.getvalue()
    assert _formats() == {FORMAT_VERSION}
    assert _everything(namespaces) == before  # nothing stored before the change is lost
    assert _w010() == []
    # Finished: an old-format value (say, from an old backup) is now refused.
    old, (model, column, pk) = next(
        (blob, where) for blob, where in legacy.items() if where[0] is Message
    )
    table = quote(model._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {quote(column)} = %s WHERE id = %s", [old, pk])
    with pytest.raises(DecryptionError, match="before row binding"):
        Message.objects.get(pk=pk).data  # noqa: B018


def test_a_new_database_needs_no_upgrade_and_refuses_the_old_format(
    session: MemorySession,
) -> None:
    memory.message_add(session=session, message=user("hello"))
    assert not CiphertextUpgrade.objects.exists()
    assert _w010() == []
    keyring = get_keyring()
    field = Message._meta.get_field("data")
    old = (
        bytes([LEGACY_FORMAT_VERSION])
        + keyring.encrypt(b'{"role":"user"}', field.associated_data)[1:]
    )  # type: ignore[union-attr]
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {quote(Message._meta.db_table)} SET data = %s", [old])
    reset_legacy_format_cache()

    with pytest.raises(DecryptionError, match="before row binding"):
        memory.message_recent(session=session)
