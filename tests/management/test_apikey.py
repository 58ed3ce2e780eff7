"""ttmemory_apikey: a key for the REST API in one command, printed once."""

from __future__ import annotations

import datetime
import io
import re
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from ttmemory.models import ApiKey


def test_the_printed_key_authenticates_for_its_namespace(db: Any) -> None:
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "ttmemory_apikey", "--name", "bot", "--namespace", "user-9", stdout=out, stderr=err
    )

    (raw,) = re.findall(r'^export TTMEMORY_API_KEY="(ttm_[\w-]+)"$', out.getvalue(), re.M)
    assert "shown once" in err.getvalue() and raw not in err.getvalue()
    key = ApiKey.objects.get(name="bot")
    assert key.namespaces == ["user-9"] and raw not in str(ApiKey.objects.values().get())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    created = client.post("/api/memory/facts/", {"text": "Ada likes tea"}, format="json")
    assert created.status_code == 201
    assert client.get("/api/memory/facts/").json()["results"][0]["text"] == "Ada likes tea"


def test_a_bad_grant_is_a_command_error_and_creates_nothing(db: Any) -> None:
    with pytest.raises(CommandError, match="namespaces"):
        call_command(
            "ttmemory_apikey", "--name", "bot", "--namespace", "user-1*", stdout=io.StringIO()
        )
    assert not ApiKey.objects.exists()


def test_a_key_can_expire_and_a_lifetime_must_be_positive(db: Any) -> None:
    call_command(
        "ttmemory_apikey",
        *("--name", "bot", "--namespace", "user-9", "--expires-in-days", "2"),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    key = ApiKey.objects.get(name="bot")
    assert key.expires_at is not None and key.is_active
    left = key.expires_at - timezone.now()
    assert datetime.timedelta(days=1.99) < left <= datetime.timedelta(days=2)
    with pytest.raises(CommandError, match="positive"):
        call_command(
            "ttmemory_apikey",
            *("--name", "other", "--namespace", "user-9", "--expires-in-days", "0"),
            stdout=io.StringIO(),
        )
    assert ApiKey.objects.count() == 1
