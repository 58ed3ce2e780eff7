"""LLM backends: ``get_llm()`` is the configured ``TTMEMORY["LLM"]`` or None (offline rules)."""

from __future__ import annotations

import threading
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.backends import load_backend
from ttmemory.backends.llm.base import LLM, LLMResponse
from ttmemory.backends.llm.local import ScriptedLLM

# Standard library only: importing it costs nothing when another backend is configured.
from ttmemory.backends.llm.openai import OpenAIChatLLM
from ttmemory.conf import app_settings

__all__ = ["LLM", "LLMResponse", "OpenAIChatLLM", "ScriptedLLM", "get_llm", "reset_llm"]

_llm: LLM | None = None
_loaded = False
_guard = threading.Lock()


def get_llm() -> LLM | None:
    """The configured LLM (one instance per process), or None when ``LLM`` is unset."""
    global _llm, _loaded
    if not _loaded:
        with _guard:
            if not _loaded:
                config = app_settings.LLM
                _llm = load_backend("LLM", config, base=LLM) if config else None
                _loaded = True
    return _llm


def reset_llm() -> None:
    global _llm, _loaded
    with _guard:
        if _llm is not None:
            _llm.close()
        _llm, _loaded = None, False


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        reset_llm()
