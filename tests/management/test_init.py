"""`python -m ttmemory init` / `ttmemory_init` give a new project working keys and settings."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from typing import Any

from django.core.checks import run_checks
from django.core.management import call_command
from django.test import override_settings

from ttmemory.crypto import Keyring
from ttmemory.longterm.blind import parse_blind_key

EXPORT = re.compile(r'^export (TTMEMORY_[A-Z_]+)="([^"]+)"$', re.M)


def exported(text: str) -> dict[str, str]:
    return dict(EXPORT.findall(text))


def test_init_runs_before_django_is_configured_and_prints_fresh_valid_keys() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}

    runs = [
        subprocess.run(
            [sys.executable, "-m", "ttmemory", "init"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    ]

    first, second = exported(runs[0]), exported(runs[1])
    assert set(first) == {"TTMEMORY_ENCRYPTION_KEYS", "TTMEMORY_BLIND_INDEX_KEY"}
    assert first != second  # fresh each time
    Keyring.from_entries(first["TTMEMORY_ENCRYPTION_KEYS"].split(","))
    parse_blind_key(first["TTMEMORY_BLIND_INDEX_KEY"])
    assert '"ttmemory",' in runs[0]


def test_the_printed_environment_is_all_the_checks_need(monkeypatch: Any) -> None:
    out = io.StringIO()
    call_command("ttmemory_init", "--key-id", "k7", stdout=out)
    keys = exported(out.getvalue())
    monkeypatch.delenv("TTMEMORY_ENCRYPTION_KEYS", raising=False)
    monkeypatch.delenv("TTMEMORY_BLIND_INDEX_KEY", raising=False)

    with override_settings(TTMEMORY={}):
        before = [m.id for m in run_checks(tags=["ttmemory"])]
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    with override_settings(TTMEMORY={}):
        after = [m.id for m in run_checks(tags=["ttmemory"])]

    assert {"ttmemory.E001", "ttmemory.E003"} <= set(before)  # no keys: the checks say so
    assert not [i for i in after if i and i.startswith("ttmemory.E")]
    assert keys["TTMEMORY_ENCRYPTION_KEYS"].startswith("k7:")
