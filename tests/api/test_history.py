"""Rewind, fork, edit and branches over HTTP, as a frontend would use them."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.conftest import BASE, append, open_session
from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory.models import AuditEntry, MemorySession


def contents(client: APIClient, sid: int) -> list[Any]:
    page = client.get(f"{BASE}sessions/{sid}/messages/").json()["results"]
    return [m["message"]["content"] for m in page]


def test_preview_rewind_and_undo(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("hello"), assistant("hi"), user("book it"), assistant("Paris!"))

    preview = client_a.get(f"{BASE}sessions/{sid}/rewind/", {"to_seq": 2})
    assert preview.status_code == 200
    assert [m["seq"] for m in preview.json()["remove"]] == [3, 4]
    assert contents(client_a, sid) == ["hello", "hi", "book it", "Paris!"]

    done = client_a.post(
        f"{BASE}sessions/{sid}/rewind/", {"to_seq": 2, "reason": "ticket 9: wrong city"}, "json"
    )
    body = done.json()
    assert done.status_code == 200, body
    assert (body["removed_seqs"], body["restored_seqs"]) == ([3, 4], [])
    assert body["session"]["message_count"] == 2
    assert body["safety_snapshot"]["label"] == "before rewind to #2: ticket 9: wrong city"
    assert contents(client_a, sid) == ["hello", "hi"]
    entry = AuditEntry.objects.get(action="rewind")
    assert (entry.reason, entry.details["to_seq"], entry.details["removed"]) == (
        "ticket 9: wrong city",
        2,
        2,
    )

    undone = client_a.post(body["undo"], {}, "json")
    assert undone.status_code == 200 and undone.json()["restored_seqs"] == [3, 4]
    assert contents(client_a, sid) == ["hello", "hi", "book it", "Paris!"]


@pytest.mark.parametrize("to_seq", [3, 9])
def test_a_point_that_is_not_a_live_message_or_splits_a_group_is_a_conflict(
    client_a: APIClient, to_seq: int
) -> None:
    sid = open_session(client_a)["id"]
    append(
        client_a,
        sid,
        user("weather?"),
        tool_call(["c1", "c2"]),
        tool_result("c1"),
        tool_result("c2"),
        assistant("sunny"),
    )
    for method in ("get", "post"):
        call = getattr(client_a, method)
        answer = call(f"{BASE}sessions/{sid}/rewind/", {"to_seq": to_seq}, **_fmt(method))
        assert answer.status_code == 409, answer.content
        assert answer.json()["group"] == ([2, 4] if to_seq == 3 else None)
    assert client_a.post(f"{BASE}sessions/{sid}/fork/", {"at_seq": to_seq}, "json").status_code == (
        409
    )
    assert len(contents(client_a, sid)) == 5
    assert not AuditEntry.objects.exists()


def _fmt(method: str) -> dict[str, Any]:
    return {"format": "json"} if method == "post" else {}


def test_fork_edit_and_branches(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("hello"), assistant("hi"), user("book Paris"), assistant("done"))

    fork = client_a.post(f"{BASE}sessions/{sid}/fork/", {"at_seq": 2, "key": "retry"}, "json")
    assert fork.status_code == 201, fork.content
    forked = fork.json()
    assert (forked["key"], forked["parent"], forked["forked_at_seq"]) == ("retry", sid, 2)
    assert contents(client_a, forked["id"]) == ["hello", "hi"]

    edit = client_a.post(
        f"{BASE}sessions/{sid}/edit/", {"seq": 3, "message": user("book Lisbon")}, "json"
    )
    assert edit.status_code == 201, edit.content
    branch = edit.json()
    assert contents(client_a, branch["id"]) == ["hello", "hi", "book Lisbon"]
    assert contents(client_a, sid) == ["hello", "hi", "book Paris", "done"]

    listed = client_a.get(f"{BASE}sessions/{sid}/branches/").json()
    assert [b["id"] for b in listed] == [forked["id"], branch["id"]]
    assert client_a.get(f"{BASE}sessions/{forked['id']}/branches/").json() == []
    actions = list(AuditEntry.objects.order_by("id").values_list("action", "details"))
    assert [a for a, _ in actions] == ["fork", "fork"]
    assert actions[1][1]["edited_seq"] == 3

    taken = client_a.post(f"{BASE}sessions/{sid}/fork/", {"key": "retry"}, "json")
    assert taken.status_code == 400 and "key" in taken.json()["errors"]


def test_retried_rewind_and_fork_with_an_idempotency_key_are_done_once(
    client_a: APIClient,
) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("a"), user("b"), user("c"))
    headers = {"HTTP_IDEMPOTENCY_KEY": "rewind-1"}

    first = client_a.post(f"{BASE}sessions/{sid}/rewind/", {"to_seq": 2}, "json", **headers)
    append(client_a, sid, user("d"))
    again = client_a.post(f"{BASE}sessions/{sid}/rewind/", {"to_seq": 2}, "json", **headers)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert contents(client_a, sid) == ["a", "b", "d"]  # the retry removed nothing

    made = [
        client_a.post(
            f"{BASE}sessions/{sid}/fork/", {}, "json", HTTP_IDEMPOTENCY_KEY="fork-1"
        ).json()["id"]
        for _ in range(2)
    ]
    assert made[0] == made[1]
    assert MemorySession.objects.filter(parent_id=sid).count() == 1


def test_rewind_fork_and_edit_need_the_rollback_permission(client_b: APIClient) -> None:
    sid = open_session(client_b)["id"]
    append(client_b, sid, user("a"), user("b"))

    assert client_b.get(f"{BASE}sessions/{sid}/rewind/", {"to_seq": 1}).status_code == 200
    assert client_b.get(f"{BASE}sessions/{sid}/branches/").status_code == 200
    for route, body in [
        ("rewind", {"to_seq": 1}),
        ("fork", {}),
        ("edit", {"seq": 2, "message": user("x")}),
    ]:
        denied = client_b.post(f"{BASE}sessions/{sid}/{route}/", body, "json")
        assert denied.status_code == 403, route
    assert contents(client_b, sid) == ["a", "b"]
    assert MemorySession.objects.count() == 1


def test_another_namespaces_session_is_not_found(client_a: APIClient, client_b: APIClient) -> None:
    theirs = open_session(client_b)["id"]
    append(client_b, theirs, user("secret"))
    assert client_a.get(f"{BASE}sessions/{theirs}/rewind/", {"to_seq": 1}).status_code == 404
    assert client_a.post(f"{BASE}sessions/{theirs}/rewind/", {"to_seq": 1}, "json").status_code == (
        404
    )
    assert client_a.post(f"{BASE}sessions/{theirs}/fork/", {}, "json").status_code == 404
    assert client_a.get(f"{BASE}sessions/{theirs}/branches/").status_code == 404
    assert contents(client_b, theirs) == ["secret"]
