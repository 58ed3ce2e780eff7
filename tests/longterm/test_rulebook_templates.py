"""A rule file whose template names a field no rule fills fails when it loads, naming the rule,
never when a user's sentence first matches it."""

from __future__ import annotations

from typing import Any

import pytest

from ttmemory.longterm import rulebook


def test_every_shipped_rule_file_loads() -> None:
    assert {lang.code for lang in rulebook.languages()} >= {"en", "ru", "zh", "de", "es", "fr"}


def test_a_template_naming_an_unknown_field_fails_at_load(monkeypatch: Any) -> None:
    broken = """
language = "xx"
subject = "X"
[[rule]]
pattern = "^a (?P<p>b)$"
template = "{S} {p}"
"""

    class _File:
        def read_text(self, encoding: str) -> str:
            return broken

    class _Folder:
        def joinpath(self, name: str) -> _File:
            return _File()

    monkeypatch.setattr(rulebook.resources, "files", lambda package: _Folder())
    rulebook.load.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"rules/xx\.toml: rule 1: template names \['p'\]"):
            rulebook.load("xx")
    finally:
        rulebook.load.cache_clear()
