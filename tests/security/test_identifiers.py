"""Finding 6: namespaces and session keys refuse invisible, control and bidi characters, so
two identifiers that look the same are the same."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.conftest import BASE
from ttmemory import memory
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession
from ttmemory.services.access import api_key_create

INVISIBLE = {
    "zero width space": "\u200b",
    "right-to-left override": "\u202e",
    "next line (NEL)": "\u0085",
    "left-to-right isolate": "\u2066",
    "byte order mark": "\ufeff",
    "line separator": "\u2028",
    "paragraph separator": "\u2029",
    "no-break space": "\u00a0",
    "soft hyphen": "\u00ad",
    "delete": "\x7f",
}


@pytest.mark.parametrize("char", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_sessions_chat_and_chat_with_an_invisible_character_cannot_coexist(
    db: Any, char: str
) -> None:
    memory.session_open(namespace="user-1", key="chat")

    with pytest.raises(MemoryValidationError) as key_refused:
        memory.session_open(namespace="user-1", key=f"chat{char}x")
    with pytest.raises(MemoryValidationError) as namespace_refused:
        memory.session_open(namespace=f"user{char}1", key="chat")

    assert key_refused.value.field == "key"
    assert namespace_refused.value.field == "namespace"
    assert MemorySession.objects.count() == 1


def test_a_key_not_in_nfc_is_refused(db: Any) -> None:
    decomposed = unicodedata.normalize("NFD", "café")
    memory.session_open(namespace="user-1", key="café")

    with pytest.raises(MemoryValidationError, match="NFC"):
        memory.session_open(namespace="user-1", key=decomposed)
    assert MemorySession.objects.count() == 1


def test_the_api_answers_400_naming_the_key_or_the_header(client_a: APIClient) -> None:
    key = client_a.post(f"{BASE}sessions/", {"key": "chat\u200b"}, format="json")
    _, raw = api_key_create(name="partner", namespaces=["acme/*"])
    keyed = APIClient()
    keyed.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw}")
    header = keyed.get(f"{BASE}sessions/", HTTP_X_MEMORY_NAMESPACE="acme/user\u202e1")

    assert key.status_code == 400 and "key" in key.json()["errors"]
    assert header.status_code == 400 and "X-Memory-Namespace" in header.json()["errors"]
    assert not MemorySession.objects.exists()


def test_ordinary_names_in_any_script_are_accepted(db: Any) -> None:
    for namespace, key in (
        ("acme/user-42", "support chat 7"),
        ("tenant:東京", "会話"),
        ("user-1:a.b_c", "Ünïcödé"),
    ):
        assert memory.session_open(namespace=namespace, key=key).key == key
