"""Start-up behaviour a deployer sees: missing keys, the demo's local key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from demo_project.demokeys import local_encryption_keys
from ttmemory.crypto import parse_key

ROOT = Path(__file__).resolve().parent.parent


def test_production_without_an_encryption_key_fails_its_checks_not_its_import(
    tmp_path: Path,
) -> None:
    settings = tmp_path / "prod_settings.py"
    settings.write_text(
        "DEBUG = False\nSECRET_KEY = 'x'\nINSTALLED_APPS = ['django.contrib.contenttypes', "
        "'django.contrib.auth', 'ttmemory']\nDATABASES = {}\nTTMEMORY = {}\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TTMEMORY_ENCRYPTION_KEYS"}
    env.update(DJANGO_SETTINGS_MODULE="prod_settings", PYTHONPATH=f"{tmp_path}:{ROOT}")

    def run(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", f"import django; django.setup(); {code}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    # ready() raises nothing a system check reports; the check (run by runserver, migrate and
    # check --deploy) stops the deployment with the id and the fix.
    assert run("pass").returncode == 0
    checked = run("from django.core.management import call_command; call_command('check')")
    assert checked.returncode != 0
    assert "SystemCheckError" in checked.stderr and "ttmemory.E001" in checked.stderr
    assert "ENCRYPTION_KEYS" in checked.stderr
    # Code that runs anyway (no checks) fails loudly at the first encryption, never silently.
    used = run("from ttmemory.crypto import get_keyring; get_keyring().encrypt(b'x', b'a')")
    assert used.returncode != 0
    assert "ImproperlyConfigured" in used.stderr and "ENCRYPTION_KEYS" in used.stderr


def test_the_demo_generates_one_local_key_and_reuses_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("TTMEMORY_ENCRYPTION_KEYS", raising=False)

    first = local_encryption_keys(tmp_path / "data")
    second = local_encryption_keys(tmp_path / "data")

    assert first == second
    assert first is not None and len(first) == 1
    key_id, raw = parse_key(first[0])
    assert (key_id, len(raw)) == ("demo1", 32)
    assert oct((tmp_path / "data" / "demo-keys.txt").stat().st_mode & 0o777) == "0o600"


def test_the_demo_front_page_shows_sessions_and_facts(db, client) -> None:
    from ttmemory import memory

    session = memory.session_open(namespace="demo-user", key="trip")
    memory.message_add(session=session, message={"role": "user", "content": "hello"})
    memory.fact_remember(namespace="demo-user", text="Ada is allergic to peanuts")

    page = client.get("/")

    assert page.status_code == 200
    assert b"trip" in page.content and b"Ada is allergic to peanuts" in page.content
    assert b"/admin/" in page.content
