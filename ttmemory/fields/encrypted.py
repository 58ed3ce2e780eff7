"""Encrypted field types: AES-256-GCM per value, bound to their row, with a key id.

A field declared with ``bind=("namespace", "session_id", "seq")`` authenticates, as associated
data, its table, its column and those columns of its own row (``row_aad``). Moving a value to
another row, another tenant's included, makes it fail with ``DecryptionError``.

The database hands a bound field's bytes to ``from_db_value`` without the row, so they arrive
as a ``Sealed`` value and are opened by the code that has the row's columns: the field's
descriptor (model instances, lazily, on first access) and the row-decrypting queryset
(``ttmemory.fields.queryset``). A ``Sealed`` value that escapes (a ``values_list()`` across a
relation) is not data: it cannot be used as text or JSON, so ciphertext is never mistaken for
content.

Values written before row binding (format 1: associated data ``ttmemory:<table>.<column>``) are
read only while ``legacy_format_accepted()`` says so (until ``ttmemory_rebind`` finishes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from django import forms
from django.core.exceptions import FieldError, ImproperlyConfigured
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

from ttmemory.crypto import FORMAT_VERSION, LEGACY_FORMAT_VERSION, get_keyring
from ttmemory.exceptions import DecryptionError

try:  # orjson decodes faster (bench/), and reads of long histories are the hot path
    import orjson

    _fast_loads: Any = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency, but stay importable without it
    _fast_loads = json.loads


# orjson turns integers beyond 64 bits into floats. Such values are tagged at write time and
# decoded by the standard library, so every JSON type round-trips exactly.
_EXACT_TAG = b"\x00"
_LONG_DIGITS = re.compile(rb"\d{19,}")


class Sealed:
    """Ciphertext read from the database, not yet opened with its row's binding.

    Deliberately not ``str``, ``bytes`` or ``dict``: a value that was never opened fails loudly
    wherever content is expected instead of passing ciphertext off as data.
    """

    __slots__ = ("blob",)

    def __init__(self, blob: bytes) -> None:
        self.blob = blob

    def __repr__(self) -> str:
        return "<Sealed ttmemory value: read it through its model or EncryptedQuerySet>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sealed) and other.blob == self.blob

    def __hash__(self) -> int:
        return hash(self.blob)


def _refuse_legacy() -> bool:
    return False


# Whether format-1 values (bound to table and column only) may still be read. Wired in
# ``apps.ready`` to the database marker that ``ttmemory_rebind`` clears; refuse until then.
_legacy_policy: Callable[[], bool] = _refuse_legacy


def set_legacy_format_policy(policy: Callable[[], bool]) -> None:
    """Install the callable deciding whether pre-row-binding values are still readable."""
    global _legacy_policy
    _legacy_policy = policy


def legacy_format_accepted() -> bool:
    return _legacy_policy()


class _BoundAttribute:
    """The descriptor of a bound field: opens a ``Sealed`` value on first access, with the
    instance's own binding columns, and caches the plaintext on the instance."""

    def __init__(self, field: _EncryptedField) -> None:
        self.field = field

    def __get__(self, instance: Any, cls: Any = None) -> Any:
        if instance is None:
            return self
        data = instance.__dict__
        field = self.field
        attname = field.attname
        if attname not in data:  # deferred: one query for it and its row's binding
            row = (
                type(instance)
                ._base_manager.db_manager(instance._state.db)
                .filter(pk=instance.pk)
                .values_list(attname, *field.bind)
                .get()
            )
            for name, stored in zip(field.bind, row[1:], strict=True):
                data.setdefault(name, stored)  # deferred binding columns come along
            sealed = row[0]
            data[attname] = None if sealed is None else field.open(sealed.blob, row[1:])
        value = data[attname]
        if type(value) is Sealed:
            value = field.open(value.blob, field.binding_of(instance))
            data[attname] = value
        return value

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[self.field.attname] = value


