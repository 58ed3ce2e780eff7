"""Namespace tools in the admin: counts, JSON export download, erase behind the typed name."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from tests.admin.conftest import BAD_TEXT, NAMESPACE, VIEW_ALL, Conversation, MakeClient, page
from ttmemory import memory
from ttmemory.models import AuditEntry, Fact, MemorySession, Message

TOOLS = "/admin/ttmemory/memorysession/namespace/"
EXPORT = TOOLS + "export/"
ERASE = TOOLS + "erase/"


def test_tools_page_counts_what_a_namespace_holds(
    conversation: Conversation, admin_client: Client
) -> None:
    body = page(admin_client.get(TOOLS, {"namespace": NAMESPACE}))
    counts = body.split('id="namespace-counts"')[1].split("</dl>")[0]
    assert ">1</a>" in counts and "9 (0 trimmed)" in counts and ">2</a> (2 current)" in counts
    assert "Download JSON export" in body and f"Erase {NAMESPACE}" in body
    assert "Namespace tools" in page(admin_client.get("/admin/ttmemory/"))
    assert TOOLS in page(admin_client.get("/admin/ttmemory/memorysession/"))


def test_export_downloads_json_and_is_recorded(
    conversation: Conversation, staff_client: MakeClient
) -> None:
    client = staff_client(*VIEW_ALL, "export_namespace", username="eve")
    response = client.post(EXPORT, {"namespace": NAMESPACE, "reason": "subject access request"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"].startswith('attachment; filename="ttmemory-user-42-')
    data = json.loads(response.content)
    assert data["namespace"] == NAMESPACE
    messages = data["sessions"][0]["messages"]
    assert [m["seq"] for m in messages] == list(range(1, 10))
    assert messages[-1]["message"]["content"] == BAD_TEXT
    assert len(data["facts"]) == 2

    entry = AuditEntry.objects.get(action="export")
    assert (entry.actor, entry.namespace, entry.reason) == (
        "eve",
        NAMESPACE,
        "subject access request",
    )
    assert entry.details == {
        "sessions": 1,
        "messages": 9,
        "snapshots": 1,
        "facts": 2,
        "profiles": 0,
    }


def test_export_needs_a_reason_a_post_and_the_permission(
    conversation: Conversation, staff_client: MakeClient
) -> None:
    exporter = staff_client(*VIEW_ALL, "export_namespace")
    response = exporter.post(EXPORT, {"namespace": NAMESPACE, "reason": ""}, follow=True)
    assert "Not exported" in page(response)
    assert exporter.get(EXPORT, {"namespace": NAMESPACE}).status_code == 405

    viewer = staff_client(*VIEW_ALL)
    assert "Download JSON export" not in page(viewer.get(TOOLS, {"namespace": NAMESPACE}))
    assert viewer.post(EXPORT, {"namespace": NAMESPACE, "reason": "x"}).status_code == 403
    assert not AuditEntry.objects.exists()


def test_erase_refuses_a_mistyped_namespace(
    conversation: Conversation, admin_client: Client
) -> None:
    body = page(admin_client.get(ERASE, {"namespace": NAMESPACE}))
    assert "Type the namespace to confirm" in body and "cannot be undone" in body
    response = admin_client.post(
        ERASE, {"namespace": NAMESPACE, "confirm": "user-4", "reason": "request 1"}
    )
    assert response.status_code == 200 and "This is not the namespace" in page(response)
    response = admin_client.post(
        ERASE, {"namespace": NAMESPACE, "confirm": f"{NAMESPACE} ", "reason": "request 1"}
    )
    assert "This is not the namespace" in page(response)
    assert MemorySession.objects.filter(namespace=NAMESPACE).exists()
    assert not AuditEntry.objects.exists()


def test_erase_with_the_typed_namespace_erases_it_and_is_recorded(
    conversation: Conversation, admin_client: Client
) -> None:
    memory.session_open(namespace="user-7", key="kept")
    response = admin_client.post(
        ERASE, {"namespace": NAMESPACE, "confirm": NAMESPACE, "reason": "erasure request 12"}
    )
    assert response.status_code == 302
    assert not MemorySession.objects.filter(namespace=NAMESPACE).exists()
    assert not Message.objects.filter(namespace=NAMESPACE).exists()
    assert not Fact.objects.filter(namespace=NAMESPACE).exists()
    assert MemorySession.objects.filter(namespace="user-7").exists()
    entry = AuditEntry.objects.get(action="erase")
    assert entry.reason == "erasure request 12" and entry.namespace == NAMESPACE
    assert entry.details["counts"]["message"] == 9 and entry.details["counts"]["fact"] == 2
    assert "Erased namespace user-42" in page(admin_client.get(response["Location"]))


def test_erase_needs_the_permission(conversation: Conversation, staff_client: MakeClient) -> None:
    client = staff_client(*VIEW_ALL, "export_namespace")
    assert "Erase user-42" not in page(client.get(TOOLS, {"namespace": NAMESPACE}))
    assert client.get(ERASE, {"namespace": NAMESPACE}).status_code == 403
    form = {"namespace": NAMESPACE, "confirm": NAMESPACE, "reason": "x"}
    assert client.post(ERASE, form).status_code == 403
    assert MemorySession.objects.filter(namespace=NAMESPACE).exists()


def test_search_finds_messages_across_sessions_masked_like_transcripts(
    conversation: Conversation, support_client: Client, settings: Any
) -> None:
    other = memory.session_open(namespace=NAMESPACE, key="older-chat")
    memory.message_add(session=other, message={"role": "user", "content": "Renew my gym pass."})
    stranger = memory.session_open(namespace="user-7", key="chat")
    memory.message_add(session=stranger, message={"role": "user", "content": "Gym pass too."})
    body = page(support_client.get(TOOLS, {"namespace": NAMESPACE, "q": "gym pass"}))
    hits = body.split('id="search-hits"')[1].split("</table>")[0]
    assert "older-chat" in hits and "user-7" not in hits and "Gym pass too" not in hits
    assert "Renew my gym pass" not in hits and "\u2022\u2022\u2022 18 characters" in hits
    settings.TTMEMORY = {**settings.TTMEMORY, "ADMIN_MASK_CONTENT": False}
    body = page(support_client.get(TOOLS, {"namespace": NAMESPACE, "q": "gym pass"}))
    assert "Renew my gym pass." in body.split('id="search-hits"')[1]
    none = page(support_client.get(TOOLS, {"namespace": NAMESPACE, "q": "zeppelin"}))
    assert "No message matches." in none
