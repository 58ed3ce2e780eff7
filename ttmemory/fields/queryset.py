"""Reading row-bound encrypted fields in bulk: ``EncryptedQuerySet`` opens every row as it is read.

``values()`` and ``values_list()`` select the binding columns a bound field needs too (and drop
them from what they return), ``only()`` keeps them, and ``update()`` seals a plain value for
each row, so a read or a write of encrypted content stays one query.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any, TypeVar

from django.core.exceptions import FieldDoesNotExist
from django.db import models, transaction
from django.db.models.query import BaseIterable, ValuesIterable
from django.db.models.sql.constants import MULTI
from django.db.models.utils import create_namedtuple_class

from ttmemory.crypto import FORMAT_VERSION, get_keyring
from ttmemory.exceptions import DecryptionError

try:  # orjson decodes faster (bench/), and reads of long histories are the hot path
    import orjson

    _fast_loads: Any = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency, but stay importable without it
    _fast_loads = json.loads

from ttmemory.fields.encrypted import Sealed, _EncryptedField

_M = TypeVar("_M", bound=models.Model)


class _OpenPlan:
    """How to open the bound fields of one ``values()`` / ``values_list()`` row.

    ``names`` is what is selected: the caller's names, then any binding column they did not ask
    for (``extra``). ``opens`` holds, per bound field asked for, its position (or name), the
    field, and the positions (or names) of its binding columns.
    """

    __slots__ = ("names", "opens", "row_class", "shape", "width")

    def __init__(self, names: list[Any], width: int, opens: list[Any]) -> None:
        self.names = names
        self.width = width
        self.opens = opens
        self.shape = "tuple"
        self.row_class: Any = None


def _open_plan(model: Any, requested: Sequence[Any], *, by_name: bool) -> _OpenPlan | None:
    """None when no bound encrypted field of ``model`` is asked for (nothing to do)."""
    meta = model._meta
    names: list[Any] = list(requested)
    resolved: list[str | None] = []
    for name in names:
        field = None
        if isinstance(name, str) and "__" not in name:
            try:
                field = meta.get_field("id" if name == "pk" else name)
            except FieldDoesNotExist:
                field = None
        resolved.append(getattr(field, "attname", None))
    opens = []
    width = len(names)
    for position, attname in enumerate(resolved[:width]):
        field = meta.get_field(attname) if attname else None
        if not isinstance(field, _EncryptedField) or not field.bind:
            continue
        binding = []
        for bound in field.bind:
            if bound not in resolved:
                names.append(bound)
                resolved.append(bound)
            binding.append(resolved.index(bound))
        if by_name:
            opens.append((names[position], field, tuple(names[i] for i in binding)))
        else:
            opens.append((position, field, tuple(binding)))
    if not opens:
        return None
    return _OpenPlan(names, width, opens)


def _raw_rows(queryset: Any, iterable: BaseIterable, plan: _OpenPlan) -> Iterator[Any]:
    """The query's rows with every converter applied except the bound fields' own: their
    column arrives as the stored bytes, to be opened here without a ``Sealed`` in between.

    What ``SQLCompiler.results_iter`` does, minus those converters; a page of messages then
    needs no converter at all, so the rows come straight from the cursor.
    """
    compiler = queryset.query.get_compiler(queryset.db)
    results = compiler.execute_sql(
        MULTI, chunked_fetch=iterable.chunked_fetch, chunk_size=iterable.chunk_size
    )
    skip = {position for position, _, _ in plan.opens}
    fields = [column[0] for column in compiler.select[: compiler.col_count]]
    converters = {
        position: converter
        for position, converter in compiler.get_converters(fields).items()
        if position not in skip
    }
    rows: Iterator[Any] = chain.from_iterable(results)
    if converters:
        rows = compiler.apply_converters(rows, converters)
    return rows


def row_opener(field: _EncryptedField, binding: tuple[int, ...]) -> Callable[[Any, Any], Any]:
    """A function of (stored bytes, raw row) to the opened value of ``field`` (None stays
    None); the row's binding columns are at the positions ``binding``."""
    keyring = get_keyring()
    decrypt = keyring.decrypt
    row_aad = field._row_aad
    from_plaintext = field.from_plaintext
    open_ = field.open
    pick = itemgetter(*binding) if len(binding) > 1 else (lambda row: (row[binding[0]],))

    def opened(blob: Any, row: Any) -> Any:
        if blob is None:
            return None
        if type(blob) is not bytes:
            blob = bytes(blob)
        if not blob or blob[0] != FORMAT_VERSION:
            return open_(blob, pick(row))  # the old format, or not ours: the full checks
        try:
            return from_plaintext(decrypt(blob, row_aad(pick(row))))
        except DecryptionError:
            return open_(blob, pick(row))  # again, for the error naming the field

    return opened


