"""The embedded server's handle list survives a process killed while writing it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import psutil
import psycopg
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from demo_project.database import (
    _configure_shared_buffers,
    _forget_dead_handles,
    shared_buffers_wanted,
)


def test_an_emptied_handle_list_is_written_again(tmp_path: Path) -> None:
    handles = tmp_path / ".handle_pids.json"
    handles.write_text("")  # what a process killed mid-write leaves behind

    _forget_dead_handles(tmp_path)

    assert json.loads(handles.read_text()) == []


def test_dead_pids_are_dropped_and_live_ones_kept(tmp_path: Path) -> None:
    handles = tmp_path / ".handle_pids.json"
    handles.write_text(json.dumps([os.getpid(), 2**22 + 12345]))

    _forget_dead_handles(tmp_path)

    assert json.loads(handles.read_text()) == [os.getpid()]


GiB = 1024**3


def test_buffers_are_a_quarter_of_memory_within_bounds_or_what_is_asked() -> None:
    assert shared_buffers_wanted(24 * GiB, None) == "6144MB"
    assert shared_buffers_wanted(2 * GiB, "") == "512MB"
    assert shared_buffers_wanted(256 * 1024**2, None) == "128MB"  # never below PostgreSQL's own
    assert shared_buffers_wanted(64 * GiB, None) == "8192MB"
    assert shared_buffers_wanted(24 * GiB, " 2GB ") == "2GB"
    assert shared_buffers_wanted(24 * GiB, "default") is None
    for wrong in ("lots", "2 GB", "0MB", "2gb; DROP TABLE x"):
        with pytest.raises(ImproperlyConfigured, match="TTMEMORY_EMBEDDED_SHARED_BUFFERS"):
            shared_buffers_wanted(24 * GiB, wrong)


@pytest.mark.skipif(
    connection.vendor != "postgresql" or bool(os.environ.get("DATABASE_URL")),
    reason="the embedded server's setting (DATABASE_URL names another server)",
)
def test_the_embedded_server_is_set_to_its_buffers_from_its_next_start(db: Any) -> None:
    def configured() -> str | None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT setting FROM pg_file_settings WHERE name = 'shared_buffers' "
                "AND sourcefile LIKE %s ORDER BY seqno DESC LIMIT 1",
                ["%postgresql.auto.conf"],
            )
            row = cursor.fetchone()
        return row[0] if row else None

    server = connection.settings_dict
    with psycopg.connect(
        dbname=server["NAME"], user=server["USER"], host=server["HOST"], port=server["PORT"],
        autocommit=True,
    ) as raw:  # fmt: skip
        try:
            _configure_shared_buffers(raw, "1GB")
            assert configured() == "1GB"
            _configure_shared_buffers(raw, "default")
            assert configured() is None  # PostgreSQL's own again
        finally:
            _configure_shared_buffers(raw, os.environ.get("TTMEMORY_EMBEDDED_SHARED_BUFFERS"))
    wanted = shared_buffers_wanted(
        psutil.virtual_memory().total, os.environ.get("TTMEMORY_EMBEDDED_SHARED_BUFFERS")
    )
    assert configured() == wanted
