"""No caller can read, change or detect another namespace's objects: every route, 404."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.conftest import BASE, append, grant, open_session
from tests.conftest import assistant, user
from ttmemory import memory
from ttmemory.models import Fact, MemorySession, Message, Snapshot
from ttmemory.services.access import api_key_create, api_key_revoke


@pytest.fixture
def victim(client_b: APIClient) -> dict[str, Any]:
    """Bob's session with messages, a snapshot, a learn job and a fact."""
    session = open_session(client_b, "secret-chat")
    append(client_b, session["id"], user("my PIN is 4321"), assistant("noted"))
    snapshot = client_b.post(f"{BASE}sessions/{session['id']}/snapshots/", {}, "json").json()
    fact = client_b.post(f"{BASE}facts/", {"text": "Bob's PIN is 4321"}, "json").json()
    job = client_b.post(f"{BASE}facts/learn/", {"session": session["id"]}, "json").json()
    return {
        "session": session["id"],
        "snapshot": snapshot["id"],
        "fact": fact["id"],
        "job": job["id"],
    }


def routes(v: dict[str, Any]) -> list[tuple[str, str, dict[str, Any] | None]]:
    s, snap, f = v["session"], v["snapshot"], v["fact"]
    return [
        ("get", f"sessions/{s}/", None),
        ("patch", f"sessions/{s}/", {"state": {"x": 1}}),
        ("delete", f"sessions/{s}/", None),
        ("get", f"sessions/{s}/messages/", None),
        ("post", f"sessions/{s}/messages/", {"message": {"role": "user", "content": "x"}}),
        ("get", f"sessions/{s}/messages/1/", None),
        ("get", f"sessions/{s}/context/?max_tokens=100", None),
        ("post", f"sessions/{s}/prompt/", {"max_tokens": 100}),
        ("post", f"sessions/{s}/trim/", {"max_tokens": 0}),
        ("post", f"sessions/{s}/clear/", None),
        ("post", f"sessions/{s}/undo/", None),
        ("get", f"sessions/{s}/snapshots/", None),
        ("post", f"sessions/{s}/snapshots/", {"label": "x"}),
        ("get", f"sessions/{s}/snapshots/{snap}/", None),
        ("get", f"sessions/{s}/snapshots/{snap}/diff/", None),
        ("post", f"sessions/{s}/snapshots/{snap}/rollback/", {}),
        ("get", f"facts/{f}/", None),
        ("delete", f"facts/{f}/", None),
        ("post", f"facts/{f}/supersede/", {"text": "PIN is 0000"}),
        ("post", "facts/learn/", {"session": s}),
        ("get", f"facts/learn/{v['job']}/", None),
        ("post", "facts/", {"text": "x", "source": {"session": s, "seqs": [1]}}),
    ]


def unchanged(v: dict[str, Any]) -> None:
    session = MemorySession.objects.get(pk=v["session"])
    assert session.message_count == 2 and session.state == {}
    assert [m.data["content"] for m in Message.objects.filter(session=session).order_by("seq")] == [
        "my PIN is 4321",
        "noted",
    ]
    assert Snapshot.objects.filter(session=session).count() == 1
    fact = Fact.objects.get(pk=v["fact"])
    assert fact.superseded_by_id is None and fact.valid_to is None


def test_every_route_answers_404_for_another_users_ids(
    client_a: APIClient, victim: dict[str, Any]
) -> None:
    own = open_session(client_a, "mine")["id"]
    append(client_a, own, user("hello"))
    for method, path, body in routes(victim):
        response = getattr(client_a, method)(f"{BASE}{path}", body, format="json")
        # A session named in a body is a field: 400 "no such session"; in a path, 404.
        body_field = {"facts/": "source.session", "facts/learn/": "session"}.get(path)
        response_json = response.json()
        if body_field:
            assert response.status_code == 400, (method, path, response.content)
            assert response_json["errors"] == {body_field: ["no such session"]}
        else:
            assert response.status_code == 404, (method, path, response.content)
            assert response_json == {
                "type": "about:blank",
                "title": "Not Found",
                "status": 404,
                "detail": "Not found.",
            }
        assert b"4321" not in response.content and b"secret-chat" not in response.content
    unchanged(victim)


def test_a_404_for_another_namespace_equals_a_404_for_nothing(
    client_a: APIClient, victim: dict[str, Any]
) -> None:
    """Same status and body whether the id exists elsewhere or nowhere: existence leaks nothing."""
    missing = {
        "session": 10**9,
        "snapshot": 10**9,
        "fact": 10**9,
        "job": victim["job"][:-4] + "0000",
    }
    for (method, path, body), (_, other_path, _) in zip(
        routes(victim), routes(missing), strict=True
    ):
        theirs = getattr(client_a, method)(f"{BASE}{path}", body, format="json")
        nothing = getattr(client_a, method)(f"{BASE}{other_path}", body, format="json")
        assert (theirs.status_code, theirs.content) == (nothing.status_code, nothing.content), path
    unchanged(victim)


