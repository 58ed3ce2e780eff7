"""Encrypted model fields (AES-256-GCM per value, bound to their row) and their queryset.

The face of the package: models and migrations name ``ttmemory.fields.EncryptedTextField`` and
its kin. ``encrypted`` holds the field types; ``queryset`` the row-decrypting
``EncryptedQuerySet``.
"""

from __future__ import annotations

from ttmemory.fields.encrypted import (
    EncryptedBinaryField,
    EncryptedJSONField,
    EncryptedTextField,
    Sealed,
    encrypt,
    legacy_format_accepted,
    seal,
    set_legacy_format_policy,
)
from ttmemory.fields.encrypted import (
    _EncryptedField as _EncryptedField,  # the base class: key rotation walks its columns
)
from ttmemory.fields.queryset import EncryptedQuerySet, open_rows, row_opener

__all__ = [
    "EncryptedBinaryField",
    "EncryptedJSONField",
    "EncryptedQuerySet",
    "EncryptedTextField",
    "Sealed",
    "encrypt",
    "legacy_format_accepted",
    "open_rows",
    "row_opener",
    "seal",
    "set_legacy_format_policy",
]