class _EncryptedField(models.Field):
    """Stores ciphertext in a binary column; only ``isnull`` can be looked up."""

    empty_values = [None]
    description = "Encrypted value"
    # ``bind`` changes what a value is authenticated with, never the column.
    non_db_attrs = (*models.Field.non_db_attrs, "bind")

    def __init__(self, *args: Any, bind: Sequence[str] = (), **kwargs: Any) -> None:
        self.bind = tuple(bind)
        for option in ("unique", "db_index", "primary_key"):
            if kwargs.get(option):
                raise ImproperlyConfigured(
                    f"{type(self).__name__} cannot be {option}: each value is encrypted with a "
                    "random nonce, so equal values never compare equal in the database"
                )
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        if path.startswith("ttmemory.fields."):
            # The public path, as migrations name it, whichever module defines the class.
            path = f"ttmemory.fields.{type(self).__name__}"
        if self.bind:
            kwargs["bind"] = self.bind
        return name, path, args, kwargs

    def contribute_to_class(self, cls: Any, name: str, private_only: bool = False) -> None:
        super().contribute_to_class(cls, name, private_only=private_only)
        if self.bind:
            setattr(cls, self.attname, _BoundAttribute(self))

    def get_internal_type(self) -> str:
        return "BinaryField"

    @cached_property
    def associated_data(self) -> bytes:
        """Format 1 (before row binding): table and column only. Read while migrating."""
        return f"ttmemory:{self.model._meta.db_table}.{self.column}".encode()

    @cached_property
    def _aad_prefix(self) -> str:
        return f"ttmemory/{FORMAT_VERSION}:{self.model._meta.db_table}.{self.column}|"

    def row_aad(self, binding: Sequence[Any]) -> bytes:
        """Format 2 associated data: table, column and the row's binding columns, each
        length-prefixed (``<chars>:<text>``) so no two rows can produce the same bytes."""
        return self._row_aad(binding)

    @cached_property
    def _row_aad(self) -> Callable[[Sequence[Any]], bytes]:
        # Built once per field: a page of messages runs it once per row, and the unrolled forms
        # cost less than a loop over the parts (bench/).
        prefix = self._aad_prefix
        unset = self._unset_binding

        if len(self.bind) == 2:

            def two(binding: Sequence[Any]) -> bytes:
                a, b = binding
                if a is None or b is None:
                    unset()
                a, b = str(a), str(b)
                return f"{prefix}{len(a)}:{a}{len(b)}:{b}".encode()

            return two
        if len(self.bind) == 3:
            # Rows read together mostly share their first two parts (a page of one session):
            # the last ones are remembered as one tuple, replaced whole, so threads never mix.
            last: list[tuple[Any, Any, str]] = [(None, None, "")]

            def three(binding: Sequence[Any]) -> bytes:
                a, b, c = binding
                if a is None or b is None or c is None:
                    unset()
                seen_a, seen_b, head = last[0]
                if (
                    a != seen_a
                    or b != seen_b
                    or type(a) is not type(seen_a)
                    or type(b) is not type(seen_b)
                ):
                    sa, sb = str(a), str(b)
                    head = f"{prefix}{len(sa)}:{sa}{len(sb)}:{sb}"
                    last[0] = (a, b, head)
                c = str(c)
                return f"{head}{len(c)}:{c}".encode()

            return three

        def any_length(binding: Sequence[Any]) -> bytes:
            out = prefix
            for value in binding:
                if value is None:
                    unset()
                text = str(value)
                out += f"{len(text)}:{text}"
            return out.encode()

        return any_length

    def _unset_binding(self) -> None:
        raise DecryptionError(
            f"{self.model.__name__}.{self.name} is bound to {', '.join(self.bind)}, and one of "
            "them is not set"
        )

    def binding_of(self, instance: Any) -> tuple[Any, ...]:
        return tuple(getattr(instance, name) for name in self.bind)

    def seal(self, value: Any, binding: Sequence[Any]) -> Sealed | None:
        """Encrypt ``value`` for the row whose binding columns hold ``binding``."""
        if value is None:
            return None
        return Sealed(get_keyring().encrypt(self.to_plaintext(value), self.row_aad(binding)))

    def open(self, blob: bytes, binding: Sequence[Any]) -> Any:
        """Decrypt ``blob`` read from the row whose binding columns hold ``binding``."""
        keyring = get_keyring()
        if blob and blob[0] == LEGACY_FORMAT_VERSION:
            if not legacy_format_accepted():
                raise DecryptionError(
                    f"{self.model.__name__}.{self.name} holds a value in the format before row "
                    "binding, and ttmemory_rebind has finished; it is refused (restored from "
                    "an old backup? run ttmemory_rebind again)"
                )
            aad = self.associated_data
        else:
            aad = self.row_aad(binding)
        try:
            plaintext = keyring.decrypt(blob, aad)
        except DecryptionError as exc:
            where = f" (bound to {', '.join(self.bind)})" if self.bind else ""
            raise DecryptionError(f"{self.model.__name__}.{self.name}{where}: {exc}") from None
        return self.from_plaintext(plaintext)

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

    def pre_save(self, model_instance: Any, add: bool) -> Any:
        # The instance is here, so this is where a bound value learns its row.
        value = getattr(model_instance, self.attname)
        if not self.bind:
            return value
        return self.seal(value, self.binding_of(model_instance))

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        if value is None:
            return None
        if type(value) is Sealed:
            return value.blob
        if self.bind:
            raise TypeError(
                f"{self.model.__name__}.{self.name} is bound to its row ({', '.join(self.bind)}): "
                "write it through a model instance (save, create, bulk_create) or pass "
                "ttmemory.fields.seal(instance, name, value) to QuerySet.update()"
            )
        sealed = self.seal(value, ())
        return sealed.blob if sealed is not None else None

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        if value is None:
            return None
        if self.bind:
            return Sealed(bytes(value))
        return self.open(bytes(value), ())


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


class EncryptedBinaryField(_EncryptedField):
    """Bytes encrypted at rest (a serialiser's output, such as a LangGraph checkpoint)."""

    description = "Encrypted bytes"

    def to_python(self, value: Any) -> Any:
        if value is None or isinstance(value, bytes):
            return value
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        raise TypeError(f"{self.name} expects bytes, got {type(value).__name__}")

    def to_plaintext(self, value: Any) -> bytes:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise TypeError(f"{self.name} expects bytes, got {type(value).__name__}")
        return bytes(value)

    def from_plaintext(self, data: bytes) -> Any:
        return bytes(data)


def seal(instance: models.Model, name: str, value: Any) -> Sealed | None:
    """``value`` encrypted for ``instance``'s row, for ``QuerySet.update(name=...)``."""
    field = instance._meta.get_field(name)
    if not isinstance(field, _EncryptedField):
        raise TypeError(f"{type(instance).__name__}.{name} is not an encrypted field")
    return field.seal(value, field.binding_of(instance))


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
