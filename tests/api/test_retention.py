"""The data lifecycle over HTTP: expires_at on sessions, the retention policy, legal holds."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from tests.api.conftest import BASE, append, grant, open_session
from tests.conftest import user
from ttmemory.models import AuditEntry, MemorySession
from ttmemory.services.access import api_key_create

DAY = 86400.0


def test_sessions_show_when_they_expire_and_a_write_moves_it_on(
    client_a: APIClient, settings: Any
) -> None:
    opened = open_session(client_a)
    assert opened["expires_at"] is None  # no lifetime configured: kept forever
    settings.TTMEMORY = {**settings.TTMEMORY, "SESSION_TTL": dt.timedelta(days=30)}
    sid = opened["id"]
    MemorySession.objects.filter(pk=sid).update(updated_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    listed = client_a.get(f"{BASE}sessions/").json()["results"][0]
    assert listed["expires_at"] == "2026-01-31T00:00:00Z"
    assert append(client_a, sid, user("hi")).status_code == 201
    detail = client_a.get(f"{BASE}sessions/{sid}/").json()
    assert detail["expires_at"] > "2026-11-01"  # its last write plus 30 days


def test_the_policy_needs_the_permission_and_overrides_the_settings(
    client_a: APIClient, alice: User, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "SESSION_TTL": 90 * DAY}
    url = f"{BASE}namespace/retention/"
    shown = client_a.get(url).json()
    assert shown["effective"]["session_ttl"] == 90 * DAY and shown["policy"] is None
    assert client_a.patch(url, {"session_ttl": 7 * DAY}, format="json").status_code == 403

    grant(alice, "change_retentionpolicy")
    alice = User.objects.get(pk=alice.pk)  # permissions are cached per user object
    client_a.force_authenticate(alice)
    bad = client_a.patch(url, {"session_ttl": -1}, format="json")
    assert bad.status_code == 400 and "session_ttl" in bad.json()["errors"]
    changed = client_a.patch(url, {"session_ttl": 7 * DAY, "ledger_ttl": 0}, format="json")
    assert changed.status_code == 200
    body = changed.json()
    assert body["effective"]["session_ttl"] == 7 * DAY
    assert body["effective"]["ledger_ttl"] is None  # 0: kept forever here
    assert body["policy"] == {"session_ttl": 7 * DAY, "ledger_ttl": 0.0}
    sid = open_session(client_a)["id"]
    session = client_a.get(f"{BASE}sessions/{sid}/").json()
    expires = dt.datetime.fromisoformat(session["expires_at"])
    assert expires - dt.datetime.fromisoformat(session["updated_at"]) == dt.timedelta(days=7)
    entry = AuditEntry.objects.get(action="retention")
    assert entry.actor == "alice" and entry.details["changed"]["session_ttl"] == 7 * DAY

    assert client_a.delete(url).json()["policy"] is None


def test_a_held_namespace_refuses_erase_with_423_naming_the_hold(
    client_a: APIClient, alice: User
) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("keep me"))
    grant(alice, "change_retentionpolicy", "delete_legalhold")
    client_a.force_authenticate(User.objects.get(pk=alice.pk))

    placed = client_a.post(f"{BASE}namespace/holds/", {"reason": "case 17"}, format="json")
    assert placed.status_code == 201
    (hold,) = placed.json()["holds"]
    assert hold["session"] is None and hold["placed_by"] == "alice"

    erase = client_a.post(f"{BASE}namespace/erase/", {"confirm": f"user-{alice.pk}"}, format="json")
    assert erase.status_code == 423
    body = erase.json()
    assert body["hold"] == {"namespace": f"user-{alice.pk}", "session": None, "reason": "case 17"}
    assert "under legal hold" in body["detail"]
    assert client_a.delete(f"{BASE}sessions/{sid}/").status_code == 423
    assert MemorySession.objects.filter(pk=sid).exists()

    assert client_a.delete(f"{BASE}namespace/holds/{hold['id']}/").status_code == 200
    assert client_a.delete(f"{BASE}sessions/{sid}/").status_code == 204


def test_an_api_key_may_place_a_session_hold_but_never_lift_it(db: Any) -> None:
    _, raw = api_key_create(name="bot", namespaces=["tenant-9"], can_erase=True)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    sid = open_session(client)["id"]
    placed = client.post(
        f"{BASE}namespace/holds/", {"reason": "audit", "session": sid}, format="json"
    )
    assert placed.status_code == 201
    (hold,) = placed.json()["holds"]
    assert hold["session"] == sid and hold["placed_by"] == "api-key:bot"
    assert client.post(f"{BASE}sessions/{sid}/clear/").status_code == 423
    assert client.delete(f"{BASE}namespace/holds/{hold['id']}/").status_code == 403
    other = client.post(f"{BASE}namespace/holds/", {"reason": "x", "session": 10**9}, format="json")
    assert other.status_code == 400 and "session" in other.json()["errors"]


def test_callers_without_the_permission_cannot_place_holds(client_b: APIClient) -> None:
    response = client_b.post(f"{BASE}namespace/holds/", {"reason": "x"}, format="json")
    assert response.status_code == 403
