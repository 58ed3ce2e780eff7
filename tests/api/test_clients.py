"""The generated clients (clients/) against a live server on loopback.

TypeScript: ``tsc`` type-checks the client, its example and ``test/live.ts`` (which uses an
error answer as the shared ``Problem`` type), then Node runs them: append, page with the
cursor, recall, rollback and undo, a 404 and a 400 as problem details. ``npm ci`` runs when
``clients/typescript/node_modules`` is missing (it stays there, gitignored). Without Node the
test fails; ``./dev test`` installs it. Python: the generated ``ttmemory_client`` does the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import BASE
from ttmemory.models import Fact, MemorySession, Message
from ttmemory.services.access import api_key_create

CLIENTS = Path(__file__).resolve().parents[2] / "clients"
TYPESCRIPT = CLIENTS / "typescript"
PYTHON_CLIENT = CLIENTS / "python" / "ttmemory-client"
NAMESPACE = "acme/frontend"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api(live_server: Any) -> dict[str, str]:
    _, raw = api_key_create(name="frontend", namespaces=[NAMESPACE], can_rollback=True)
    return {"TTMEMORY_URL": f"{live_server.url}{BASE.rstrip('/')}", "TTMEMORY_API_KEY": raw}


def node_tools() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "Node.js and npm are needed for the TypeScript client (./dev test)"
    return node, npm


def npm_ci(npm: str) -> None:
    if not (TYPESCRIPT / "node_modules" / ".package-lock.json").exists():
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=TYPESCRIPT,
            check=True,
            timeout=600,
        )


def run_node(node: str, script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node, script],
        cwd=TYPESCRIPT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_typescript_client_runs_a_frontends_turns(api: dict[str, str]) -> None:
    node, npm = node_tools()
    npm_ci(npm)
    tsc = TYPESCRIPT / "node_modules" / "typescript" / "bin" / "tsc"
    checked = subprocess.run(
        [node, str(tsc), "-p", "tsconfig.json"],
        cwd=TYPESCRIPT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    run = run_node(node, "dist/test/live.js", api)
    example = run_node(node, "dist/examples/turn.js", api)

    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout.splitlines()[-1])["pages"] == [[4, 5], [2, 3], [1]]
    assert example.returncode == 0, example.stdout + example.stderr
    assert "1 messages" in example.stdout
    session = MemorySession.objects.get(namespace=NAMESPACE, key="ts-client")
    assert list(
        Message.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)
    ) == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    assert Fact.objects.filter(namespace=NAMESPACE).count() == 1


@pytest.fixture
def client_module(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(PYTHON_CLIENT))
    monkeypatch.syspath_prepend(str(CLIENTS / "python"))
    import ttmemory_client

    return ttmemory_client


def test_the_python_client_runs_a_frontends_turns(api: dict[str, str], client_module: Any) -> None:
    from example import turn
    from ttmemory_client import AuthenticatedClient
    from ttmemory_client.api.facts import facts_recall, facts_remember
    from ttmemory_client.api.messages import messages_append, messages_list
    from ttmemory_client.api.sessions import sessions_get, sessions_open, sessions_undo
    from ttmemory_client.api.snapshots import snapshots_create, snapshots_rollback
    from ttmemory_client.models import (
        FactCreateRequest,
        MessageAppendRequest,
        MessageAppendRequestMessagesItem,
        MessagePage,
        Problem,
        RecallRequest,
        RollbackRequest,
        SessionOpenRequest,
        SnapshotCreateRequest,
    )
    from ttmemory_client.types import UNSET

    client = AuthenticatedClient(
        base_url=api["TTMEMORY_URL"], token=api["TTMEMORY_API_KEY"], prefix="Api-Key"
    )

    def add(sid: int, *messages: dict[str, Any]) -> Any:
        items = [MessageAppendRequestMessagesItem.from_dict(m) for m in messages]
        return messages_append.sync(sid, client=client, body=MessageAppendRequest(messages=items))

    opened = sessions_open.sync_detailed(client=client, body=SessionOpenRequest(key="py-client"))
    assert opened.status_code == 201
    sid = opened.parsed.id
    for text in ["one", "two", "three", "four", "five"]:
        add(sid, {"role": "user", "content": text})

    pages, before = [], UNSET
    while True:
        page = messages_list.sync(sid, client=client, limit=2, before=before)
        assert isinstance(page, MessagePage)
        pages.append([message.seq for message in page.results])
        if page.next_ is None:
            break
        before = pages[-1][0]
    assert pages == [[4, 5], [2, 3], [1]]

    fact = facts_remember.sync(client=client, body=FactCreateRequest(text="Lives in Lisbon"))
    recall = facts_recall.sync(client=client, body=RecallRequest(query="Lisbon", k=3))
    assert [hit.fact.id for hit in recall.hits] == [fact.id]

    snapshot = snapshots_create.sync(sid, client=client, body=SnapshotCreateRequest(label="five"))
    add(sid, {"role": "user", "content": "six"})
    rolled = snapshots_rollback.sync(sid, snapshot.id, client=client, body=RollbackRequest())
    assert rolled.removed_seqs == [6] and rolled.session.message_count == 5
    undone = sessions_undo.sync(sid, client=client)
    assert undone.session.message_count == 6

    missing = sessions_get.sync_detailed(987654321, client=client)
    invalid = add(sid, {"role": "robot", "content": "x"})
    assert missing.headers["content-type"] == "application/problem+json"
    assert isinstance(missing.parsed, Problem)
    assert missing.parsed.to_dict() == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": "Not found.",
    }
    assert isinstance(invalid, Problem) and invalid.status == 400
    assert "messages[0].role" in invalid.errors.to_dict()

    window = turn(client, key="example-chat", text="Hi, I am Ada")
    assert [m.to_dict()["content"] for m in window.messages] == ["Hi, I am Ada"]
