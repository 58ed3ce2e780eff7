"""Encrypted model fields: AES-256-GCM per value, bound to table and column, with a key id."""

from __future__ import annotations

import json
import re
from functools import cached_property
from typing import Any

from django import forms
from django.core.exceptions import FieldError, ImproperlyConfigured
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

from ttmemory.crypto import get_keyring

try:  # orjson decodes about 6x faster; reads of long histories are the hot path
    import orjson

    _fast_loads: Any = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency, but stay importable without it
    _fast_loads = json.loads

# orjson turns integers beyond 64 bits into floats. Such values are tagged at write time and
# decoded by the standard library, so every JSON type round-trips exactly.
_EXACT_TAG = b"\x00"
_LONG_DIGITS = re.compile(rb"\d{19,}")

__all__ = ["EncryptedJSONField", "EncryptedTextField", "encrypt"]


class _EncryptedField(models.Field):
    """Stores ciphertext in a binary column; only ``isnull`` can be looked up."""

    empty_values = [None]
    description = "Encrypted value"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for option in ("unique", "db_index", "primary_key"):
            if kwargs.get(option):
                raise ImproperlyConfigured(
                    f"{type(self).__name__} cannot be {option}: each value is encrypted with a "
                    "random nonce, so equal values never compare equal in the database"
                )
        super().__init__(*args, **kwargs)

    def get_internal_type(self) -> str:
        return "BinaryField"

    @cached_property
    def associated_data(self) -> bytes:
        return f"ttmemory:{self.model._meta.db_table}.{self.column}".encode()

    def get_lookup(self, lookup_name: str) -> Any:
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        raise FieldError(
            f"{self.model.__name__}.{self.name} is encrypted; only the 'isnull' lookup is "
            f"supported, not {lookup_name!r}"
        )

    def get_transform(self, lookup_name: str) -> Any:
        raise FieldError(
            f"{self.model.__name__}.{self.name} is encrypted; it cannot be filtered or "
            f"transformed by {lookup_name!r}"
        )

    # Subclasses turn Python values into bytes and back.
    def to_plaintext(self, value: Any) -> bytes:
        raise NotImplementedError

    def from_plaintext(self, data: bytes) -> Any:
        raise NotImplementedError

    def encrypt_value(self, value: Any) -> bytes | None:
        if value is None:
            return None
        return get_keyring().encrypt(self.to_plaintext(value), self.associated_data)

    def decrypt_value(self, blob: bytes | memoryview | None) -> Any:
        if blob is None:
            return None
        return self.from_plaintext(get_keyring().decrypt(bytes(blob), self.associated_data))

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        return self.encrypt_value(value)

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        return self.decrypt_value(value)


class EncryptedTextField(_EncryptedField):
    """A text value encrypted at rest; ``""`` and ``None`` stay distinct."""

    description = "Encrypted text"

    def to_python(self, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        return str(value)

    def to_plaintext(self, value: Any) -> bytes:
        if not isinstance(value, str):
            raise TypeError(f"{self.name} expects str, got {type(value).__name__}")
        return value.encode("utf-8")

    def from_plaintext(self, data: bytes) -> Any:
        return data.decode("utf-8")

    def formfield(self, **kwargs: Any) -> Any:
        return super().formfield(
            **{"form_class": forms.CharField, "widget": forms.Textarea, **kwargs}
        )


class EncryptedJSONField(_EncryptedField):
    """A JSON value encrypted at rest; types round-trip exactly (int stays int, "" stays "")."""

    description = "Encrypted JSON"

    def to_plaintext(self, value: Any) -> bytes:
        try:
            encoded = json.dumps(
                value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{self.name} holds a value that is not JSON: {exc}") from exc
        if _LONG_DIGITS.search(encoded):
            return _EXACT_TAG + encoded
        return encoded

    def from_plaintext(self, data: bytes) -> Any:
        if data[:1] == _EXACT_TAG:
            return json.loads(data[1:])
        return _fast_loads(data)

    def formfield(self, **kwargs: Any) -> Any:
        return super().formfield(**{"form_class": forms.JSONField, **kwargs})


def encrypt(base_field: models.Field) -> _EncryptedField:
    """django-cryptography's familiar shape: ``encrypt(models.TextField(null=True))``.

    Text-like fields become ``EncryptedTextField`` and ``JSONField`` becomes
    ``EncryptedJSONField``, keeping ``null``, ``blank``, ``default`` and ``verbose_name``.
    """
    _, _, _, kwargs = base_field.deconstruct()
    keep = {
        k: v
        for k, v in kwargs.items()
        if k in {"null", "blank", "default", "verbose_name", "help_text", "editable"}
    }
    if isinstance(base_field, models.JSONField):
        return EncryptedJSONField(**keep)
    if isinstance(base_field, models.CharField | models.TextField):
        return EncryptedTextField(**keep)
    raise ImproperlyConfigured(
        f"encrypt() supports TextField, CharField and JSONField, not {type(base_field).__name__}"
    )
