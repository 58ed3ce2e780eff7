"""Every endpoint through DRF's test client, as a frontend would use it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.api.conftest import BASE, append, open_session
from tests.conftest import assistant, tool_call, tool_result, user
from ttmemory.models import AuditEntry, LearnJob, Message
from ttmemory.services.facts import facts_touch_recalled


def test_open_session_creates_once_then_returns_the_same(client_a: APIClient) -> None:
    first = client_a.post(f"{BASE}sessions/", {"key": "k", "metadata": {"ch": "web"}}, "json")
    again = client_a.post(f"{BASE}sessions/", {"key": "k"}, "json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert first.json()["metadata"] == {"ch": "web"}
    listed = client_a.get(f"{BASE}sessions/").json()
    assert listed["count"] == 1 and listed["results"][0]["key"] == "k"
    assert client_a.get(f"{BASE}sessions/", {"key": "other"}).json()["count"] == 0


def test_append_one_and_many_then_read_pages_newest_first(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    one = client_a.post(f"{BASE}sessions/{sid}/messages/", {"message": user("m1")}, "json")
    assert one.status_code == 201 and [m["seq"] for m in one.json()["messages"]] == [1]
    many = append(client_a, sid, *[user(f"m{i}") for i in range(2, 8)])
    assert [m["seq"] for m in many.json()["messages"]] == [2, 3, 4, 5, 6, 7]
    assert many.json()["session"]["message_count"] == 7
    assert many.json()["session"] == client_a.get(f"{BASE}sessions/").json()["results"][0]

    page = client_a.get(f"{BASE}sessions/{sid}/messages/", {"limit": 3}).json()
    assert [m["message"]["content"] for m in page["results"]] == ["m5", "m6", "m7"]
    older = client_a.get(page["next"]).json()
    assert [m["seq"] for m in older["results"]] == [2, 3, 4]
    oldest = client_a.get(older["next"]).json()
    assert [m["seq"] for m in oldest["results"]] == [1] and oldest["next"] is None
    single = client_a.get(f"{BASE}sessions/{sid}/messages/4/").json()
    assert single["message"] == user("m4") and single["role"] == "user"
    assert single == older["results"][2]  # a page item and the message itself render alike


def test_context_window_keeps_tool_groups_and_repairs(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    append(
        client_a,
        sid,
        {"role": "system", "content": "be brief"},
        user("weather?"),
        tool_call(["c1"]),
        tool_result("c1", "sunny"),
        user("and tomorrow?"),
        tool_call(["c2"]),
    )
    body = client_a.get(f"{BASE}sessions/{sid}/context/", {"max_tokens": 10_000}).json()
    roles = [m["role"] for m in body["messages"]]
    assert roles[0] == "system" and body["tokens"] > 0
    assert body["messages"][-1]["tool_call_id"] == "c2"  # unanswered call repaired
    stored = client_a.get(f"{BASE}sessions/{sid}/messages/").json()["results"]
    assert stored[-1]["message"]["tool_calls"][0]["id"] == "c2"  # storage is not rewritten
    # What must be kept (the system message, the newest group and its question) does not fit
    # in 1 token: a 400 naming max_tokens and the tokens required, not a window over budget.
    tight = client_a.get(f"{BASE}sessions/{sid}/context/", {"max_tokens": 1})
    assert tight.status_code == 400
    assert "needs at least" in tight.json()["errors"]["max_tokens"][0]
    assert "budget is 1" in tight.json()["errors"]["max_tokens"][0]
    prompt = client_a.post(f"{BASE}sessions/{sid}/prompt/", {"max_tokens": 1}, "json")
    assert prompt.status_code == 400 and "max_tokens" in prompt.json()["errors"]
    fits = client_a.get(f"{BASE}sessions/{sid}/context/", {"max_tokens": 60}).json()
    assert fits["tokens"] <= 60 + 3  # + the 3 tokens of reply priming the endpoint counts
    assert [m["role"] for m in fits["messages"]][:2] == ["system", "user"]


def test_prompt_build_includes_recalled_facts(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("book me a flight to Lisbon"))
    client_a.post(f"{BASE}facts/", {"text": "Prefers a window seat on flights"}, "json")
    body = client_a.post(
        f"{BASE}sessions/{sid}/prompt/", {"query": "seat on flights", "max_tokens": 2000}, "json"
    ).json()
    assert "window seat" in body["system"]
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][-1]["content"] == "book me a flight to Lisbon"
    assert body["total"] <= 2000
    # Why the other sections are empty.
    assert body["empty"] == {
        "profile": "nothing stored",
        "state": "nothing stored",
        "episodes": "not asked",
    }


def test_trim_clear_and_state(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, *[user("word " * 50) for _ in range(5)])
    trimmed = client_a.post(f"{BASE}sessions/{sid}/trim/", {"max_tokens": 120}, "json").json()
    assert trimmed["removed"] >= 3 and trimmed["mode"] == "archive"
    page = client_a.get(f"{BASE}sessions/{sid}/messages/", {"archived": True}).json()
    assert sum(m["archived"] for m in page["results"]) == trimmed["removed"]
    state = client_a.patch(f"{BASE}sessions/{sid}/", {"state": {"order": "A-1"}}, "json")
    assert state.json()["state"] == {"order": "A-1"}
    cleared = client_a.post(f"{BASE}sessions/{sid}/clear/").json()
    assert cleared == {"deleted": 5}
    assert client_a.get(f"{BASE}sessions/{sid}/").json()["message_count"] == 0


def test_delete_session_removes_its_messages(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("x"))
    assert client_a.delete(f"{BASE}sessions/{sid}/").status_code == 204
    assert client_a.get(f"{BASE}sessions/{sid}/").status_code == 404
    assert not Message.objects.filter(session_id=sid).exists()


def test_snapshot_preview_rollback_and_undo(client_a: APIClient, alice: Any) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("hello"), assistant("hi"))
    snap = client_a.post(f"{BASE}sessions/{sid}/snapshots/", {"label": "good"}, "json").json()
    append(client_a, sid, user("my name is Eve"), assistant("a bad answer"))
    assert [s["label"] for s in client_a.get(f"{BASE}sessions/{sid}/snapshots/").json()] == ["good"]

    diff = client_a.get(f"{BASE}sessions/{sid}/snapshots/{snap['id']}/diff/").json()
    assert [m["message"]["content"] for m in diff["remove"]] == ["my name is Eve", "a bad answer"]
    assert diff["restore"] == []

    done = client_a.post(f"{BASE}sessions/{sid}/snapshots/{snap['id']}/rollback/", {}, "json")
    body = done.json()
    assert done.status_code == 200 and body["removed_seqs"] == [3, 4]
    assert body["safety_snapshot"]["kind"] == "safety" and body["undo"].endswith(
        f"/snapshots/{body['safety_snapshot']['id']}/rollback/"
    )
    contents = [
        m["message"]["content"]
        for m in client_a.get(f"{BASE}sessions/{sid}/messages/").json()["results"]
    ]
    assert contents == ["hello", "hi"]

    undone = client_a.post(f"{BASE}sessions/{sid}/undo/")
    assert undone.status_code == 200 and undone.json()["restored_seqs"] == [3, 4]
    contents = [
        m["message"]["content"]
        for m in client_a.get(f"{BASE}sessions/{sid}/messages/").json()["results"]
    ]
    assert contents == ["hello", "hi", "my name is Eve", "a bad answer"]
    actions = list(AuditEntry.objects.order_by("id").values_list("action", "user__username"))
    assert actions == [("rollback", "alice"), ("undo", "alice")]


def test_undo_without_a_rollback_is_a_conflict(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    assert client_a.post(f"{BASE}sessions/{sid}/undo/").status_code == 409


def test_rollback_and_erase_need_their_permissions(client_b: APIClient) -> None:
    sid = open_session(client_b)["id"]
    snap = client_b.post(f"{BASE}sessions/{sid}/snapshots/", {}, "json").json()
    denied = client_b.post(f"{BASE}sessions/{sid}/snapshots/{snap['id']}/rollback/", {}, "json")
    assert denied.status_code == 403 and "rollback" in denied.json()["detail"]
    assert client_b.post(f"{BASE}sessions/{sid}/undo/").status_code == 403
    erase = client_b.post(f"{BASE}namespace/erase/", {"confirm": "x"}, "json")
    assert erase.status_code == 403
    assert client_b.get(f"{BASE}sessions/{sid}/").status_code == 200  # nothing happened


def test_facts_remember_list_recall_correct_forget(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("I prefer window seats"))
    made = client_a.post(
        f"{BASE}facts/",
        {
            "text": "Prefers window seats",
            "kind": "preference",
            "metadata": {"topic": "travel"},
            "source": {"session": sid, "seqs": [1]},
        },
        "json",
    )
    fact = made.json()
    assert made.status_code == 201 and fact["source"] == {"session": sid, "seqs": [1]}
    client_a.post(f"{BASE}facts/", {"text": "Allergic to peanuts", "kind": "health"}, "json")

    assert client_a.get(f"{BASE}facts/").json()["count"] == 2
    kinds = client_a.get(f"{BASE}facts/", {"kind": "health"}).json()["results"]
    assert [f["text"] for f in kinds] == ["Allergic to peanuts"]

    recall = client_a.post(f"{BASE}facts/recall/", {"query": "window seats", "k": 1}, "json")
    hit = recall.json()["hits"][0]
    assert recall.json()["mode"] in ("hybrid", "keyword") and hit["fact"]["id"] == fact["id"]
    assert recall.json()["unpadded"] >= 0 and recall.json()["evidence_similarity"] is not None
    filtered = client_a.post(
        f"{BASE}facts/recall/", {"query": "seats", "metadata": {"topic": "food"}}, "json"
    )
    assert filtered.json()["hits"] == []

    corrected = client_a.post(
        f"{BASE}facts/{fact['id']}/supersede/", {"text": "Prefers aisle seats"}, "json"
    )
    assert corrected.status_code == 201
    old = client_a.get(f"{BASE}facts/{fact['id']}/").json()
    assert old["superseded_by"] == corrected.json()["id"] and old["valid_to"] is not None
    again = client_a.post(f"{BASE}facts/{fact['id']}/supersede/", {"text": "x"}, "json")
    assert again.status_code == 409
    everything = client_a.get(f"{BASE}facts/", {"include_superseded": True}).json()
    assert everything["count"] == 3

    assert client_a.delete(f"{BASE}facts/{corrected.json()['id']}/").status_code == 204
    assert client_a.get(f"{BASE}facts/{corrected.json()['id']}/").status_code == 404


def test_remember_answers_201_when_created_and_200_when_the_fact_existed(
    client_a: APIClient,
) -> None:
    first = client_a.post(f"{BASE}facts/", {"text": "Prefers window seats"}, "json")
    again = client_a.post(
        f"{BASE}facts/", {"text": "  prefers   WINDOW seats ", "kind": "preference"}, "json"
    )
    other = client_a.post(f"{BASE}facts/", {"text": "Allergic to peanuts"}, "json")
    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert again.json()["id"] == first.json()["id"] and again.json()["kind"] == "preference"
    assert client_a.get(f"{BASE}facts/").json()["count"] == 2
    schema = client_a.get(f"{BASE}schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    documented = {
        op["operationId"]: set(op["responses"])
        for path in schema.json()["paths"].values()
        for op in path.values()
    }
    assert {"200", "201"} <= documented["facts_remember"]
    assert {"200", "201"} <= documented["sessions_open"]


def test_learn_answers_202_and_the_job_reports_what_it_did(
    client_a: APIClient, django_capture_on_commit_callbacks: Any
) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("Remember that my daughter is called Mia."))
    with django_capture_on_commit_callbacks(execute=True):
        queued = client_a.post(f"{BASE}facts/learn/", {"session": sid}, "json")
    assert queued.status_code == 202 and queued.json()["status"] == "queued"
    status_url = queued.headers["Location"]
    job = client_a.get(status_url).json()  # no broker in tests: the job ran inline
    assert job["status"] == "done" and job["changes"].get("ADD") == 1
    fact = client_a.get(f"{BASE}facts/{job['fact_ids'][0]}/").json()
    assert "Mia" in fact["text"] and fact["source"]["session"] == sid
    assert LearnJob.objects.get().namespace.startswith("user-")


def test_profile_get_and_merge(client_a: APIClient) -> None:
    assert client_a.get(f"{BASE}profile/").json() == {}
    client_a.patch(f"{BASE}profile/user/", {"data": {"name": "Ada", "city": "Lisbon"}}, "json")
    merged = client_a.patch(f"{BASE}profile/user/", {"data": {"city": None, "lang": "pt"}}, "json")
    assert merged.json() == {"name": "Ada", "lang": "pt"}
    assert client_a.get(f"{BASE}profile/user/").json() == {"name": "Ada", "lang": "pt"}
    assert client_a.get(f"{BASE}profile/").json() == {"user": {"name": "Ada", "lang": "pt"}}
    assert client_a.get(f"{BASE}profile/Bad-Kind/").status_code == 400


def test_namespace_export_erase_and_ledger(client_a: APIClient, alice: Any) -> None:
    assert client_a.get(f"{BASE}namespace/").json() == {"namespace": f"user-{alice.pk}"}
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("keep me"))
    client_a.post(f"{BASE}facts/", {"text": "Likes tea"}, "json")
    export = client_a.get(f"{BASE}namespace/export/")
    assert "attachment" in export.headers["Content-Disposition"]
    data = export.json()
    assert data["sessions"][0]["messages"][0]["message"]["content"] == "keep me"
    assert data["facts"][0]["text"] == "Likes tea"

    wrong = client_a.post(f"{BASE}namespace/erase/", {"confirm": "user-0"}, "json")
    assert wrong.status_code == 400 and "confirm" in wrong.json()["errors"]
    receipt = client_a.post(f"{BASE}namespace/erase/", {"confirm": f"user-{alice.pk}"}, "json")
    assert receipt.status_code == 200 and receipt.json()["counts"]["message"] == 1
    assert client_a.get(f"{BASE}sessions/").json()["count"] == 0
    assert client_a.get(f"{BASE}ledger/").json() == []
    assert list(AuditEntry.objects.values_list("action", flat=True).order_by("id")) == [
        "export",
        "erase",
    ]


def test_openapi_schema_and_docs_page_are_served(client: Any, db: Any) -> None:
    schema = client.get(f"{BASE}schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    doc = schema.json()
    operations = [op for path in doc["paths"].values() for op in path.values()]
    assert len(operations) >= 30
    undocumented = [
        op["operationId"]
        for op in operations
        if not _has_example(op)
        and {code for code in op["responses"] if code < "300"} != {"204"}  # DELETE: no body
    ]
    assert undocumented == []
    docs = client.get(f"{BASE}docs/")
    assert docs.status_code == 200 and b"swagger" in docs.content.lower()


def _has_example(operation: dict[str, Any]) -> bool:
    text = str(operation.get("requestBody", "")) + str(operation.get("responses", ""))
    return "example" in text


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("sessions/", {}, "key"),
        ("sessions/", {"key": " padded "}, "key"),
        ("facts/", {"text": "x", "kind": "Not A Kind"}, "kind"),
        ("facts/", {"text": "x", "metadata": {"bad key!": 1}}, "metadata.bad key!"),
        ("facts/recall/", {"query": "x", "k": 0}, "k"),
        ("facts/learn/", {"session": "abc"}, "session"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    client_a: APIClient, path: str, body: dict[str, Any], field: str
) -> None:
    response = client_a.post(f"{BASE}{path}", body, "json")
    assert response.status_code == 400 and field in response.json()["errors"], response.json()


def test_bad_messages_are_refused_whole_and_name_the_message(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    response = append(client_a, sid, user("fine"), {"role": "robot", "content": "x"})
    assert response.status_code == 400 and "messages[1].role" in response.json()["errors"]
    both = client_a.post(
        f"{BASE}sessions/{sid}/messages/", {"message": user("a"), "messages": []}, "json"
    )
    assert both.status_code == 400 and "messages" in both.json()["errors"]
    one = client_a.post(f"{BASE}sessions/{sid}/messages/", {"message": {"content": "x"}}, "json")
    assert one.status_code == 400 and one.json() == {
        "type": "about:blank",
        "title": "Bad Request",
        "status": 400,
        "detail": "message.role: is required.",
        "errors": {"message.role": ["is required."]},
    }
    assert client_a.get(f"{BASE}sessions/{sid}/").json()["message_count"] == 0


def test_malformed_json_and_oversized_bodies(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    url = f"{BASE}sessions/{sid}/messages/"
    assert client_a.post(url, "{not json", content_type="application/json").status_code == 400
    nan = '{"message": {"role": "user", "content": NaN}}'
    assert client_a.post(url, nan, content_type="application/json").status_code == 400
    surrogate = '{"message": {"role": "user", "content": "\\ud800"}}'
    assert client_a.post(url, surrogate, content_type="application/json").status_code == 400
    with override_settings(TTMEMORY={**_ttm(), "API_MAX_REQUEST_BYTES": 1000}):
        big = client_a.post(url, {"message": user("x" * 2000)}, "json")
        assert big.status_code == 413
    with override_settings(TTMEMORY={**_ttm(), "API_MAX_BATCH": 2}):
        many = append(client_a, sid, user("1"), user("2"), user("3"))
        assert many.status_code == 400 and "at most 2" in many.json()["errors"]["messages"][0]
    assert client_a.get(f"{BASE}sessions/{sid}/").json()["message_count"] == 0


def _ttm() -> dict[str, Any]:
    from django.conf import settings

    return dict(settings.TTMEMORY)


def test_idempotency_key_replays_instead_of_duplicating(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    url = f"{BASE}sessions/{sid}/messages/"
    body = {"messages": [user("pay invoice 7"), assistant("done")]}
    first = client_a.post(url, body, "json", HTTP_IDEMPOTENCY_KEY="req-1")
    retry = client_a.post(url, body, "json", HTTP_IDEMPOTENCY_KEY="req-1")
    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json() and retry.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert client_a.get(f"{BASE}sessions/{sid}/").json()["message_count"] == 2
    reused = client_a.post(url, {"message": user("other")}, "json", HTTP_IDEMPOTENCY_KEY="req-1")
    assert reused.status_code == 422 and "Idempotency-Key" in reused.json()["errors"]
    fresh = client_a.post(url, body, "json", HTTP_IDEMPOTENCY_KEY="req-2")
    assert [m["seq"] for m in fresh.json()["messages"]] == [3, 4]
    failed = client_a.post(url, {"message": {"role": "x"}}, "json", HTTP_IDEMPOTENCY_KEY="req-3")
    assert failed.status_code == 400
    fixed = client_a.post(url, {"message": user("ok")}, "json", HTTP_IDEMPOTENCY_KEY="req-3")
    assert fixed.status_code == 201  # a refused request stores nothing under its key


def test_writes_are_throttled_per_caller_reads_are_not(
    client_a: APIClient, client_b: APIClient
) -> None:
    from django.core.cache import cache

    cache.clear()
    with override_settings(TTMEMORY={**_ttm(), "API_WRITE_RATE": "3/min"}):
        sid = open_session(client_a)["id"]
        codes = [append(client_a, sid, user(str(i))).status_code for i in range(3)]
        assert codes == [201, 201, 429]
        assert client_a.get(f"{BASE}sessions/{sid}/messages/").status_code == 200
        assert open_session(client_b)["key"] == "chat-1"  # another caller has its own budget
    cache.clear()


def test_unauthenticated_requests_are_refused(db: Any) -> None:
    anonymous = APIClient()
    response = anonymous.get(f"{BASE}sessions/")
    assert response.status_code == 401 and response.headers["WWW-Authenticate"] == "Api-Key"


def test_ids_beyond_the_database_range_are_not_found(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]
    huge = 10**20
    for path in [
        f"sessions/{huge}/",
        f"sessions/{sid}/messages/{huge}/",
        f"sessions/{sid}/snapshots/{huge}/",
        f"facts/{huge}/",
    ]:
        assert client_a.get(f"{BASE}{path}").status_code == 404, path
    page = client_a.get(f"{BASE}sessions/{sid}/messages/", {"before": huge})
    assert page.status_code == 400 and "before" in page.json()["errors"]


def test_a_rollback_is_not_applied_when_its_audit_entry_cannot_be_written(
    client_a: APIClient, monkeypatch: Any
) -> None:
    sid = open_session(client_a)["id"]
    append(client_a, sid, user("hello"))
    snap = client_a.post(f"{BASE}sessions/{sid}/snapshots/", {}, "json").json()
    append(client_a, sid, user("bad turn"))

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("audit log unavailable")

    monkeypatch.setattr("ttmemory.api.base.audit_record", broken)
    with pytest.raises(RuntimeError):
        client_a.post(f"{BASE}sessions/{sid}/snapshots/{snap['id']}/rollback/", {}, "json")
    page = client_a.get(f"{BASE}sessions/{sid}/messages/").json()["results"]
    assert [m["message"]["content"] for m in page] == ["hello", "bad turn"]
    assert [s["kind"] for s in client_a.get(f"{BASE}sessions/{sid}/snapshots/").json()] == [
        "manual"
    ]  # no safety snapshot left behind either


def test_the_append_answer_renders_like_the_serializers_with_the_namespace_policy(
    client_a: APIClient,
) -> None:
    import datetime as dt

    from ttmemory.models import RetentionPolicy

    namespace = client_a.get(f"{BASE}namespace/").json()["namespace"]
    RetentionPolicy.objects.create(namespace=namespace, session_ttl=dt.timedelta(hours=2))
    sid = open_session(client_a)["id"]
    added = append(client_a, sid, user("m1"), assistant("a1")).json()

    assert added["session"] == client_a.get(f"{BASE}sessions/").json()["results"][0]
    assert added["session"]["expires_at"] is not None
    for item in added["messages"]:
        assert item == client_a.get(f"{BASE}sessions/{sid}/messages/{item['seq']}/").json()
    assert client_a.get(f"{BASE}sessions/{sid + 1000}/messages/").status_code == 404
    assert (
        client_a.post(
            f"{BASE}sessions/{sid + 1000}/messages/", {"message": user("x")}, "json"
        ).status_code
        == 404
    )


def test_fact_list_shows_recall_counts_without_a_query_per_fact(client_a: APIClient) -> None:
    def listed() -> tuple[list[int], int]:
        with CaptureQueriesContext(connection) as queries:
            page = client_a.get(f"{BASE}facts/").json()["results"]
        return sorted(f["recall_count"] for f in page), len(queries)

    made = [client_a.post(f"{BASE}facts/", {"text": f"fact {i}"}, "json").json() for i in "ab"]
    facts_touch_recalled(counts=[(made[0]["id"], 3)])
    counts, few = listed()
    assert counts == [0, 3]
    made += [client_a.post(f"{BASE}facts/", {"text": f"fact {i}"}, "json").json() for i in "cdef"]
    facts_touch_recalled(counts=[(f["id"], 1) for f in made])
    counts, many = listed()
    assert counts == [1, 1, 1, 1, 1, 4] and many == few


def test_recall_shows_recall_counts_without_a_query_per_hit(client_a: APIClient) -> None:
    def recalled(k: int) -> tuple[list[int], int]:
        with CaptureQueriesContext(connection) as queries:
            hits = client_a.post(
                f"{BASE}facts/recall/", {"query": "violin lessons", "k": k}, "json"
            ).json()["hits"]
        return sorted(h["fact"]["recall_count"] for h in hits), len(queries)

    made = [
        client_a.post(f"{BASE}facts/", {"text": f"violin lessons on day {i}"}, "json").json()
        for i in range(4)
    ]
    facts_touch_recalled(counts=[(made[0]["id"], 5)])
    recalled(4)  # the namespace's statistics counted and kept: the same statements from here
    one, few = recalled(1)
    four, many = recalled(4)
    assert len(one) == 1 and len(four) == 4 and 5 in four
    assert many == few