class _OpenedValuesListIterable(BaseIterable):
    """``values_list()`` rows with bound fields opened and the extra binding columns dropped."""

    def __iter__(self) -> Iterator[Any]:
        queryset = self.queryset
        plan: _OpenPlan = queryset._open_plan  # type: ignore[attr-defined]
        return open_rows(plan, _raw_rows(queryset, self, plan))


def open_rows(plan: _OpenPlan, rows: Iterable[Any]) -> Iterator[Any]:
    """``values_list()`` rows of ``plan`` (converted, except the bound fields' columns, which
    hold the stored bytes) with the bound fields opened and the binding columns dropped."""
    width, shape = plan.width, plan.shape
    openers = [(position, row_opener(field, binding)) for position, field, binding in plan.opens]
    if shape == "flat":  # message_recent: one bound column and its binding, nothing else
        opened = openers[0][1]
        for row in rows:
            yield opened(row[0], row)
        return
    row_class = plan.row_class
    for row in rows:
        out = list(row[:width])
        for position, opened in openers:
            out[position] = opened(out[position], row)
        yield row_class(*out) if row_class is not None else tuple(out)


class _OpenedValuesIterable(BaseIterable):
    """``values()`` dicts with bound fields opened and the extra binding columns dropped."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        queryset = self.queryset
        plan: _OpenPlan = queryset._open_plan  # type: ignore[attr-defined]
        extra = plan.names[plan.width :]
        for row in ValuesIterable(
            queryset, chunked_fetch=self.chunked_fetch, chunk_size=self.chunk_size
        ):
            for name, field, binding in plan.opens:
                value = row[name]
                if value is not None:
                    row[name] = field.open(value.blob, [row[b] for b in binding])
            for name in extra:
                del row[name]
            yield row


class EncryptedQuerySet(models.QuerySet[_M]):
    """The QuerySet of a model with bound encrypted fields: ``values()``, ``values_list()`` and
    ``only()`` select the binding columns a bound field needs, so reads stay one query."""

    _open_plan: _OpenPlan | None = None

    def _clone(self) -> Any:
        clone = super()._clone()  # type: ignore[misc]  # private in the stubs, stable in Django
        clone._open_plan = self._open_plan
        return clone

    def _all_names(self) -> list[str]:
        return [f.attname for f in self.model._meta.concrete_fields]

    def values_list(self, *fields: Any, flat: bool = False, named: bool = False) -> Any:
        requested = fields or (tuple(self._all_names()) if not self.query.annotations else ())
        plan = _open_plan(self.model, requested, by_name=False) if requested else None
        if plan is None:
            return super().values_list(*fields, flat=flat, named=named)
        if flat and (named or len(fields) > 1):
            return super().values_list(*fields, flat=flat, named=named)  # Django's TypeError
        clone: Any = super().values_list(*plan.names)
        if flat:
            plan.shape = "flat"
        elif named:
            plan.row_class = create_namedtuple_class(*[str(n) for n in plan.names[: plan.width]])
        clone._open_plan = plan
        clone._iterable_class = _OpenedValuesListIterable
        return clone

    def values(self, *fields: Any, **expressions: Any) -> Any:
        requested = fields or (tuple(self._all_names()) if not self.query.annotations else ())
        plan = _open_plan(self.model, requested, by_name=True) if requested else None
        if plan is None or any(not isinstance(n, str) for n in plan.names):
            return super().values(*fields, **expressions)
        clone: Any = super().values(*plan.names, **expressions)
        clone._open_plan = plan
        clone._iterable_class = _OpenedValuesIterable
        return clone

    def update(self, **kwargs: Any) -> int:
        """Django's ``update()``; a plain value for a bound field is sealed for each row.

        That costs a SELECT ... FOR UPDATE of the rows' binding columns and one UPDATE per row;
        services that know the row pass ``seal(instance, name, value)`` instead (one UPDATE).
        """
        meta = self.model._meta
        bound: dict[str, _EncryptedField] = {}
        for name, value in kwargs.items():
            field = meta.get_field(name)
            if (
                isinstance(field, _EncryptedField)
                and field.bind
                and value is not None
                and type(value) is not Sealed
            ):
                bound[name] = field
        if not bound:
            return super().update(**kwargs)
        names = list(dict.fromkeys(b for field in bound.values() for b in field.bind))
        updated = 0
        with transaction.atomic(using=self.db, savepoint=False):
            for row in self.select_for_update().values_list("pk", *names):
                values = dict(zip(names, row[1:], strict=True))
                sealed = {
                    name: field.seal(kwargs[name], [values[b] for b in field.bind])
                    for name, field in bound.items()
                }
                updated += self.filter(pk=row[0]).update(**{**kwargs, **sealed})
        return updated

    def only(self, *fields: Any) -> Any:
        meta = self.model._meta
        wanted = list(fields)
        for name in fields:
            try:
                field = meta.get_field(name)
            except FieldDoesNotExist:
                continue
            if isinstance(field, _EncryptedField):
                wanted.extend(b for b in field.bind if b not in wanted)
        return super().only(*wanted)
