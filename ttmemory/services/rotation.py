"""Re-encryption in resumable batches: key rotation, and the upgrade to row-bound ciphertext."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import connection, models, transaction
from django.utils import timezone

from ttmemory.crypto import FORMAT_VERSION, LEGACY_FORMAT_VERSION, get_keyring, key_id_of
from ttmemory.fields import _EncryptedField
from ttmemory.models.ciphertext import ROW_BINDING, CiphertextUpgrade, reset_legacy_format_cache
from ttmemory.models.holds import HOLD_TABLE, PROTECTED


@dataclass
class RotationStats:
    """Per table: rows scanned, values re-encrypted (of which moved from the format before row
    binding: ``rebound``), values left as they were."""

    table: str
    scanned: int = 0
    rotated: int = 0
    current: int = 0
    rebound: int = 0
    held: int = 0  # values under legal hold, left as they are (rotate them after the hold)


def encrypted_columns() -> Iterator[tuple[type[models.Model], list[_EncryptedField]]]:
    """Every ttmemory model with its encrypted fields."""
    for model in apps.get_app_config("ttmemory").get_models():
        fields = [f for f in model._meta.concrete_fields if isinstance(f, _EncryptedField)]
        if fields:
            yield model, fields


def count_rows(model: type[models.Model], *, after: Any = None) -> int:
    queryset = model._default_manager.all()
    if after is not None:
        queryset = queryset.filter(pk__gt=after)
    return queryset.count()


def rotate_model(
    model: type[models.Model],
    fields: list[_EncryptedField],
    *,
    batch_size: int,
    on_batch: Callable[[int], None] | None = None,
    legacy_only: bool = False,
    start_after: Any = None,
    on_checkpoint: Callable[[Any], None] | None = None,
) -> RotationStats:
    """Re-encrypt ``fields`` of every row, in the current format, with the primary key.

    A value is rewritten when it is in the format before row binding, or (unless
    ``legacy_only``) under another key than the primary. Reads raw ciphertext with each row's
    binding columns (no ORM decryption), walks the primary key from ``start_after`` in batches
    of ``batch_size``, one transaction per batch, and reports the last primary key of each
    committed batch to ``on_checkpoint``. An update is a compare-and-set on the old bytes, so a
    value rewritten concurrently is left alone. Stopping at any point is safe; running again
    skips what is done. DecryptionError when a value fails authentication (it is not skipped:
    a value that cannot be read must be looked at, not silently kept).
    """
    keyring = get_keyring()
    primary = keyring.primary_key_id
    quote = connection.ops.quote_name
    meta = model._meta
    table = quote(meta.db_table)
    pk = quote(_column(meta.pk))
    binding_names = list(dict.fromkeys(name for f in fields for name in f.bind))
    binding_columns = [_column(meta.get_field(name)) for name in binding_names]
    positions = {f.name: [binding_names.index(name) for name in f.bind] for f in fields}
    selected = ", ".join(
        [pk, *(quote(c) for c in binding_columns), *(quote(_column(f)) for f in fields)]
    )
    width = len(binding_columns)
    stats = RotationStats(table=meta.db_table)
    last_pk: Any = start_after
    while True:
        where = f"WHERE {pk} > %s " if last_pk is not None else ""
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {selected} FROM {table} {where}ORDER BY {pk} LIMIT %s",
                ([last_pk] if last_pk is not None else []) + [batch_size],
            )
            rows = cursor.fetchall()
            held = _held_pks(cursor, meta.db_table, pk, [row[0] for row in rows])
            for row in rows:
                row_pk, binding, values = row[0], row[1 : 1 + width], row[1 + width :]
                for field, value in zip(fields, values, strict=True):
                    if value is None:
                        continue
                    old = bytes(value)
                    legacy = old[0] == LEGACY_FORMAT_VERSION
                    if not legacy and (legacy_only or key_id_of(old) == primary):
                        stats.current += 1
                        continue
                    if row_pk in held:  # the hold's triggers refuse rewriting it
                        stats.held += 1
                        continue
                    aad = field.row_aad([binding[i] for i in positions[field.name]])
                    plaintext = keyring.decrypt(old, field.associated_data if legacy else aad)
                    new = keyring.encrypt(plaintext, aad)
                    assert new[0] == FORMAT_VERSION
                    column = quote(_column(field))
                    cursor.execute(
                        f"UPDATE {table} SET {column} = %s WHERE {pk} = %s AND {column} = %s",
                        [new, row_pk, old],
                    )
                    stats.rotated += cursor.rowcount
                    stats.rebound += cursor.rowcount if legacy else 0
        if not rows:
            break
        stats.scanned += len(rows)
        last_pk = rows[-1][0]
        if on_checkpoint is not None:
            on_checkpoint(last_pk)
        if on_batch is not None:
            on_batch(len(rows))
    return stats


def rebind_upgrade() -> CiphertextUpgrade | None:
    """The pending row-binding upgrade, or None when there is nothing to upgrade."""
    return CiphertextUpgrade.objects.filter(name=ROW_BINDING, finished_at__isnull=True).first()


def rebind_checkpoint(upgrade: CiphertextUpgrade | None, table: str, last_pk: Any) -> None:
    """Record that ``table`` is upgraded up to ``last_pk`` (what a resumed run skips)."""
    if upgrade is None:
        return
    upgrade.progress[table] = last_pk
    CiphertextUpgrade.objects.filter(pk=upgrade.pk).update(progress=upgrade.progress)


def rebind_finish(upgrade: CiphertextUpgrade | None) -> None:
    """Mark the upgrade finished: from now on values of the old format are refused."""
    if upgrade is not None:
        CiphertextUpgrade.objects.filter(pk=upgrade.pk).update(finished_at=timezone.now())
    reset_legacy_format_cache()


def _held_pks(cursor: Any, table: str, pk: str, pks: list[Any]) -> set[Any]:
    """Which of ``pks`` of ``table`` a legal hold protects (the triggers' own rule)."""
    spec = next((spec for spec in PROTECTED if spec.table == table), None)
    if spec is None or not pks:
        return set()
    scope = "h.session_id IS NULL"
    if spec.session_column is not None:
        scope = f"(h.session_id IS NULL OR h.session_id = t.{spec.session_column})"
    marks = ", ".join(["%s"] * len(pks))
    cursor.execute(
        f"SELECT t.{pk} FROM {connection.ops.quote_name(table)} t WHERE t.{pk} IN ({marks}) "
        f"AND EXISTS (SELECT 1 FROM {HOLD_TABLE} h WHERE h.namespace = t.namespace AND {scope})",
        pks,
    )
    return {row[0] for row in cursor.fetchall()}


def _column(field: Any) -> str:
    column = field.column
    if not column:
        raise ValueError(f"{field} has no database column")
    return str(column)
