"""WordLlamaEmbedder: an optional extra; without the package it says how to install it."""

from __future__ import annotations

import importlib.util

import pytest
from django.core.exceptions import ImproperlyConfigured

from ttmemory.backends.embedders import WordLlamaEmbedder


def test_without_the_package_the_error_names_the_extra() -> None:
    if importlib.util.find_spec("wordllama") is not None:
        embedder = WordLlamaEmbedder(dimensions=128)
        vectors = embedder.embed(["peanut allergy", "allergic to peanuts", "sunny weather"])
        assert embedder.model == "wordllama-l2_supercat-128" and len(vectors[0]) == 128
        close = sum(a * b for a, b in zip(vectors[0], vectors[1], strict=True))
        far = sum(a * b for a, b in zip(vectors[0], vectors[2], strict=True))
        assert close > far
        return
    with pytest.raises(ImproperlyConfigured, match=r"ttmemory\[wordllama\]"):
        WordLlamaEmbedder()


def test_options_are_checked() -> None:
    with pytest.raises(TypeError, match="dimensions"):
        WordLlamaEmbedder(dimensions=300)
