"""The blind keyword index: keyed HMACs of normalised terms, so keywords are searchable encrypted.

No plaintext term is stored. The key (``BLIND_INDEX_KEY``) is separate from the encryption
keys: rotating encryption keys leaves the index valid.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.conf import app_settings
from ttmemory.crypto import decode_key_material
from ttmemory.text import normalise_terms, normalise_text

_key: bytes | None = None


def parse_blind_key(value: object) -> bytes:
    """Decode ``BLIND_INDEX_KEY`` (base64 of at least 32 bytes); ValueError if malformed."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a base64 string of 32 random bytes")
    try:
        raw = decode_key_material(value)
    except ValueError as exc:
        raise ValueError("is not valid base64") from exc
    if len(raw) < 32:
        raise ValueError(f"decodes to {len(raw)} bytes; at least 32 are needed")
    return raw


def blind_key() -> bytes:
    global _key
    if _key is None:
        value = app_settings.BLIND_INDEX_KEY
        if not value:
            raise ImproperlyConfigured(
                "ttmemory needs TTMEMORY['BLIND_INDEX_KEY'] (or TTMEMORY_BLIND_INDEX_KEY) for "
                "long-term memory: base64 of 32 random bytes, separate from the encryption keys"
            )
        try:
            _key = parse_blind_key(value)
        except ValueError as exc:
            raise ImproperlyConfigured(f"TTMEMORY['BLIND_INDEX_KEY'] {exc}") from exc
    return _key


def reset_blind_key() -> None:
    global _key
    _key = None


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        reset_blind_key()


def term_hash(term: str) -> int:
    """A normalised term's keyed hash as a signed 64-bit integer (fits a BIGINT column)."""
    digest = hmac.new(blind_key(), b"t:" + term.encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def term_counts(text: str) -> Counter[int]:
    """Keyed hashes of the terms of ``text`` with how often each occurs."""
    return Counter(term_hash(term) for term in normalise_terms(text))


def query_terms(text: str) -> list[int]:
    """Distinct keyed hashes of a query's terms, in order."""
    return list(dict.fromkeys(term_hash(term) for term in normalise_terms(text)))


def text_hash(text: str) -> str:
    """Keyed hash of the normalised text: equal texts are one fact (upsert key)."""
    normal = normalise_text(text).encode("utf-8")
    return hmac.new(blind_key(), b"x:" + normal, hashlib.sha256).hexdigest()