def test_lists_recall_export_and_ledger_show_only_the_callers_namespace(
    client_a: APIClient, victim: dict[str, Any]
) -> None:
    client_a.post(f"{BASE}facts/", {"text": "Alice's PIN is 1111"}, "json")
    assert client_a.get(f"{BASE}sessions/").json()["count"] == 0
    assert client_a.get(f"{BASE}sessions/", {"key": "secret-chat"}).json()["count"] == 0
    facts = client_a.get(f"{BASE}facts/", {"include_superseded": True}).json()["results"]
    assert [f["text"] for f in facts] == ["Alice's PIN is 1111"]
    hits = client_a.post(f"{BASE}facts/recall/", {"query": "PIN 4321", "k": 10}, "json").json()
    assert all("4321" not in h["fact"]["text"] for h in hits["hits"])
    assert b"4321" not in client_a.get(f"{BASE}namespace/export/").content
    assert client_a.get(f"{BASE}profile/").json() == {}
    # Opening the same key gives the caller its own, new session.
    mine = client_a.post(f"{BASE}sessions/", {"key": "secret-chat"}, "json")
    assert mine.status_code == 201 and mine.json()["id"] != victim["session"]
    # Erasing one's own namespace leaves the other untouched.
    erase = client_a.post(
        f"{BASE}namespace/erase/",
        {"confirm": client_a.get(f"{BASE}namespace/").json()["namespace"]},
        "json",
    )
    assert erase.status_code == 200
    unchanged(victim)


def test_api_keys_act_only_on_granted_namespaces(db: Any, victim: dict[str, Any]) -> None:
    memory.session_open(namespace="acme/user-1", key="c")
    memory.session_open(namespace="acme/user-2", key="c")
    _, raw = api_key_create(name="acme-backend", namespaces=["acme/*"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")

    needs_header = client.get(f"{BASE}sessions/")
    assert needs_header.status_code == 400 and "X-Memory-Namespace" in needs_header.json()["errors"]
    one = client.get(f"{BASE}sessions/", HTTP_X_MEMORY_NAMESPACE="acme/user-1").json()
    assert one["count"] == 1
    sid = one["results"][0]["id"]
    other = client.get(f"{BASE}sessions/{sid}/", HTTP_X_MEMORY_NAMESPACE="acme/user-2")
    assert other.status_code == 404
    outside = client.get(f"{BASE}sessions/", HTTP_X_MEMORY_NAMESPACE="user-1")
    assert outside.status_code == 403
    bob_session = client.get(
        f"{BASE}sessions/{victim['session']}/", HTTP_X_MEMORY_NAMESPACE="acme/user-1"
    )
    assert bob_session.status_code == 404
    rollback = client.post(f"{BASE}sessions/{sid}/undo/", HTTP_X_MEMORY_NAMESPACE="acme/user-1")
    assert rollback.status_code == 403  # keys need can_rollback


def test_single_grant_keys_need_no_header_and_revoked_keys_are_refused(db: Any) -> None:
    key, raw = api_key_create(name="bot", namespaces=["tenant-9"], can_rollback=True)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    assert client.get(f"{BASE}namespace/").json() == {"namespace": "tenant-9"}
    sid = open_session(client)["id"]
    append(client, sid, user("a"))
    snap = client.post(f"{BASE}sessions/{sid}/snapshots/", {}, "json").json()
    append(client, sid, user("b"))
    done = client.post(f"{BASE}sessions/{sid}/snapshots/{snap['id']}/rollback/", {}, "json")
    assert done.status_code == 200
    from ttmemory.models import AuditEntry

    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.user, entry.namespace) == ("api-key:bot", None, "tenant-9")

    api_key_revoke(key=key)
    assert client.get(f"{BASE}namespace/").status_code == 401
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw[:-2]}xx")
    assert wrong.get(f"{BASE}namespace/").status_code == 401


def test_token_authentication_works_for_users(db: Any, alice: Any) -> None:
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=alice)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get(f"{BASE}namespace/").json() == {"namespace": f"user-{alice.pk}"}


def test_a_custom_resolver_decides_the_namespace(client_a: APIClient, settings: Any) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "API_NAMESPACE_RESOLVER": "tests.api.test_isolation.tenant_resolver",
    }
    assert client_a.get(f"{BASE}namespace/").json() == {"namespace": "tenant-x/alice"}
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "API_NAMESPACE_RESOLVER": "tests.api.test_isolation.no_namespace",
    }
    assert client_a.get(f"{BASE}namespace/").status_code == 403


def tenant_resolver(request: Any) -> str:
    return f"tenant-x/{request.user.username}"


def no_namespace(request: Any) -> None:
    return None


def test_granting_perms_lets_bob_roll_back_his_own_session(
    client_b: APIClient, bob: Any, victim: dict[str, Any]
) -> None:
    grant(bob, "rollback_memorysession")
    from django.contrib.auth.models import User

    client = APIClient()
    client.force_authenticate(User.objects.get(pk=bob.pk))  # fresh permission cache
    url = f"{BASE}sessions/{victim['session']}/snapshots/{victim['snapshot']}/rollback/"
    assert client.post(url, {}, "json").status_code == 200
