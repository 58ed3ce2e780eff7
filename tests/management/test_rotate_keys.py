"""ttmemory_rotate_keys: every encrypted value ends under the new key, resumably."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from tests.conftest import raw_rows, user
from ttmemory import memory
from ttmemory.crypto import generate_key, key_id_of
from ttmemory.models import MemorySession, Message
from ttmemory.services import rotation


def key_ids(model: type[Any], column: str) -> list[str]:
    table = connection.ops.quote_name(model._meta.db_table)
    return [
        key_id_of(bytes(v)) for (v,) in raw_rows(f"SELECT {column} FROM {table}") if v is not None
    ]


def test_rotation_re_encrypts_every_column_and_data_still_reads(db: Any, settings: Any) -> None:
    old = settings.TTMEMORY["ENCRYPTION_KEYS"][0]
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [old]}
    sessions = []
    for n in range(3):
        session = memory.session_open(namespace=f"user-{n}", key="chat")
        memory.message_add_many(session=session, messages=[user(f"s{n} m{i}") for i in range(7)])
        session.summary = f"summary {n}"
        session.save()
        sessions.append(session)
    new = generate_key("rot2")
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [new, old]}

    out = io.StringIO()
    call_command("ttmemory_rotate_keys", "--batch-size", "4", stdout=out)

    assert set(key_ids(Message, "data")) == {"rot2"}
    assert set(key_ids(MemorySession, "summary")) == {"rot2"}
    # 21 messages + 3 summaries + 3 session states
    assert "done: 27 values re-encrypted" in out.getvalue()
    assert "100%" in out.getvalue()
    # The old key can now go.
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [new]}
    assert [m["content"] for m in memory.message_recent(session=sessions[1])] == [
        f"s1 m{i}" for i in range(7)
    ]


def test_an_interrupted_rotation_resumes_where_it_stopped(db: Any, settings: Any) -> None:
    old = settings.TTMEMORY["ENCRYPTION_KEYS"][0]
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [old]}
    session = memory.session_open(namespace="user-r", key="chat")
    memory.message_add_many(session=session, messages=[user(f"m{i}") for i in range(10)])
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": [generate_key("rot3"), old]}

    class Interrupted(Exception):
        pass

    def stop_after_first_batch(count: int) -> None:
        raise Interrupted

    fields = [Message._meta.get_field("data")]
    with pytest.raises(Interrupted):
        rotation.rotate_model(Message, fields, batch_size=4, on_batch=stop_after_first_batch)  # type: ignore[list-item]
    assert sorted(key_ids(Message, "data")).count("rot3") == 4

    stats = rotation.rotate_model(Message, fields, batch_size=4)  # type: ignore[list-item]

    assert (stats.rotated, stats.current) == (6, 4)
    assert set(key_ids(Message, "data")) == {"rot3"}
