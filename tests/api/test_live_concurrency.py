"""Eight HTTP clients appending to one session on a live server: nothing lost, nothing twice.

Each client sends its turns in order, half of them through a DRF token and half through an API
key for the same namespace. Some requests carry an ``Idempotency-Key`` and are sent twice:
again after the answer (a retry after a lost reply), or twice at the same moment (a client
racing its own retry). Afterwards the session holds every distinct request's messages once,
with seqs exactly 1..N and each client's turns in the order it sent them.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from tests.api.conftest import BASE
from ttmemory import services
from ttmemory.models import Message
from ttmemory.services.access import api_key_create

CLIENTS = 8
REQUESTS = 25  # per client
TIMEOUT = 30.0  # seconds for one request
DEADLINE = 120.0  # seconds for the whole run, which takes under 10 on loopback

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Reply:
    status: int
    body: dict[str, Any]
    replayed: bool


@dataclass
class Plan:
    """One request of one client: its body, and how it is retried."""

    client: int
    turn: int
    messages: list[dict[str, Any]]
    key: str | None = None
    retry: str = ""  # "", "after" (sent again after the answer) or "racing" (twice at once)
    replies: list[Reply] = field(default_factory=list)


def plan_client(client: int) -> list[Plan]:
    plans = []
    for turn in range(REQUESTS):
        text = f"client {client} turn {turn}"
        messages: list[dict[str, Any]]
        if turn % 7 == 3:  # a batch: a tool call and its result land together
            messages = [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{client}_{turn}",
                            "type": "function",
                            "function": {"name": "lookup", "arguments": json.dumps({"q": text})},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": f"call_{client}_{turn}", "content": text},
            ]
        else:
            messages = [{"role": "user", "content": text}]
        plan = Plan(client, turn, messages)
        if turn % 6 == 1:
            plan.key, plan.retry = f"c{client}-t{turn}", "after"
        elif turn % 6 == 4:
            plan.key, plan.retry = f"c{client}-t{turn}", "racing"
        plans.append(plan)
    return plans


def post(url: str, headers: dict[str, str], plan: Plan) -> Reply:
    """POST the plan's messages; a 503 (lock busy, nothing written) is retried."""
    body = json.dumps({"messages": plan.messages}).encode()
    request_headers = {**headers, "Content-Type": "application/json"}
    if plan.key is not None:
        request_headers["Idempotency-Key"] = plan.key
    for _ in range(20):
        request = urllib.request.Request(url, data=body, headers=request_headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                replayed = response.headers.get("Idempotent-Replayed") == "true"
                return Reply(response.status, json.loads(response.read()), replayed)
        except urllib.error.HTTPError as error:
            if error.code != 503:
                return Reply(error.code, json.loads(error.read() or b"{}"), False)
            time.sleep(0.05)
    raise AssertionError(f"still 503 after 20 tries: {plan}")


def post_twice_at_once(url: str, headers: dict[str, str], plan: Plan) -> list[Reply]:
    barrier = threading.Barrier(2)
    replies: list[Reply] = []

    def send() -> None:
        barrier.wait(TIMEOUT)
        replies.append(post(url, headers, plan))

    twins = [threading.Thread(target=send) for _ in range(2)]
    for twin in twins:
        twin.start()
    for twin in twins:
        twin.join(TIMEOUT * 2)
    return replies


def run_client(url: str, headers: dict[str, str], plans: list[Plan], errors: list[str]) -> None:
    try:
        for plan in plans:
            if plan.retry == "racing":
                plan.replies.extend(post_twice_at_once(url, headers, plan))
            else:
                plan.replies.append(post(url, headers, plan))
                if plan.retry == "after":
                    plan.replies.append(post(url, headers, plan))
    except Exception as exc:  # reported by the test, which runs in another thread
        errors.append(f"client {plans[0].client}: {exc!r}")


def test_parallel_appends_lose_and_repeat_nothing(live_server: Any):
    user = User.objects.create_user("load", password="pw-load")
    namespace = f"user-{user.pk}"
    token = Token.objects.create(user=user)
    _, raw_key = api_key_create(name="load", namespaces=[namespace])
    session = services.session_open(namespace=namespace, key="shared")
    url = f"{live_server.url}{BASE}sessions/{session.pk}/messages/"
    auth = [{"Authorization": f"Token {token.key}"}, {"Authorization": f"Api-Key {raw_key}"}]

    plans = [plan_client(client) for client in range(CLIENTS)]
    errors: list[str] = []
    threads = [
        threading.Thread(target=run_client, args=(url, auth[client % 2], plans[client], errors))
        for client in range(CLIENTS)
    ]
    deadline = time.monotonic() + DEADLINE
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), "a client is stuck"
    assert not errors, errors

    every = [plan for client_plans in plans for plan in client_plans]
    for plan in every:
        assert [reply.status for reply in plan.replies] == [201] * len(plan.replies), plan
        seqs = {tuple(m["seq"] for m in reply.body["messages"]) for reply in plan.replies}
        assert len(seqs) == 1, f"a retry was answered with other seqs: {plan}"
        if plan.retry:
            assert sorted(reply.replayed for reply in plan.replies) == [False, True], plan
        else:
            assert not plan.replies[0].replayed

    expected = sum(len(plan.messages) for plan in every)
    stored = list(Message.objects.filter(session=session).order_by("seq"))
    assert [m.seq for m in stored] == list(range(1, expected + 1))
    session.refresh_from_db()
    assert (session.last_seq, session.message_count) == (expected, expected)

    # Each client's messages appear once, in the order it sent them, at the seqs it was told.
    sent = {
        (plan.client, plan.turn, index): plan.replies[0].body["messages"][index]["seq"]
        for plan in every
        for index in range(len(plan.messages))
    }
    found: dict[tuple[int, int, int], int] = {}
    for message in stored:
        client, turn = _origin(message.data)
        index = 0 if message.role != "tool" else 1
        assert (client, turn, index) not in found, f"stored twice: {message.data}"
        found[(client, turn, index)] = message.seq
    assert found == sent
    by_seq = [origin for origin, _ in sorted(found.items(), key=lambda item: item[1])]
    for client in range(CLIENTS):
        turns = [(turn, index) for c, turn, index in by_seq if c == client]
        assert turns == sorted(turns), f"client {client}'s turns are out of order"

    # The API reads back the same history.
    page = urllib.request.Request(f"{url}?limit=1000", headers=auth[0])
    with urllib.request.urlopen(page, timeout=TIMEOUT) as response:
        results = json.loads(response.read())["results"]
    assert [(row["seq"], row["message"]) for row in results] == [(m.seq, m.data) for m in stored]


def _origin(data: dict[str, Any]) -> tuple[int, int]:
    if data["role"] == "assistant":  # its tool call's id: "call_<client>_<turn>"
        _, client, turn = data["tool_calls"][0]["id"].split("_")
    else:  # "client <client> turn <turn>"
        _, client, _, turn = data["content"].split()
    return int(client), int(turn)
