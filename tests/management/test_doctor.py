"""ttmemory_doctor: what ttmemory runs on here, each part with a hint when it could be better."""

from __future__ import annotations

import io
from typing import Any

from django.core.management import call_command
from django.db import connection

from tests.conftest import user
from ttmemory import memory
from ttmemory.crypto import generate_key


def doctor() -> dict[str, list[str]]:
    """Each part's line and its hint lines, by part."""
    out = io.StringIO()
    call_command("ttmemory_doctor", stdout=out)
    parts: dict[str, list[str]] = {}
    current = ""
    for line in out.getvalue().splitlines():
        if line.startswith(" "):
            parts[current].append(line.strip())
        else:
            current, _, state = line.partition("  ")
            parts[current] = [state.strip()]
    return parts


def test_the_doctor_names_every_part_with_what_is_configured(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "JOBS": "inline"}

    parts = doctor()

    assert list(parts) == [
        "database",
        "vectors",
        "cache",
        "lock",
        "background jobs",
        "embedder",
        "encryption keys",
        "key rotation",
        "blind index key",
    ]
    assert parts["database"][0].startswith(f"default: {connection.vendor} ")
    expected_vectors = "float32 bytes" if connection.vendor == "sqlite" else "pgvector"
    assert parts["vectors"][0].startswith(expected_vectors)
    assert parts["background jobs"][0].startswith("inline, after each commit")
    assert "JOBS='inline'" in parts["background jobs"][0]
    assert parts["embedder"][0].startswith("HashEmbedder, model hash-384-keyed-")
    assert parts["embedder"][1].startswith("-> lexical only")  # and what recalls by meaning
    assert parts["blind index key"] == ["set"]


def test_the_doctor_says_when_a_key_rotation_is_unfinished(db: Any, settings: Any) -> None:
    old = settings.TTMEMORY["ENCRYPTION_KEYS"][0]
    old_id = old.split(":")[0]
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [old]}
    session = memory.session_open(namespace="user-d", key="chat")
    memory.message_add_many(session=session, messages=[user(f"m{i}") for i in range(3)])
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [generate_key("doc2"), old]}

    before = doctor()
    call_command("ttmemory_rotate_keys", stdout=io.StringIO())
    after = doctor()

    assert before["encryption keys"] == [
        f"2 configured, new values under 'doc2', older ones still decrypt: {old_id!r}"
    ]
    assert before["key rotation"][0].startswith("not finished: ")
    assert f"under {old_id!r}" in before["key rotation"][0]
    assert "ttmemory_rotate_keys" in before["key rotation"][1]
    assert after["key rotation"] == ["the newest values are all under 'doc2'"]
