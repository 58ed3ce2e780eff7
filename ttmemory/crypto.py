"""AES-256-GCM keyring: every value carries its key id, the first key encrypts, all keys decrypt.

Wire format of one encrypted value (bytes)::

    version (1 byte) | len(key_id) (1 byte) | key_id (ASCII) | nonce (12 bytes) | ciphertext + tag

The version names the associated data the value was sealed with: 2 (``FORMAT_VERSION``)
binds it to its table, column and row (``fields._EncryptedField.row_aad``); 1
(``LEGACY_FORMAT_VERSION``, before row binding) to table and column only. A value copied into
another column or row does not decrypt.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.conf import app_settings
from ttmemory.exceptions import DecryptionError, EncryptionKeyError

FORMAT_VERSION = 2
LEGACY_FORMAT_VERSION = 1
_KNOWN_VERSIONS = frozenset({FORMAT_VERSION, LEGACY_FORMAT_VERSION})
NONCE_BYTES = 12
KEY_BYTES = 32
KEY_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")


def parse_key(entry: str) -> tuple[str, bytes]:
    """Parse ``"key_id:base64"`` into ``(key_id, 32 raw bytes)``; raise EncryptionKeyError."""
    if not isinstance(entry, str) or ":" not in entry:
        raise EncryptionKeyError("each encryption key must be a string 'key_id:base64-of-32-bytes'")
    key_id, _, encoded = entry.partition(":")
    if not KEY_ID_RE.match(key_id):
        raise EncryptionKeyError(
            f"key id {key_id!r} must be 1-32 characters of letters, digits, '_', '.' or '-'"
        )
    try:
        raw = decode_key_material(encoded)
    except ValueError as exc:
        raise EncryptionKeyError(f"key {key_id!r} is not valid base64") from exc
    if len(raw) != KEY_BYTES:
        raise EncryptionKeyError(
            f"key {key_id!r} decodes to {len(raw)} bytes; AES-256 needs {KEY_BYTES}"
        )
    return key_id, raw


def decode_key_material(text: str) -> bytes:
    """Raw bytes of a key written in standard or URL-safe base64, padding optional."""
    text = text.strip()
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_")
    except binascii.Error as exc:
        raise ValueError(str(exc)) from exc


def generate_key(key_id: str = "k1") -> str:
    """Return a new random key entry ``"key_id:base64"`` for ``ENCRYPTION_KEYS``."""
    if not KEY_ID_RE.match(key_id):
        raise EncryptionKeyError(f"invalid key id {key_id!r}")
    return f"{key_id}:{base64.urlsafe_b64encode(secrets.token_bytes(KEY_BYTES)).decode()}"


@dataclass
class Keyring:
    """Ordered AES-256-GCM keys; ``keys[0]`` encrypts, any of them decrypts."""

    keys: list[tuple[str, bytes]]
    _ciphers: dict[str, AESGCM] = field(default_factory=dict, repr=False)
    _headers: dict[str, bytes] = field(default_factory=dict, repr=False)
    # Header bytes (either format) -> (cipher, where the nonce starts): one dict lookup per
    # decryption on the read path instead of parsing the key id each time.
    _by_header: dict[bytes, tuple[AESGCM, int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.keys:
            raise EncryptionKeyError("the keyring is empty")
        seen: set[str] = set()
        for key_id, raw in self.keys:
            if key_id in seen:
                raise EncryptionKeyError(f"key id {key_id!r} appears twice in ENCRYPTION_KEYS")
            seen.add(key_id)
            self._ciphers[key_id] = AESGCM(raw)
            self._headers[key_id] = bytes([FORMAT_VERSION, len(key_id)]) + key_id.encode("ascii")
            for version in _KNOWN_VERSIONS:
                header = bytes([version, len(key_id)]) + key_id.encode("ascii")
                self._by_header[header] = (self._ciphers[key_id], len(header))

    @classmethod
    def from_entries(cls, entries: list[str] | tuple[str, ...]) -> Keyring:
        return cls([parse_key(entry) for entry in entries])

    @property
    def primary_key_id(self) -> str:
        return self.keys[0][0]

    def encrypt(self, plaintext: bytes, aad: bytes) -> bytes:
        key_id = self.keys[0][0]
        nonce = os.urandom(NONCE_BYTES)
        return self._headers[key_id] + nonce + self._ciphers[key_id].encrypt(nonce, plaintext, aad)

    def decrypt(self, blob: bytes, aad: bytes) -> bytes:
        try:
            cipher, start = self._by_header[blob[: 2 + blob[1]]]
            nonce_end = start + NONCE_BYTES
            if len(blob) >= nonce_end + 16:
                return cipher.decrypt(blob[start:nonce_end], blob[nonce_end:], aad)
        except (KeyError, IndexError, TypeError, InvalidTag):
            pass  # the checks below say what is wrong
        return self._decrypt_checked(blob, aad)

    def _decrypt_checked(self, blob: bytes, aad: bytes) -> bytes:
        key_id = key_id_of(blob)
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise DecryptionError(
                f"value was encrypted with key {key_id!r}, which is not in ENCRYPTION_KEYS"
            )
        start = 2 + len(key_id)
        nonce = blob[start : start + NONCE_BYTES]
        try:
            return cipher.decrypt(nonce, blob[start + NONCE_BYTES :], aad)
        except InvalidTag:
            # The associated data is not quoted: it names the row (namespace, ids).
            raise DecryptionError(
                f"value failed authentication with key {key_id!r}: wrong key, tampered data, "
                "or a value moved from another column or row"
            ) from None


def key_id_of(blob: bytes) -> str:
    """Return the key id a stored value was encrypted with; DecryptionError if not ours."""
    blob = bytes(blob)
    if len(blob) < 2 or blob[0] not in _KNOWN_VERSIONS:
        raise DecryptionError("value is not a ttmemory ciphertext (unknown format)")
    length = blob[1]
    if len(blob) < 2 + length + NONCE_BYTES + 16:
        raise DecryptionError("value is truncated")
    try:
        return blob[2 : 2 + length].decode("ascii")
    except UnicodeDecodeError:
        raise DecryptionError("value has a corrupt key id") from None


_keyring: Keyring | None = None


def get_keyring() -> Keyring:
    """The keyring built from ``TTMEMORY["ENCRYPTION_KEYS"]``; ImproperlyConfigured if unusable."""
    global _keyring
    if _keyring is None:
        entries = app_settings.ENCRYPTION_KEYS
        if not entries:
            raise ImproperlyConfigured(
                "ttmemory needs TTMEMORY['ENCRYPTION_KEYS'] (or the TTMEMORY_ENCRYPTION_KEYS "
                "environment variable): a list of 'key_id:base64-of-32-bytes'. "
                "Generate one with: python -c "
                "'from ttmemory.crypto import generate_key; print(generate_key())'"
            )
        try:
            _keyring = Keyring.from_entries(entries)
        except EncryptionKeyError as exc:
            raise ImproperlyConfigured(f"TTMEMORY['ENCRYPTION_KEYS']: {exc}") from exc
    return _keyring


def reset_keyring() -> None:
    global _keyring
    _keyring = None


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        reset_keyring()


def derive_key(master: bytes, *, purpose: bytes, length: int = KEY_BYTES) -> bytes:
    """A subkey of ``master`` for one ``purpose`` (HKDF-SHA256, RFC 5869).

    Different purposes give independent keys: knowing one subkey reveals nothing of ``master``
    or of any other subkey. ``purpose`` must be unambiguous (a fixed label, then the context).
    """
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=purpose).derive(master)
