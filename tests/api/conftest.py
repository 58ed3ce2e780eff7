"""API fixtures: two users with their own namespaces, and clients logged in as each."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

BASE = "/api/memory/"


def grant(user: User, *codenames: str) -> None:
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="ttmemory", codename__in=codenames)
    )


@pytest.fixture
def alice(db: Any) -> User:
    user = User.objects.create_user("alice", password="pw-alice")
    grant(user, "rollback_memorysession", "erase_namespace")
    return user


@pytest.fixture
def bob(db: Any) -> User:
    return User.objects.create_user("bob", password="pw-bob")


@pytest.fixture
def client_a(alice: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(alice)
    return client


@pytest.fixture
def client_b(bob: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(bob)
    return client


def open_session(client: APIClient, key: str = "chat-1") -> dict[str, Any]:
    response = client.post(f"{BASE}sessions/", {"key": key}, format="json")
    assert response.status_code in (200, 201), response.content
    return dict(response.json())


def append(client: APIClient, session_id: int, *messages: dict[str, Any]) -> Any:
    return client.post(
        f"{BASE}sessions/{session_id}/messages/", {"messages": list(messages)}, format="json"
    )
