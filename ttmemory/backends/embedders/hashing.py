"""HashEmbedder: deterministic, offline vectors from hashed words (lexical only, no meaning)."""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence

from ttmemory.backends.embedders.base import Embedder
from ttmemory.text import normalise_terms


class HashEmbedder(Embedder):
    """Feature hashing of words and word bigrams into ``dimensions`` buckets, signed, L2-normed.

    It knows no meaning: "car" and "automobile" are unrelated. It exists so everything works
    offline and in tests; use ``OpenAIEmbedder`` or ``SentenceTransformerEmbedder`` for recall
    by meaning.
    """

    #: Lexical vectors mostly repeat BM25: keywords lead (0.1-0.4 was best on the evaluation set).
    recall_vector_weight = 0.3

    def __init__(self, *, dimensions: int = 384, model: str = "") -> None:
        if not isinstance(dimensions, int) or not 8 <= dimensions <= 4096:
            raise TypeError("HashEmbedder: dimensions must be a whole number from 8 to 4096")
        self.dimensions = dimensions
        self.model = model or f"hash-{dimensions}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        words = normalise_terms(text)
        features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            bucket = value % self.dimensions
            vector[bucket] += 1.0 if (value >> 63) & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return [v / norm for v in vector]
