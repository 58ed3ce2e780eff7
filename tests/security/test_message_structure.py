"""Finding 8: what is stored is consistent: tool calls only on assistant messages, ids of at
most 255 characters on both sides, results that answer a call, fact sources that exist,
datetimes in a sane range."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.conftest import BASE, append, open_session
from tests.conftest import tool_call, tool_result, user
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import Fact, Message, Profile


def errors(response: Any) -> dict[str, Any]:
    assert response.status_code == 400, response.content[:300]
    return dict(response.json()["errors"])


@pytest.fixture
def sid(client_a: APIClient) -> int:
    return int(open_session(client_a)["id"])


def test_a_user_message_carrying_tool_calls_is_refused(client_a: APIClient, sid: int) -> None:
    forged = {**user("hi"), "tool_calls": tool_call(["call_1"])["tool_calls"]}

    response = append(client_a, sid, forged)

    assert "only assistant" in errors(response)["messages[0].tool_calls"][0]
    assert not Message.objects.exists()


def test_a_tool_call_id_over_255_characters_is_refused_on_the_call_too(
    client_a: APIClient, sid: int
) -> None:
    long_id = "c" * 10_000

    call = append(client_a, sid, user("go"), tool_call([long_id]))
    result = append(client_a, sid, tool_result("r" * 256))

    assert "255" in errors(call)["messages[1].tool_calls[0].id"][0]
    assert "255" in errors(result)["messages[0].tool_call_id"][0]
    assert not Message.objects.exists()


def test_a_tool_result_answering_no_call_of_the_session_is_refused(
    client_a: APIClient, sid: int
) -> None:
    assert append(client_a, sid, user("go"), tool_call(["call_1"])).status_code == 201

    orphan = append(client_a, sid, tool_result("call_404"))
    before_its_call = append(client_a, sid, tool_result("call_2"), tool_call(["call_2"]))
    answered = append(client_a, sid, tool_result("call_1"))
    same_request = append(client_a, sid, tool_call(["call_3"]), tool_result("call_3"))

    assert "answers no tool call" in errors(orphan)["messages[0].tool_call_id"][0]
    assert "answers no tool call" in errors(before_its_call)["messages[0].tool_call_id"][0]
    assert answered.status_code == 201 and same_request.status_code == 201
    assert Message.objects.count() == 5


def test_fact_sources_must_name_existing_messages_of_that_session_and_not_too_many(
    client_a: APIClient, sid: int
) -> None:
    append(client_a, sid, user("I live in Lisbon"))

    missing = client_a.post(
        f"{BASE}facts/",
        {"text": "Lives in Lisbon", "source": {"session": sid, "seqs": [1, 7]}},
        format="json",
    )
    too_many = client_a.post(
        f"{BASE}facts/",
        {"text": "Lives in Lisbon", "source": {"session": sid, "seqs": list(range(1, 100_001))}},
        format="json",
    )
    good = client_a.post(
        f"{BASE}facts/",
        {"text": "Lives in Lisbon", "source": {"session": sid, "seqs": [1]}},
        format="json",
    )

    assert "7" in errors(missing)["source.seqs"][0]
    assert "1000" in errors(too_many)["source.seqs"][0]
    assert good.status_code == 201 and good.json()["source"] == {"session": sid, "seqs": [1]}
    assert Fact.objects.count() == 1


def test_the_service_bounds_source_seqs_for_library_callers(db: Any) -> None:
    session = memory.session_open(namespace="user-3", key="chat")
    memory.message_add(session=session, message=user("hi"))

    with pytest.raises(MemoryValidationError) as refused:
        memory.fact_remember(
            namespace="user-3", text="Says hi", source=(session, list(range(1, 100_001)))
        )

    assert refused.value.field == "source.seqs" and "limit" in refused.value.message
    assert not Fact.objects.exists()


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00"])
def test_expires_at_of_year_one_is_a_400(client_a: APIClient, when: str) -> None:
    fact = client_a.post(f"{BASE}facts/", {"text": "x", "expires_at": when}, format="json")
    profile = client_a.patch(
        f"{BASE}profile/user/", {"data": {"a": 1}, "expires_at": when}, format="json"
    )

    assert "expires_at" in errors(fact)
    assert "expires_at" in errors(profile)
    assert not Fact.objects.exists() and not Profile.objects.exists()


def test_library_callers_get_the_same_datetime_range(db: Any) -> None:
    for when in (dt.datetime(1, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, tzinfo=dt.UTC)):
        with pytest.raises(MemoryValidationError) as refused:
            memory.fact_remember(namespace="user-3", text="x", expires_at=when)
        assert refused.value.field == "expires_at"
    later = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)
    assert memory.fact_remember(namespace="user-3", text="x", expires_at=later).expires_at == later
