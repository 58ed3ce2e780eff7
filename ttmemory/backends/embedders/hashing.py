"""HashEmbedder: deterministic, offline vectors from keyed hashes of words (lexical, no meaning)."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
from collections.abc import Sequence

from django.core.exceptions import ImproperlyConfigured

from ttmemory.backends.embedders.base import Embedder
from ttmemory.conf import app_settings
from ttmemory.crypto import decode_key_material, derive_key
from ttmemory.text import normalise_terms, normaliser_version

MIN_KEY_BYTES = 32


class HashEmbedder(Embedder):
    """Feature hashing of words and word bigrams into ``dimensions`` buckets, signed, L2-normed.

    It knows no meaning: "car" and "automobile" are unrelated. It exists so everything works
    offline and in tests; use ``OpenAIEmbedder`` or ``SentenceTransformerEmbedder`` for recall
    by meaning.

    Words are hashed with a key (keyed BLAKE2b, a MAC): the bucket and sign of a word say
    nothing without it, so the stored vectors cannot be matched against a dictionary. The key is
    ``OPTIONS["key"]`` (base64 of at least 32 bytes) or, by default, a subkey derived with HKDF
    from ``BLIND_INDEX_KEY``. The model name carries a fingerprint of the key
    (``hash-384-keyed-1a2b3c4d``), so after a key change ``ttmemory_reembed`` re-embeds every
    fact and recall never compares vectors made with two keys.
    """

    #: Lexical vectors mostly repeat BM25: keywords lead. 0.1, with neighbours at 0.5, by
    #: cross-validation on the conversational set's tune half (docs/benchmarks.md).
    recall_vector_weight = 0.1
    recall_context_weight = 0.5
    recall_feedback_weight = 0.0  # gained nothing on tune at any weight (fusion study)
    #: Only a keyword in common is evidence: between texts sharing no word, this embedder's
    #: similarity is bucket collisions (about 0.1 for 5% of such pairs, by the key), so 1.0.
    recall_evidence_similarity = 1.0
    #: Past messages: keywords with neighbour terms alone scored best, every fusion chose
    #: weight 0 by cross-validation on the conversational set, and the two-set rule of
    #: ``bench/fusion_generalise.py --target messages`` chose it too (docs/benchmarks.md).
    message_search_vector_weight = 0.0

    def __init__(self, *, dimensions: int = 384, model: str = "", key: str | None = None) -> None:
        if not isinstance(dimensions, int) or not 8 <= dimensions <= 4096:
            raise TypeError("HashEmbedder: dimensions must be a whole number from 8 to 4096")
        if not isinstance(model, str):
            raise TypeError("HashEmbedder: model must be a string")
        self.dimensions = dimensions
        self._model = model
        self._key: bytes | None = None if key is None else _parse_key(key, "key")
        self._hasher: hashlib.blake2b | None = None  # keyed BLAKE2b, copied per feature

    @property
    def model(self) -> str:
        """``hash-<dimensions>-keyed-<key fingerprint>`` unless OPTIONS names one."""
        if not self._model:
            # The words it hashes come from normalise_terms: a new stemmer is a new model.
            purpose = b"ttmemory/hash-embedder/fingerprint/" + normaliser_version().encode()
            mac = hmac.new(self.key(), purpose, hashlib.sha256)
            self._model = f"hash-{self.dimensions}-keyed-{mac.hexdigest()[:8]}"
        return self._model

    @model.setter
    def model(self, value: str) -> None:
        self._model = value

    def key(self) -> bytes:
        """The hashing key: OPTIONS["key"], else HKDF of BLIND_INDEX_KEY (read on first use)."""
        if self._key is None:
            value = app_settings.BLIND_INDEX_KEY
            if not value:
                raise ImproperlyConfigured(
                    "HashEmbedder needs TTMEMORY['BLIND_INDEX_KEY'] (its key is derived from "
                    "it) or its own OPTIONS['key']"
                )
            try:
                master = _parse_key(value, "TTMEMORY['BLIND_INDEX_KEY']")
            except TypeError as exc:
                raise ImproperlyConfigured(str(exc)) from None
            self._key = derive_key(master, purpose=b"ttmemory/hash-embedder/v1")
        return self._key

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        if self._hasher is None:
            self._hasher = hashlib.blake2b(digest_size=8, key=self.key()[:64])
        vector = [0.0] * self.dimensions
        words = normalise_terms(text)
        features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
        for feature in features:
            hasher = self._hasher.copy()
            hasher.update(feature.encode())
            value = int.from_bytes(hasher.digest(), "little")
            bucket = value % self.dimensions
            vector[bucket] += 1.0 if (value >> 63) & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return [v / norm for v in vector]


def _parse_key(value: object, name: str) -> bytes:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"HashEmbedder: {name} must be base64 of at least {MIN_KEY_BYTES} bytes")
    try:
        raw = decode_key_material(value)
    except ValueError:
        raise TypeError(f"HashEmbedder: {name} is not valid base64") from None
    if len(raw) < MIN_KEY_BYTES:
        raise TypeError(
            f"HashEmbedder: {name} decodes to {len(raw)} bytes; at least {MIN_KEY_BYTES} are needed"
        )
    return raw
