"""Embedders: ``get_embedder()`` is the configured ``TTMEMORY["EMBEDDER"]``."""

from __future__ import annotations

import threading
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.backends import load_backend
from ttmemory.backends.embedders.base import Embedder
from ttmemory.backends.embedders.hashing import HashEmbedder

# These import only the standard library and Django here; SentenceTransformerEmbedder imports
# sentence_transformers (and torch), WordLlamaEmbedder wordllama, on their first embed.
from ttmemory.backends.embedders.openai import OpenAIEmbedder
from ttmemory.backends.embedders.sentence_transformers import SentenceTransformerEmbedder
from ttmemory.backends.embedders.wordllama import WordLlamaEmbedder
from ttmemory.conf import app_settings

__all__ = [
    "Embedder",
    "HashEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "WordLlamaEmbedder",
    "get_embedder",
    "reset_embedder",
]

_embedder: Embedder | None = None
_guard = threading.Lock()


def get_embedder() -> Embedder:
    """The configured embedder (one instance per process)."""
    global _embedder
    if _embedder is None:
        with _guard:
            if _embedder is None:
                _embedder = load_backend("EMBEDDER", app_settings.EMBEDDER, base=Embedder)
    return _embedder


def reset_embedder() -> None:
    global _embedder
    with _guard:
        if _embedder is not None:
            _embedder.close()
        _embedder = None


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        reset_embedder()
