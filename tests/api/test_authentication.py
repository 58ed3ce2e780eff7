"""Credentials are read on every request (issue 34, revocation at once): an API key revoked,
expired, changed or deleted, a DRF token deleted and a user deactivated are refused by the next
request, also when nothing tells this process (a ``QuerySet.update()``, another process's
change: tests/security/test_revocation.py and test_revocation_processes.py)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.api.conftest import BASE, append, grant, open_session
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import ApiKey
from ttmemory.services.access import api_key_check, api_key_create, api_key_revoke, token_check


def key_client(**grants: Any) -> tuple[ApiKey, APIClient]:
    key, raw = api_key_create(name="bot", namespaces=["tenant-9"], **grants)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    return key, client


def token_client(user: User) -> tuple[Token, APIClient]:
    token = Token.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return token, client


def namespace_status(client: APIClient) -> int:
    return int(client.get(f"{BASE}namespace/").status_code)


def test_a_revoked_key_is_refused_at_its_next_request(db: Any) -> None:
    key, client = key_client()
    assert [namespace_status(client) for _ in range(3)] == [200, 200, 200]
    api_key_revoke(key=key)
    assert namespace_status(client) == 401


def test_a_key_changed_or_deleted_is_read_again_at_its_next_request(db: Any) -> None:
    key, client = key_client(can_rollback=True)
    sid = open_session(client)["id"]
    append(client, sid, {"role": "user", "content": "a"})
    assert client.post(f"{BASE}sessions/{sid}/undo/").status_code != 403
    key.can_rollback = False  # as the admin's change form saves it
    key.save()
    assert client.post(f"{BASE}sessions/{sid}/undo/").status_code == 403
    key.namespaces = ["tenant-10"]
    key.save()
    assert client.get(f"{BASE}namespace/").json() == {"namespace": "tenant-10"}
    refused = client.get(f"{BASE}namespace/", HTTP_X_MEMORY_NAMESPACE="tenant-9")
    assert refused.status_code == 403  # tenant-9 no longer granted
    key.delete()
    assert namespace_status(client) == 401


def test_a_key_expires_at_its_expiry_and_a_naive_expiry_is_refused(db: Any) -> None:
    soon = timezone.now() + datetime.timedelta(hours=1)
    key, client = key_client(expires_at=soon)
    assert namespace_status(client) == 200
    assert ApiKey.objects.active().filter(pk=key.pk).exists()
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now())  # expired by SQL
    assert namespace_status(client) == 401
    assert not ApiKey.objects.active().filter(pk=key.pk).exists()
    with pytest.raises(MemoryValidationError) as refused:
        api_key_create(name="x", namespaces=["tenant-9"], expires_at=datetime.datetime(2030, 1, 1))
    assert refused.value.field == "expires_at"


def test_a_deleted_token_or_deactivated_user_is_refused_at_the_next_request(db: Any) -> None:
    alice = User.objects.create_user("alice")
    token, client = token_client(alice)
    assert [namespace_status(client) for _ in range(3)] == [200, 200, 200]
    token.delete()
    assert namespace_status(client) == 401

    token, client = token_client(alice)
    assert namespace_status(client) == 200
    alice.is_active = False
    alice.save()
    assert namespace_status(client) == 401


def test_every_request_gets_its_own_user_so_a_removed_permission_applies_at_once(
    db: Any,
) -> None:
    alice = User.objects.create_user("alice")
    grant(alice, "rollback_memorysession")
    _, client = token_client(alice)
    sid = open_session(client)["id"]
    append(client, sid, {"role": "user", "content": "a"})
    assert client.get(f"{BASE}namespace/").status_code == 200
    allowed = client.post(f"{BASE}sessions/{sid}/undo/")
    assert allowed.status_code != 403
    # Removing a permission sends no signal to the user; the next request reads it anyway.
    alice.user_permissions.remove(Permission.objects.get(codename="rollback_memorysession"))
    assert client.post(f"{BASE}sessions/{sid}/undo/").status_code == 403


def test_a_change_nobody_tells_this_process_about_applies_at_the_next_request(
    db: Any, settings: Any
) -> None:
    # The old cache's setting is still accepted, and changes nothing.
    settings.TTMEMORY = {**settings.TTMEMORY, "API_AUTH_CACHE_SECONDS": 60}
    key, client = key_client()
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    _, alice_client = token_client(alice)
    bob_token, bob_client = token_client(bob)
    clients = (client, alice_client, bob_client)
    assert [namespace_status(c) for c in clients] == [200, 200, 200]
    # As another process, or an operator in SQL, would: no signal reaches this process.
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    User.objects.filter(pk=alice.pk).update(is_active=False)
    Token.objects.filter(pk=bob_token.pk).delete()
    assert [namespace_status(c) for c in clients] == [401, 401, 401]


def test_one_statement_reads_a_credential(db: Any) -> None:
    """The per-request cost: one statement for a key or a token (the key's last_used_at is
    written at most once a minute), compiled once per connection (bench/auth_cost.py)."""
    _, raw = api_key_create(name="bot", namespaces=["tenant-9"])
    token = Token.objects.create(user=User.objects.create_user("alice"))
    assert api_key_check(raw_key=raw) is not None  # compiles, and refreshes last_used_at
    assert token_check(key=token.key) is not None
    with CaptureQueriesContext(connection) as queries:
        key = api_key_check(raw_key=raw)
        found = token_check(key=token.key)
    assert key is not None and found is not None
    assert len(queries) == 2, [q["sql"] for q in queries]
    user, read = found
    assert (read.key, read.user_id, read.created) == (token.key, token.user_id, token.created)
    assert read.user is user and user.username == "alice"
    assert token_check(key="") is None and token_check(key="nope") is None
