"""The OpenAPI document against its snapshot (clients/openapi.json), the clients against it.

A difference fails. A breaking change (clients/compat.py: a removed operation, parameter,
field or enum value, a renamed operation id, a new required request field or parameter) fails
with the lines to acknowledge in clients/breaking-changes.txt and CHANGELOG.md; any other
change fails asking to regenerate with ``./dev clients``. The document must not depend on the
database: the test runs on PostgreSQL and SQLite against one snapshot.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from clients.compat import (
    CHANGELOG,
    CLIENTS,
    SNAPSHOT,
    acknowledged,
    breaking_changes,
    dump,
    unacknowledged,
)

REGENERATE = "./dev clients"


def served() -> dict[str, Any]:
    response = Client().get(reverse("ttmemory-api:schema"), {"format": "json"})
    assert response.status_code == 200, response.content
    return dict(json.loads(response.content))


def compatibility_report(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Empty when ``new`` is ``old``; else what to do about the difference."""
    if dump(old) == dump(new):
        return ""
    refused = unacknowledged(breaking_changes(old, new))
    if refused:
        lines = "\n".join(f"  {change}" for change in refused)
        return (
            f"Breaking changes to the API against clients/openapi.json:\n{lines}\n"
            "If they are meant: add these lines to clients/breaking-changes.txt, name them in "
            f"CHANGELOG.md with the migration path for clients, then run {REGENERATE}."
        )
    return f"The OpenAPI document changed compatibly: run {REGENERATE} and commit the result."


def test_the_served_document_is_the_snapshot(db: Any) -> None:
    report = compatibility_report(json.loads(SNAPSHOT.read_text(encoding="utf-8")), served())

    assert not report, report


def test_a_removed_field_is_a_breaking_change_until_acknowledged(db: Any) -> None:
    old = served()
    new = copy.deepcopy(old)
    del new["components"]["schemas"]["Session"]["properties"]["metadata"]

    report = compatibility_report(old, new)

    assert "removed field Session.metadata" in report
    assert "breaking-changes.txt" in report


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["paths"].pop("/sessions/{session_id}/undo/"), "removed operation POST"),
        (
            lambda d: d["components"]["schemas"]["RoleEnum"]["enum"].remove("tool"),
            'removed enum value RoleEnum: "tool"',
        ),
        (
            lambda d: d["components"]["schemas"]["SessionOpenRequest"]["required"].append(
                "metadata"
            ),
            "new required field SessionOpenRequest.metadata",
        ),
        (
            lambda d: d["paths"]["/sessions/"]["post"].update(operationId="sessions_create"),
            "renamed operation POST /sessions/: sessions_open -> sessions_create",
        ),
        (
            lambda d: d["paths"]["/sessions/"]["get"]["parameters"][0].update(required=True),
            "new required parameter GET /sessions/ query:",
        ),
    ],
)
def test_each_kind_of_breaking_change_is_found(db: Any, change: Any, expected: str) -> None:
    old = served()
    new = copy.deepcopy(old)
    change(new)

    assert any(line.startswith(expected) for line in breaking_changes(old, new))


def test_additions_are_not_breaking(db: Any) -> None:
    old = served()
    new = copy.deepcopy(old)
    new["paths"]["/sessions/{session_id}/tags/"] = {"post": {"operationId": "sessions_tag"}}
    new["components"]["schemas"]["Session"]["properties"]["branch"] = {"type": "string"}
    new["components"]["schemas"]["SessionOpenRequest"]["properties"]["hint"] = {"type": "string"}

    assert breaking_changes(old, new) == []
    assert "./dev clients" in compatibility_report(old, new)


def test_every_acknowledged_breaking_change_is_in_the_changelog() -> None:
    changelog = CHANGELOG.read_text(encoding="utf-8")

    assert [change for change in acknowledged() if change not in changelog] == []


def test_operation_ids_are_tag_underscore_verb_and_unique(db: Any) -> None:
    operations = [
        operation
        for item in served()["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    ]
    ids = [operation["operationId"] for operation in operations]

    assert len(ids) == len(set(ids))
    for operation in operations:
        (tag,) = operation["tags"]
        assert re.fullmatch(rf"{tag}_[a-z]+(_[a-z]+)*", operation["operationId"]), operation


def test_every_error_answer_is_the_shared_problem(db: Any) -> None:
    document = served()
    answers = [
        (path, method, code, response)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        for code, response in operation["responses"].items()
        if code[0] in "45"
    ]

    assert len(answers) > 100
    for path, method, code, response in answers:
        assert response["content"] == {
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
        }, (path, method, code)


def test_the_checked_in_clients_are_what_the_generators_make_of_the_snapshot() -> None:
    checked = subprocess.run(
        [sys.executable, str(CLIENTS / "regenerate.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_generated_clients_have_fewer_than_80_model_classes() -> None:
    models = CLIENTS / "python" / "ttmemory-client" / "ttmemory_client" / "models"
    python = sum(
        len(re.findall(r"^class ", path.read_text(encoding="utf-8"), re.M))
        for path in models.glob("*.py")
    )
    types = (CLIENTS / "typescript" / "src" / "schema.d.ts").read_text(encoding="utf-8")
    # openapi-typescript writes types, no classes: one entry per component schema.
    typescript_classes = len(re.findall(r"^\s*(export )?class ", types, re.M))

    assert python + typescript_classes < 80, (python, typescript_classes)
