"""Every error answer is RFC 9457 problem details (application/problem+json), one shape for
every status and route; anything unknown under the mount is a JSON 404 whatever the method."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings
from rest_framework.test import APIClient

from tests.api.conftest import BASE, open_session

PROBLEM = "application/problem+json"
WITH_CSRF = [*settings.MIDDLEWARE, "django.middleware.csrf.CsrfViewMiddleware"]


def problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM, response.content
    body = dict(response.json())
    assert body["type"] == "about:blank" and body["status"] == status, body
    assert set(body) <= {"type", "title", "status", "detail", "errors"}, body
    assert isinstance(body["title"], str) and isinstance(body["detail"], str), body
    return body


@override_settings(MIDDLEWARE=WITH_CSRF)
@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options"])
def test_an_unknown_path_is_a_json_404_for_every_method(alice: User, method: str) -> None:
    browser = Client(enforce_csrf_checks=True)  # a logged-in browser sending no CSRF token
    browser.force_login(alice)

    body = {} if method == "get" else {"data": "{}", "content_type": "application/json"}
    response = getattr(browser, method)(f"{BASE}no/such/thing/", **body)

    assert problem(response, 404)["detail"] == "Not found."


def test_a_missing_trailing_slash_is_named_in_the_404(client_a: APIClient) -> None:
    body = problem(client_a.post(f"{BASE}sessions", {"key": "x"}, "json"), 404)

    assert "/api/memory/sessions/" in body["detail"]


def test_no_credentials_is_a_401_problem_with_its_challenge(db: Any) -> None:
    response = APIClient().get(f"{BASE}sessions/")

    assert problem(response, 401)["title"] == "Unauthorized"
    assert response["WWW-Authenticate"].startswith("Api-Key")


def test_a_method_the_route_lacks_is_a_405_problem(client_a: APIClient) -> None:
    assert problem(client_a.put(f"{BASE}sessions/", {}, "json"), 405)["title"] == (
        "Method Not Allowed"
    )


def test_a_missing_permission_is_a_403_problem(client_b: APIClient) -> None:
    sid = open_session(client_b)["id"]

    body = problem(client_b.post(f"{BASE}sessions/{sid}/undo/"), 403)

    assert "rollback" in body["detail"]


def test_undo_with_nothing_to_undo_is_a_409_problem(client_a: APIClient) -> None:
    sid = open_session(client_a)["id"]

    body = problem(client_a.post(f"{BASE}sessions/{sid}/undo/"), 409)

    assert body == {
        "type": "about:blank",
        "title": "Conflict",
        "status": 409,
        "detail": "This session has no rollback to undo.",
    }


def test_nested_field_errors_are_flattened_to_the_paths_services_use(
    client_a: APIClient,
) -> None:
    response = client_a.post(
        f"{BASE}facts/", {"text": "x", "source": {"session": "seven", "seqs": [1]}}, "json"
    )

    body = problem(response, 400)

    assert list(body["errors"]) == ["source.session"]
    assert body["detail"].startswith("source.session: ")


def test_a_body_that_is_not_json_is_a_400_problem_without_field_errors(
    client_a: APIClient,
) -> None:
    response = client_a.post(f"{BASE}sessions/", "{nope", content_type="application/json")

    body = problem(response, 400)

    assert "JSON parse error" in body["detail"] and "errors" not in body


def test_the_schema_route_answers_problems_too(db: Any) -> None:
    assert problem(Client().post(f"{BASE}schema/"), 405)["title"] == "Method Not Allowed"
