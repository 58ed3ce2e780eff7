"""Key rotation: re-encrypt every encrypted column with the primary key, in resumable batches."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import connection, models, transaction

from ttmemory.crypto import get_keyring, key_id_of
from ttmemory.fields import _EncryptedField


@dataclass
class RotationStats:
    """Per table: rows scanned, values re-encrypted, values already on the primary key."""

    table: str
    scanned: int = 0
    rotated: int = 0
    current: int = 0


def encrypted_columns() -> Iterator[tuple[type[models.Model], list[_EncryptedField]]]:
    """Every ttmemory model with its encrypted fields."""
    for model in apps.get_app_config("ttmemory").get_models():
        fields = [f for f in model._meta.concrete_fields if isinstance(f, _EncryptedField)]
        if fields:
            yield model, fields


def count_rows(model: type[models.Model]) -> int:
    return model._default_manager.count()


def rotate_model(
    model: type[models.Model],
    fields: list[_EncryptedField],
    *,
    batch_size: int,
    on_batch: Callable[[int], None] | None = None,
) -> RotationStats:
    """Re-encrypt ``fields`` of every row whose value is not under the primary key.

    Reads raw ciphertext (no ORM decryption), walks the primary key in batches of
    ``batch_size``, one transaction per batch. An update is a compare-and-set on the old bytes,
    so a value rewritten concurrently (already under the primary key) is left alone. Stopping
    at any point is safe; running again skips what is done.
    """
    keyring = get_keyring()
    primary = keyring.primary_key_id
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    pk = quote(_column(model._meta.pk))
    columns = ", ".join(quote(_column(f)) for f in fields)
    stats = RotationStats(table=model._meta.db_table)
    last_pk: Any = None
    while True:
        where = f"WHERE {pk} > %s " if last_pk is not None else ""
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {pk}, {columns} FROM {table} {where}ORDER BY {pk} LIMIT %s",
                ([last_pk] if last_pk is not None else []) + [batch_size],
            )
            rows = cursor.fetchall()
            for row in rows:
                row_pk, values = row[0], row[1:]
                for field, value in zip(fields, values, strict=True):
                    if value is None:
                        continue
                    old = bytes(value)
                    if key_id_of(old) == primary:
                        stats.current += 1
                        continue
                    aad = field.associated_data
                    new = keyring.encrypt(keyring.decrypt(old, aad), aad)
                    column = quote(_column(field))
                    cursor.execute(
                        f"UPDATE {table} SET {column} = %s WHERE {pk} = %s AND {column} = %s",
                        [new, row_pk, old],
                    )
                    stats.rotated += cursor.rowcount
        if not rows:
            break
        stats.scanned += len(rows)
        last_pk = rows[-1][0]
        if on_batch is not None:
            on_batch(len(rows))
    return stats


def _column(field: Any) -> str:
    column = field.column
    if not column:
        raise ValueError(f"{field} has no database column")
    return str(column)
