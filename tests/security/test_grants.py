"""Finding 3: an API key's prefix grant ends at a separator; `user-1*` cannot reach `user-10`."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import Tags, run_checks
from rest_framework.test import APIClient

from tests.api.conftest import BASE
from tests.conftest import user
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import ApiKey
from ttmemory.services.access import api_key_create

NS_HEADER = "HTTP_X_MEMORY_NAMESPACE"


def key_client(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    return client


@pytest.fixture
def victims(db: Any) -> None:
    """``user-10`` and ``user-12`` (the default resolver's names for users 10 and 12) each
    hold a private message."""
    for namespace in ("user-10", "user-12"):
        session = memory.session_open(namespace=namespace, key="chat")
        memory.message_add(session=session, message=user(f"secret of {namespace}"))


@pytest.mark.parametrize("grant", ["user-1*", "acme*", "*", "user-1/../*", "a/ /*"])
def test_a_prefix_grant_that_does_not_end_at_a_separator_is_refused(db: Any, grant: str) -> None:
    with pytest.raises(MemoryValidationError) as refused:
        api_key_create(name="partner", namespaces=["user-2", grant])

    assert refused.value.field == "namespaces[1]"
    assert not ApiKey.objects.exists()


def database_checks() -> list[Any]:
    """What `check --database default` reports (the checks that query the database)."""
    return list(run_checks(tags=[Tags.database], databases=["default"]))


def test_a_stored_legacy_grant_user_1_star_reaches_neither_user_10_nor_user_12(
    victims: None,
) -> None:
    # A key stored before separators were required (written as the old code allowed).
    key, raw = api_key_create(name="partner", namespaces=["user-1:*"])
    ApiKey.objects.filter(pk=key.pk).update(namespaces=["user-1*"])
    client = key_client(raw)

    listing = client.get(f"{BASE}sessions/", **{NS_HEADER: "user-10"})
    export = client.get(f"{BASE}namespace/export/", **{NS_HEADER: "user-12"})

    assert listing.status_code == 403 and "secret" not in listing.content.decode()
    assert export.status_code == 403 and "secret" not in export.content.decode()


def test_the_system_check_lists_stored_grants_that_do_not_end_at_a_separator(db: Any) -> None:
    key, _ = api_key_create(name="partner", namespaces=["user-1:*"])
    assert [
        m
        for m in run_checks(tags=[Tags.database], databases=["default"])
        if m.id == "ttmemory.W020"
    ] == []
    ApiKey.objects.filter(pk=key.pk).update(namespaces=["user-1*", "acme/*"])

    found = [
        m
        for m in run_checks(tags=[Tags.database], databases=["default"])
        if m.id == "ttmemory.W020"
    ]

    assert len(found) == 1
    assert "'user-1*'" in found[0].msg and "acme/*" not in found[0].msg


@pytest.mark.parametrize("grant", ["user-1:*", "user-1/*", "user-1-*", "user-1.*", "user-1_*"])
def test_a_separator_grant_reaches_what_is_under_it_and_nothing_else(
    victims: None, grant: str
) -> None:
    separator = grant[-2]
    inside = f"user-1{separator}chat"
    memory.session_open(namespace=inside, key="c")
    _, raw = api_key_create(name="partner", namespaces=[grant])
    client = key_client(raw)

    assert client.get(f"{BASE}sessions/", **{NS_HEADER: inside}).json()["count"] == 1
    assert client.get(f"{BASE}sessions/", **{NS_HEADER: "user-10"}).status_code == 403
    assert client.get(f"{BASE}sessions/", **{NS_HEADER: "user-1"}).status_code == 403


@pytest.mark.parametrize("namespace", ["acme/../user-3", "acme/./x", "acme//x", "acme/", "acme/x*"])
def test_a_namespace_with_dot_segments_or_empty_segments_is_a_400(db: Any, namespace: str) -> None:
    memory.session_open(namespace="user-3", key="c")
    _, raw = api_key_create(name="partner", namespaces=["acme/*"])

    response = key_client(raw).get(f"{BASE}sessions/", **{NS_HEADER: namespace})

    assert response.status_code == 400
    assert "X-Memory-Namespace" in response.json()["errors"]


def test_grants_refuses_a_path_that_climbs_out_of_the_prefix(db: Any) -> None:
    key, _ = api_key_create(name="partner", namespaces=["user-1/*"])

    assert key.grants("user-1/a")
    assert not key.grants("user-1/../user-3")
    assert not key.grants("user-1/\u200b")
