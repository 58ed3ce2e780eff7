"""Every operation of the OpenAPI document the API serves, fuzzed by schemathesis.

One test per operation, each on fresh data: a user holding the rollback and erase permissions
and a DRF token, a session with messages, snapshots (one a safety snapshot, so undo works), a
fact, a profile and a learning job. Every other case has its ids swapped for the real ones,
so operations also answer on objects that exist. No answer may be a 5xx; every answer
must be documented (status, content type, body, headers). Nothing is excluded: erasing is
fuzzed too (each test has its own data) and succeeds when the confirmation is the namespace.

``TTMEMORY_FUZZ_SEED=<n>`` explores other inputs; the default seed keeps CI reproducible.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
    positive_data_acceptance,
)

from tests.api.conftest import BASE, grant
from ttmemory import services
from ttmemory.services.learnjobs import learn_job_create

MAX_EXAMPLES = 20  # per operation, fuzzing phase; explicit examples and coverage cases come on top
SEED = int(os.environ.get("TTMEMORY_FUZZ_SEED", "20261130"))

# The objects of the running test, which half of its cases aim at.
REAL: dict[str, Any] = {}


def served_schema() -> dict[str, Any]:
    response = Client().get(f"{BASE}schema/", {"format": "json"})
    assert response.status_code == 200, response.content
    return dict(json.loads(response.content))


schema = schemathesis.openapi.from_dict(
    served_schema(),
    config=schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {"max-examples": MAX_EXAMPLES, "no-shrink": True},
            "phases": {"stateful": {"enabled": False}},
            # Hide credentials only: "key" and "max_tokens" are ordinary fields here.
            "output": {
                "sanitization": {
                    "keys-to-sanitize": ["authorization", "cookie", "x-api-key"],
                    "sensitive-markers": ["authorization"],
                }
            },
        }
    ),
)
schema.app = WSGIHandler()


def aim_at_real_objects(case: Any) -> None:
    """Every other case: the ids of the test's objects in the path, and its session or
    namespace in the body where the operation names one (a fact's source, learn, erase)."""
    REAL["cases"] += 1
    if REAL["cases"] % 2:
        return
    if case.path_parameters:
        real = {name: REAL[name] for name in case.path_parameters if name in REAL}
        case.path_parameters = {**case.path_parameters, **real}
    path = case.operation.path
    if path.endswith("/rewind/") and isinstance(case.query, dict) and "to_seq" in case.query:
        case.query = {**case.query, "to_seq": REAL["seq"]}
    if not isinstance(case.body, dict):
        return
    body = copy.deepcopy(case.body)
    if path.endswith("/facts/learn/") and "session" in body:
        body["session"] = REAL["session_id"]
    elif path.endswith("/facts/") and isinstance(body.get("source"), dict):
        body["source"]["session"] = REAL["session_id"]
    elif path.endswith("/namespace/erase/") and "confirm" in body:
        body["confirm"] = REAL["namespace"]
    for point in ("to_seq", "at_seq", "seq"):  # rewind, fork, edit: a live message
        if path.endswith(("/rewind/", "/fork/", "/edit/")) and point in body:
            body[point] = REAL["seq"]
    case.body = body


@pytest.fixture
def memory(db: Any) -> Iterator[dict[str, str]]:
    """The test's objects (into REAL) and the caller's Authorization header."""
    user = User.objects.create_user("fuzz", password="pw-fuzz")
    grant(user, "rollback_memorysession", "erase_namespace")
    namespace = f"user-{user.pk}"
    session = services.session_open(namespace=namespace, key="chat-1")
    services.message_add_many(
        session=session,
        messages=[
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "I live in Lisbon and I'm allergic to peanuts."},
            {"role": "assistant", "content": "Noted."},
        ],
    )
    snapshot = services.snapshot_create(session=session, label="three turns")
    services.message_add_many(
        session=session,
        messages=[
            {"role": "user", "content": "What's the weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Lisbon"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "21°C, sunny"},
        ],
    )
    services.snapshot_rollback_detailed(session=session, snapshot=snapshot, safe=True)
    services.message_add_many(
        session=session, messages=[{"role": "user", "content": "Book a window seat."}]
    )
    session.refresh_from_db()
    fact = services.fact_remember(
        namespace=namespace, text="Allergic to peanuts", kind="fact", source=(session, [2])
    )
    services.profile_update(namespace=namespace, kind="user", data={"city": "Lisbon"})
    job = learn_job_create(session=session)
    REAL.update(
        cases=0,
        namespace=namespace,
        session_id=session.pk,
        seq=session.last_seq,
        snapshot_id=snapshot.pk,
        fact_id=fact.pk,
        job_id=str(job.pk),
        kind="user",
    )
    token = Token.objects.create(user=user)
    yield {"Authorization": f"Token {token.key}"}
    REAL.clear()


@pytest.fixture
def in_test_transaction() -> Iterator[None]:
    """Requests go straight to the WSGI handler inside the test's transaction: keep Django's
    per-request connection cleanup off, as its own test client does."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    deadline=None,
    max_examples=MAX_EXAMPLES,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # the fixture's objects serve every example
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_operation_conforms(case: Any, memory: dict[str, str], in_test_transaction: None):
    aim_at_real_objects(case)
    case.call_and_validate(
        headers=memory,
        excluded_checks=[
            # The document types requests; services check meaning (a chat message's shape, a
            # kind's pattern, the erase confirmation), so a schema-valid body may get a 400.
            positive_data_acceptance,
            # DRF is lenient by design: a number is a valid CharField value, pagination
            # ignores a malformed limit or offset. The check would flag DRF, not ttmemory.
            negative_data_rejection,
        ],
    )
