"""A checked DRF token is trusted for API_AUTH_CACHE_SECONDS: revoking, deleting or changing it
in this process takes effect at the next request; a change this process is not told about
(another process's, or a QuerySet.update) within the documented bound. An API key is refused
at once whoever changed it (tests/security/test_revocation.py)."""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth.models import Permission, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.api.conftest import BASE, append, grant, open_session
from ttmemory.models import ApiKey
from ttmemory.services.access import api_key_create, api_key_revoke


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
    assert [namespace_status(client) for _ in range(3)] == [200, 200, 200]  # trusted now
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
    assert client.get(f"{BASE}namespace/").status_code == 200  # the token is trusted now
    allowed = client.post(f"{BASE}sessions/{sid}/undo/")
    assert allowed.status_code != 403
    # Removing a permission sends no signal to the user; the next request reads it anyway.
    alice.user_permissions.remove(Permission.objects.get(codename="rollback_memorysession"))
    assert client.post(f"{BASE}sessions/{sid}/undo/").status_code == 403


def test_a_change_this_process_is_not_told_about_applies_within_the_bound(
    db: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "API_AUTH_CACHE_SECONDS": 1}
    key, client = key_client()
    alice = User.objects.create_user("alice")
    _, token_user = token_client(alice)
    assert namespace_status(client) == namespace_status(token_user) == 200
    # As another process would revoke them: no signal reaches this one.
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=key.created_at)
    User.objects.filter(pk=alice.pk).update(is_active=False)
    # An API key's row is read on every request (issue 34): refused at once. A DRF token's
    # user stays trusted within the bound.
    assert namespace_status(client) == 401
    assert namespace_status(token_user) == 200
    time.sleep(1.2)  # past API_AUTH_CACHE_SECONDS
    assert namespace_status(token_user) == 401


def test_with_the_cache_off_every_request_reads_the_credential(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "API_AUTH_CACHE_SECONDS": 0}
    key, client = key_client()
    alice = User.objects.create_user("alice")
    _, token_user = token_client(alice)
    assert namespace_status(client) == namespace_status(token_user) == 200
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=key.created_at)
    User.objects.filter(pk=alice.pk).update(is_active=False)
    assert namespace_status(client) == namespace_status(token_user) == 401
