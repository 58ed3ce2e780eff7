"""Querysets compiled to SQL once per database connection, then run again with new values.

Building and compiling a queryset costs far more Python than the statement costs the database
(a session read by id: over ten times more to compile than to run, in ``bench/api_profile.py``).
A ``CompiledQuery`` builds its queryset once per connection with
placeholder values, keeps the SQL with the positions of those values, and later runs that SQL
with the caller's values, converting the rows as the ORM would (``from_db_value`` converters;
model instances by ``Model.from_db``, so encrypted fields open exactly as they do there). The
database is chosen per call by the routers, as the ORM does for a read.

For hot paths only, where the query's shape is fixed (a different shape, such as a LIMIT, is a
different key).
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connections, router
from django.db.models import Model, QuerySet

from ttmemory.fields import open_rows

_CACHE_ATTRIBUTE = "_ttmemory_compiled_queries"
_CACHE_SIZE = 1024  # compiled statements kept per connection
# Placeholder values: the compiled SQL's parameters equal to one of these are the caller's.
_STRING_MARK = "\x00ttmemory-compiled-parameter-"
_INT_BASE = 2_147_480_000  # within every integer field's range, unlike any real constant


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    params: tuple[tuple[bool, Any], ...]  # (is the caller's, name or constant value)
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]
    model: type[Model] | None
    model_slice: tuple[int, int]
    init_list: tuple[str, ...]
    annotations: tuple[tuple[str, int], ...]
    open_plan: Any  # values_list() of an EncryptedQuerySet: its bound fields to open


class CompiledQuery:
    """``build(**values)`` returns a queryset whose parameters include each value as given
    (exact lookups: ``filter(pk=session_id, namespace=namespace)``); values are str or int."""

    def __init__(self, model: type[Model], build: Callable[..., QuerySet[Any]]) -> None:
        self.model = model
        self.build = build

    def _compiled(self, connection: Any, key: Hashable, values: Mapping[str, Any]) -> _Compiled:
        cache: dict[Any, _Compiled] = connection.__dict__.setdefault(_CACHE_ATTRIBUTE, {})
        found = cache.get((self, key))
        if found is None:
            if len(cache) >= _CACHE_SIZE:  # many shapes (say every LIMIT): start again
                cache.clear()
            found = cache[(self, key)] = self._compile(connection, key, values)
        return found

    def _compile(self, connection: Any, key: Hashable, values: Mapping[str, Any]) -> _Compiled:
        marks: dict[Any, str] = {}
        arguments: dict[str, Any] = {}
        for index, (name, value) in enumerate(values.items()):
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise TypeError(f"{name}: a compiled query's values are str or int")
            mark: Any = f"{_STRING_MARK}{index}" if isinstance(value, str) else _INT_BASE + index
            marks[mark] = name
            arguments[name] = mark
        queryset = self.build(key, **arguments)
        compiler = queryset.query.get_compiler(connection=connection)
        sql, raw_params = compiler.as_sql()
        params = []
        used = set()
        for param in raw_params:
            mine = marks.get(param) if isinstance(param, int | str) else None
            if mine is not None:
                used.add(mine)
                params.append((True, mine))
            else:
                params.append((False, param))
        if used != set(values):
            raise ValueError(f"values not found among the query's parameters: {set(values) - used}")
        columns = [column[0] for column in compiler.select[: compiler.col_count]]
        open_plan = getattr(queryset, "_open_plan", None)
        # A bound field's column stays the stored bytes: open_rows() opens it with its row.
        sealed = {position for position, _, _ in open_plan.opens} if open_plan else set()
        converters = tuple(
            (position, tuple(convs), expression)
            for position, (convs, expression) in compiler.get_converters(columns).items()
            if position not in sealed
        )
        model, model_slice, init_list = None, (0, 0), ()
        annotations: tuple[tuple[str, int], ...] = ()
        if compiler.klass_info is not None and queryset._iterable_class.__name__ == "ModelIterable":
            fields = compiler.klass_info["select_fields"]
            start, end = fields[0], fields[-1] + 1
            model = compiler.klass_info["model"]
            model_slice = (start, end)
            init_list = tuple(column[0].target.attname for column in compiler.select[start:end])
            annotations = tuple(compiler.annotation_col_map.items())
        return _Compiled(
            sql, tuple(params), converters, model, model_slice, init_list, annotations, open_plan
        )

    def _execute(
        self, key: Hashable, values: Mapping[str, Any]
    ) -> tuple[_Compiled, Any, list[Any]]:
        alias = router.db_for_read(self.model)
        connection = connections[alias]
        compiled = self._compiled(connection, key, values)
        params = [values[value] if mine else value for mine, value in compiled.params]
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                _native_timestamps(connection, cursor)
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        if compiled.converters:
            rows = [list(row) for row in rows]
            for row in rows:
                for position, convs, expression in compiled.converters:
                    value = row[position]
                    for convert in convs:
                        value = convert(value, expression, connection)
                    row[position] = value
        if compiled.open_plan is not None:
            rows = list(open_rows(compiled.open_plan, rows))
        return compiled, alias, rows

    def rows(self, key: Hashable = None, **values: Any) -> list[Any]:
        """The rows (sequences) of the query, their values converted as the ORM does."""
        return self._execute(key, values)[2]

    def objects(self, key: Hashable = None, **values: Any) -> Iterator[Any]:
        """The model instances of a query that selects them, annotations set as attributes."""
        compiled, alias, rows = self._execute(key, values)
        model = compiled.model
        if model is None:
            raise TypeError("objects() needs a query of model instances")
        start, end = compiled.model_slice
        for row in rows:
            instance = model.from_db(alias, compiled.init_list, row[start:end])
            for name, position in compiled.annotations:
                setattr(instance, name, row[position])
            yield instance


def _native_timestamps(connection: Any, cursor: Any) -> None:
    """psycopg's own timestamptz loader (compiled, with psycopg's C extension) on this cursor
    where it returns what Django's returns: Django's loader, a Python subclass of psycopg's
    Python one, sets the connection's time zone on each value; psycopg's sets the session's,
    the same object (``datetime.timezone.utc``) when both are UTC, as they are with ``USE_TZ``
    and no database ``TIME_ZONE``. Loading a row's timestamps in Python was a visible share of a
    recall's hits read."""
    if connection.timezone is not dt.UTC:
        return
    raw: Any = getattr(cursor, "cursor", None)
    adapters = getattr(raw, "adapters", None)  # psycopg 3's cursor (psycopg 2's has none)
    if adapters is None or raw.connection.info.parameter_status("TimeZone") != "UTC":
        return
    adapters.register_loader(*_psycopg_timestamptz_loader())


@functools.cache
def _psycopg_timestamptz_loader() -> tuple[int, Any]:
    """timestamptz's OID and psycopg's own text loader of it."""
    import psycopg
    from psycopg.pq import Format

    oid = psycopg.adapters.types["timestamptz"].oid
    return oid, psycopg.adapters.get_loader(oid, Format.TEXT)
