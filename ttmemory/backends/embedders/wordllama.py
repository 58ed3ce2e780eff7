"""WordLlama: static token embeddings shipped inside the ``wordllama`` wheel (no torch, offline)."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ttmemory.backends.embedders.base import Embedder
from ttmemory.exceptions import EmbeddingError

INSTALL_HINT = "pip install 'ttmemory[wordllama]' (or: pip install wordllama==0.4.0.post1)"
DIMENSIONS = (64, 128, 256)


class WordLlamaEmbedder(Embedder):
    """WordLlama's ``l2_supercat`` model: mean-pooled static embeddings, 256 dimensions.

    The weights (16 MB) and the tokenizer ship inside the ``wordllama`` wheel; they are loaded
    from the installed package's files explicitly (its own loader looks for the tokenizer under
    ``tokenizer/`` while the wheel ships ``tokenizers/``, and would try to download it), so
    nothing is ever downloaded. Options: ``dimensions`` (256, or 128 / 64: the model is
    trained so its first dimensions work alone), ``config`` ("l2_supercat"). An optional extra:
    a missing package raises ``ImproperlyConfigured`` with the pip command; the model is loaded
    on the first ``embed``.
    """

    #: Facts blend at 0.1 (``bench/fusion_generalise.py``: the smallest weight within one
    #: standard error of the best on two tuning sets, the conversational tune half and the
    #: synthetic set; 0.8, the tune half's own best, fell below keywords alone on LoCoMo),
    #: with neighbours at 0.5; past messages by keyword with neighbour terms alone (0), by the
    #: same rule (``--target messages``: 0.1 lowered the conversational tune half by 0.027).
    recall_vector_weight = 0.1
    recall_context_weight = 0.5
    recall_feedback_weight = 0.0  # gained nothing on tune at any weight (fusion study)
    #: 95th percentile of a question's similarity to turns sharing no word with it (tune half).
    recall_evidence_similarity = 0.16
    message_search_vector_weight = 0.0

    def __init__(self, *, dimensions: int = 256, config: str = "l2_supercat") -> None:
        if dimensions not in DIMENSIONS:
            raise TypeError(f"WordLlamaEmbedder: 'dimensions' must be one of {DIMENSIONS}")
        if not isinstance(config, str) or not config.isidentifier():
            raise TypeError("WordLlamaEmbedder: 'config' must be a model name like l2_supercat")
        if importlib.util.find_spec("wordllama") is None:
            raise ImproperlyConfigured(
                f"WordLlamaEmbedder needs the wordllama package: {INSTALL_HINT}"
            )
        self.dimensions = dimensions
        self.config = config
        self.model = f"wordllama-{config}-{dimensions}"
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder(model={self.model!r})"

    def files(self) -> tuple[Path, Path]:
        """The weights and the tokenizer inside the installed package."""
        spec = importlib.util.find_spec("wordllama")
        if spec is None or spec.origin is None:
            raise EmbeddingError(f"{self!r}: the wordllama package is not installed")
        root = Path(spec.origin).parent
        return (
            root / "weights" / f"{self.config}_256.safetensors",
            root / "tokenizers" / f"{self.config}_tokenizer_config.json",
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order; ``EmbeddingError`` if the model fails."""
        texts = list(texts)
        if not texts:
            return []
        with self._lock:
            model = self._load()
            try:
                array = model.embed(texts, norm=False, return_np=True)
            except Exception as exc:  # tokenizers / numpy errors all mean "no vectors"
                raise EmbeddingError(f"{self!r}: embed failed: {exc}") from exc
        return [_unit([float(v) for v in row]) for row in array.tolist()]

    def close(self) -> None:
        with self._lock:
            self._model = None

    def _load(self) -> Any:
        if self._model is None:
            weights, tokenizer_file = self.files()
            try:
                # Optional dependencies (the wordllama extra), imported when first used.
                safetensors = importlib.import_module("safetensors")
                tokenizers = importlib.import_module("tokenizers")
                inference = _import_keeping_logging("wordllama.inference")
                with safetensors.safe_open(str(weights), framework="np", device="cpu") as f:
                    embedding = f.get_tensor("embedding.weight")[:, : self.dimensions]
                tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
                self._model = inference.WordLlamaInference(embedding, tokenizer)
            except Exception as exc:
                raise EmbeddingError(f"{self!r}: cannot load the model: {exc}") from exc
        return self._model


def _import_keeping_logging(name: str) -> Any:
    """Import ``name`` and undo what the wordllama package does to the host's logging.

    ``wordllama`` and ``wordllama.inference`` call ``logging.basicConfig(level=INFO)`` at import:
    on a host whose root logger had no handler that adds one and lowers the root level to INFO,
    so every library's INFO lines (Celery's included) start to print. A library must not
    configure its host's logging: the root logger's handlers and level are put back as they were.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        return importlib.import_module(name)
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(level)


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector
