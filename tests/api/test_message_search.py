"""messages/search/: episodic recall over HTTP, bound to the caller's namespace."""

from __future__ import annotations

from rest_framework.test import APIClient

from tests.api.conftest import BASE, append, open_session
from tests.conftest import assistant, user

URL = f"{BASE}messages/search/"


def test_search_finds_past_turns_with_context_in_the_callers_namespace_only(
    client_a: APIClient, client_b: APIClient
) -> None:
    sid = open_session(client_a, key="october")["id"]
    append(
        client_a,
        sid,
        user("Let's talk about the lease."),
        assistant("Sure, which part?"),
        user("Renew the contract before March, Maria Santos signs it."),
        assistant("Noted."),
    )
    other = open_session(client_b, key="october")["id"]
    append(client_b, other, user("My contract ends before March too."))
    body = client_a.post(URL, {"query": "contract March", "k": 3, "window": 1}, "json").json()
    top = body["hits"][0]
    assert (top["session"], top["session_key"], top["seq"]) == (sid, "october", 3)
    assert top["message"]["content"].startswith("Renew the contract")
    assert [c["seq"] for c in top["context"]] == [2, 4]
    assert top["archived"] is False and top["score"] > 0
    assert all(hit["session"] == sid for hit in body["hits"])
    mine = client_b.post(URL, {"query": "Maria Santos lease"}, "json").json()
    assert all(hit["session"] == other for hit in mine["hits"])
    none = client_a.post(URL, {"query": "contract", "sessions": ["nope"]}, "json").json()
    assert none == {"hits": []}


def test_bad_search_requests_get_a_400_naming_the_field(client_a: APIClient) -> None:
    for body, field in [
        ({}, "query"),
        ({"query": "x", "window": 21}, "window"),
        ({"query": "x", "k": 0}, "k"),
    ]:
        response = client_a.post(URL, body, "json")
        assert response.status_code == 400 and field in response.json()["errors"]


def test_search_is_documented(client_a: APIClient) -> None:
    schema = client_a.get(f"{BASE}schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    operation = schema.json()["paths"]["/messages/search/"]["post"]
    assert operation["operationId"] == "messages_search"
    assert "200" in operation["responses"]
