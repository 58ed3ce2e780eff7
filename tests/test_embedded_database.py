"""The embedded server's handle list survives a process killed while writing it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from demo_project.database import _forget_dead_handles


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
