"""Clients opening the same session key at the same moment: one 201, the others 200.

A barrier holds every request after it found no session and before any of them creates it,
so all of them race the create; the test counts that they did. A view that first asks
whether the session exists (and answers 201 when it did not) fails here: every client then
saw "no session" and every one would answer 201.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from rest_framework.test import APIClient

from tests.api.conftest import BASE
from ttmemory.models import MemorySession
from ttmemory.models.session import MemorySessionQuerySet

CLIENTS = 4

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_opens_of_one_key_create_it_once(monkeypatch: Any) -> None:
    user = User.objects.create_user("racer")
    barrier = threading.Barrier(CLIENTS, timeout=20)
    raced: list[int] = []
    original_get = MemorySessionQuerySet.get

    def get_then_wait(self: MemorySessionQuerySet, *args: Any, **kwargs: Any) -> Any:
        try:
            return original_get(self, *args, **kwargs)
        except MemorySession.DoesNotExist:
            if kwargs.get("key") == "shared":
                raced.append(barrier.wait())  # nobody creates until every client missed
            raise

    monkeypatch.setattr(MemorySessionQuerySet, "get", get_then_wait)
    answers: list[tuple[int, int]] = []

    def open_shared() -> None:
        try:
            client = APIClient()
            client.force_authenticate(user)
            response = client.post(f"{BASE}sessions/", {"key": "shared"}, "json")
            answers.append((response.status_code, response.json()["id"]))
        finally:
            connection.close()

    threads = [threading.Thread(target=open_shared) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert len(raced) == CLIENTS  # every client was between "not found" and "create" at once
    assert sorted(code for code, _ in answers) == [200] * (CLIENTS - 1) + [201]
    assert len({session_id for _, session_id in answers}) == 1
    assert MemorySession.objects.filter(key="shared").count() == 1
