"""System checks name the problem and the fix."""

from __future__ import annotations

from typing import Any

import pytest

from ttmemory import checks
from ttmemory.crypto import generate_key


def ids(messages: list[Any]) -> list[str]:
    return [m.id for m in messages]


def test_a_missing_key_is_error_e001_with_a_hint(settings: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("TTMEMORY_ENCRYPTION_KEYS", raising=False)
    settings.TTMEMORY = {}

    errors = checks.check_encryption_keys()

    assert ids(errors) == ["ttmemory.E001"]
    assert "generate_key" in (errors[0].hint or "")


def test_the_environment_variable_supplies_keys(settings: Any, monkeypatch: Any) -> None:
    settings.TTMEMORY = {}
    monkeypatch.setenv("TTMEMORY_ENCRYPTION_KEYS", f"{generate_key('e1')},{generate_key('e2')}")
    from ttmemory.conf import app_settings

    app_settings.reload()
    try:
        assert checks.check_encryption_keys() == []
        assert [k.split(":")[0] for k in app_settings.ENCRYPTION_KEYS] == ["e1", "e2"]
    finally:
        monkeypatch.delenv("TTMEMORY_ENCRYPTION_KEYS")
        app_settings.reload()


@pytest.mark.parametrize("keys", [["k1:short"], ["nocolon"], 42])
def test_a_malformed_key_is_error_e002(settings: Any, keys: Any) -> None:
    settings.TTMEMORY = {"ENCRYPTION_KEYS": keys}

    assert ids(checks.check_encryption_keys()) == ["ttmemory.E002"]


def test_unknown_settings_and_bad_options_are_reported(settings: Any) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "ENCRYPTON_KEYS": [],
        "TOKENIZER": "nope",
        "MAX_MESSAGE_BYTES": 0,
        "TRIM_MODE": "shred",
    }

    assert ids(checks.check_settings_shape()) == ["ttmemory.E011"]
    assert ids(checks.check_options()) == ["ttmemory.E020", "ttmemory.E021", "ttmemory.E023"]


def test_sqlite_without_immediate_transactions_warns(settings: Any) -> None:
    from django.db import connections

    conn = connections["default"]
    original = conn.settings_dict.get("OPTIONS", {})
    conn.settings_dict["OPTIONS"] = {}
    try:
        warnings = checks.check_sqlite_transactions()
    finally:
        conn.settings_dict["OPTIONS"] = original
    expected = ["ttmemory.W001"] if conn.vendor == "sqlite" else []
    assert ids(warnings) == expected
