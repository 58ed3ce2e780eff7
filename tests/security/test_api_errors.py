"""Finding 5: what used to be a 500 HTML page is a JSON 4xx naming the field, a JSON 413, or a
JSON 503 with Retry-After."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.api.conftest import BASE, open_session
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message
from ttmemory.validation import MAX_JSON_DEPTH


@pytest.fixture
def client(client_a: APIClient) -> APIClient:
    client_a.raise_request_exception = False  # a server error must show as the user sees it
    return client_a


def post(client: APIClient, path: str, body: str, method: str = "post") -> Any:
    return getattr(client, method)(f"{BASE}{path}", data=body, content_type="application/json")


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def field_error(response: Any, prefix: str) -> str:
    assert response["Content-Type"] == "application/problem+json", response.content[:200]
    fields = [name for name in response.json()["errors"] if name.startswith(prefix)]
    assert fields, response.json()
    return fields[0]


def test_a_body_nested_900_deep_is_a_400_naming_the_field(client: APIClient) -> None:
    response = post(client, "sessions/", '{"key": "x", "metadata": {"a": ' + nested(900) + "}}")

    assert response.status_code == 400
    assert field_error(response, "metadata") == "metadata.a[0]"
    assert not MemorySession.objects.exists()


def test_state_and_profile_nested_400_deep_are_400s_naming_the_field(client: APIClient) -> None:
    session = open_session(client)

    state = post(
        client, f"sessions/{session['id']}/", '{"state": {"a": ' + nested(400) + "}}", "patch"
    )
    profile = post(client, "profile/user/", '{"data": {"a": ' + nested(400) + "}}", "patch")

    assert state.status_code == 400 and field_error(state, "state") == "state.a[0]"
    assert profile.status_code == 400 and field_error(profile, "data") == "data.a[0]"


def test_a_message_nested_600_deep_is_a_400_naming_the_message(client: APIClient) -> None:
    session = open_session(client)
    body = '{"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": '
    response = post(client, f"sessions/{session['id']}/messages/", body + nested(600) + "}]}")

    assert response.status_code == 400
    assert field_error(response, "messages") == "messages[1].content"
    assert not Message.objects.exists()


def test_exactly_the_depth_limit_is_accepted_and_one_more_is_refused(client: APIClient) -> None:
    # The body's own object is one level: metadata {...} two, then the nested arrays.
    ok = post(
        client, "sessions/", '{"key": "a", "metadata": {"a": ' + nested(MAX_JSON_DEPTH - 2) + "}}"
    )
    too_deep = post(
        client, "sessions/", '{"key": "b", "metadata": {"a": ' + nested(MAX_JSON_DEPTH - 1) + "}}"
    )

    assert ok.status_code == 201
    assert too_deep.status_code == 400 and field_error(too_deep, "metadata")


@pytest.mark.parametrize(("value", "message"), [("-1e999", "out of range"), ('"a\\u0000b"', "NUL")])
def test_session_metadata_with_infinity_or_nul_is_a_400_naming_the_field(
    client: APIClient, value: str, message: str
) -> None:
    response = post(client, "sessions/", '{"key": "x", "metadata": {"tags": [1, ' + value + "]}}")

    assert response.status_code == 400
    assert message in response.json()["errors"]["metadata.tags[1]"][0]
    assert not MemorySession.objects.exists()


def test_session_open_checks_metadata_for_library_callers_too(db: Any) -> None:
    deep: Any = []
    for _ in range(400):
        deep = [deep]

    for metadata, field in (
        ({"a": float("-inf")}, "metadata.a"),
        ({"a": {"b": "\x00"}}, "metadata.a.b"),
        ({"a": deep}, "metadata.a"),
        ({"a": {1, 2}}, "metadata.a"),
    ):
        with pytest.raises(MemoryValidationError) as refused:
            memory.session_open(namespace="user-5", key="chat", metadata=metadata)
        assert refused.value.field.startswith(field)
    assert not MemorySession.objects.exists()


def test_a_body_over_djangos_upload_limit_but_under_the_apis_is_accepted(
    client: APIClient, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"key": "big", "metadata": {"note": "x" * 5000}})

    response = post(client, "sessions/", body)

    assert response.status_code == 201, response.content[:200]


@pytest.mark.parametrize("size", [5000, 5 * 1024 * 1024])
def test_every_body_over_the_api_limit_is_a_json_413(
    client: APIClient, settings: Any, size: int
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "API_MAX_REQUEST_BYTES": 4000}
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000  # Django's own, smaller limit must not answer
    session = open_session(client)
    body = json.dumps({"messages": [{"role": "user", "content": "x" * size}]})

    response = post(client, f"sessions/{session['id']}/messages/", body)

    assert response.status_code == 413
    assert response["Content-Type"] == "application/problem+json"
    assert "4000 bytes" in response.json()["detail"]


@pytest.fixture
def database_down(transactional_db: Any) -> Iterator[None]:
    """The database becomes unreachable (its address points nowhere) until the test ends."""
    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "sqlite":
        connection.settings_dict["NAME"] = "/nonexistent/dir/db.sqlite3"
    else:
        connection.settings_dict["HOST"] = "/nonexistent/socket/dir"
        connection.settings_dict["PORT"] = "1"
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


def test_a_lost_database_is_a_json_503_with_retry_after(
    client: APIClient, database_down: None
) -> None:
    response = client.get(f"{BASE}sessions/")

    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert int(response["Retry-After"]) > 0
    assert "database" in response.json()["detail"]


def test_the_openapi_document_lists_the_new_answers(client: APIClient) -> None:
    schema = client.get(f"{BASE}schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    paths = schema.json()["paths"]
    listing = paths["/sessions/"]
    assert "503" in listing["get"]["responses"]
    assert {"400", "413", "503"} <= set(listing["post"]["responses"])
