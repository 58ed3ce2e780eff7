"""The API works in a project whose REST_FRAMEWORK and SPECTACULAR_SETTINGS say nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

ROOT = Path(__file__).resolve().parents[2]
PLAIN_PROJECT = {"REST_FRAMEWORK": {}, "SPECTACULAR_SETTINGS": {}}


@pytest.fixture
def plain_project() -> Any:
    with override_settings(**PLAIN_PROJECT):
        yield


def test_a_drf_token_authenticates_without_project_settings(
    db: Any, plain_project: None, django_user_model: Any
) -> None:
    user = django_user_model.objects.create_user("ada", password="x")
    token = Token.objects.create(user=user)

    answer = Client().get("/api/memory/sessions/", HTTP_AUTHORIZATION=f"Token {token.key}")

    assert answer.status_code == 200
    assert answer.json()["results"] == []


def test_the_schema_and_docs_pages_work_and_serve_swagger_locally(
    db: Any, plain_project: None
) -> None:
    schema = Client().get("/api/memory/schema/?format=json")
    docs = Client().get("/api/memory/docs/")

    assert schema.status_code == 200
    document = schema.json()
    assert document["info"]["title"] == "ttmemory API"
    assert document["servers"][0]["url"] == "/api/memory"
    assert "/sessions/" in document["paths"]
    assert docs.status_code == 200
    page = docs.content.decode()
    assert "<title>ttmemory API</title>" in page
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn.jsdelivr.net" not in page


def test_the_docs_checks_name_the_missing_apps(settings: Any) -> None:
    settings.INSTALLED_APPS = [a for a in settings.INSTALLED_APPS if a != "drf_spectacular_sidecar"]

    ids = [message.id for message in run_checks(tags=["ttmemory"])]

    assert "ttmemory.W003" in ids


def test_drf_spectacular_deploy_check_passes_without_project_settings(tmp_path: Path) -> None:
    """``check --deploy`` generates the project's schema with the project's DEFAULT_SCHEMA_CLASS
    (DRF's own in a fresh project); the API's schema and docs views are left out of it instead
    of failing it (drf_spectacular.E001). A subprocess: DRF's schema descriptor keeps the
    settings it was imported with."""
    (tmp_path / "plain_settings.py").write_text(
        "from tests.settings import *\nREST_FRAMEWORK = {}\nSPECTACULAR_SETTINGS = {}\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "plain_settings"}
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{ROOT}"
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    done = subprocess.run(
        [sys.executable, "-m", "django", "check", "--deploy"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert "drf_spectacular" not in done.stderr, done.stderr
    assert "security.W" in done.stderr  # the deploy checks ran
