"""SQL dialects of recall and search: what PostgreSQL and SQLite spell differently, in one place.

Recall's and search's statements (``candidate_sql``, ``runs``, ``fusion``, the hits read of
``selectors.facts``, episodic search's read of its index in ``episodes``) are written once; a
``Dialect`` supplies the pieces that differ: a list parameter (one array on PostgreSQL, so the
statement text is the same for any length and is prepared once; one mark per value elsewhere),
a table of given rows, membership in a subquery's rows, a float cast, a CTE's materialisation,
a join run once per outer row (``LATERAL`` on PostgreSQL) and the cursor (prepared on
PostgreSQL, ``binding_cursor``). Where pgvector is installed, ``candidate_sql`` adds what only
it can do (vector distance and HNSW search in SQL) to the same statement; elsewhere vectors are
scored in numpy (``vector_cache``). The ORM is not used for these statements: compiling them
cost more than the database took to answer (docs/benchmarks.md, "Recall latency").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import connection

from ttmemory.models.binding import binding_cursor


@dataclass(frozen=True)
class Dialect:
    """How recall's statements spell a list, a float and a subquery's rows on one database."""

    arrays: bool  # PostgreSQL: lists bound as one array parameter

    def any_of(self, column: str, values: Iterable[Any], params: list[Any], *, kind: str) -> str:
        """``column`` is one of ``values`` (appended to ``params``); ``kind``: the SQL type of
        the array on PostgreSQL (``bigint``, ``text``)."""
        values = list(values)
        if self.arrays:
            params.append(array(values, kind))
            return f"{column} = ANY(%s::{kind}[])"
        params.extend(values)
        return f"{column} IN ({', '.join(['%s'] * len(values))})"

    def one_of(
        self, column: str, name: str, values: Iterable[Any], params: dict[str, Any], *, kind: str
    ) -> str:
        """``any_of`` with named parameters (``name``, or ``name_0``... one per value)."""
        values = list(values)
        if self.arrays:
            params[name] = array(values, kind)
            return f"{column} = ANY(%({name})s::{kind}[])"
        params.update((f"{name}_{i}", value) for i, value in enumerate(values))
        marks = ", ".join(f"%({name}_{i})s" for i in range(len(values)))
        return f"{column} IN ({marks})"

    def table(
        self, columns: dict[str, list[Any]], params: dict[str, Any], *, kind: str = "bigint"
    ) -> str:
        """A SELECT of the given rows, one column per entry of ``columns`` (name: its values,
        all of one length, each a parameter): ``unnest`` of one array per column on
        PostgreSQL (the text is the same for any number of rows), ``VALUES`` elsewhere."""
        names = list(columns)
        if self.arrays:
            arrays = []
            for name, values in columns.items():
                params[name] = array(values, kind)
                arrays.append(f"%({name})s::{kind}[]")
            return f"SELECT * FROM unnest({', '.join(arrays)}) AS t({', '.join(names)})"
        rows = list(zip(*columns.values(), strict=True))
        if not rows:  # no rows: a SELECT of the columns that returns none
            return "SELECT " + ", ".join(f"NULL AS {name}" for name in names) + " WHERE 0 = 1"
        marks = []
        for i, row in enumerate(rows):
            for name, value in zip(names, row, strict=True):
                params[f"{name}_{i}"] = value
            marks.append("(" + ", ".join(f"%({name}_{i})s" for name in names) + ")")
        aliases = ", ".join(f"column{i + 1} AS {name}" for i, name in enumerate(names))
        return f"SELECT {aliases} FROM (VALUES {', '.join(marks)})"

    def materialized(self, name: str, body: str) -> str:
        """A CTE computed once, before the statement reads it (PostgreSQL would otherwise
        inline a CTE read once; SQLite materialises one read more than once by itself)."""
        return f"{name} AS MATERIALIZED ({body})" if self.arrays else f"{name} AS ({body})"

    @property
    def then(self) -> str:
        """An inner join whose left side is read first: PostgreSQL plans the order itself;
        SQLite keeps the written order for a ``CROSS JOIN`` (its documented hint), without
        which it drove the keyword scores from every current fact of the namespace."""
        return "JOIN" if self.arrays else "CROSS JOIN"

    def join_each(self, alias: str, table: str, *, where: str, columns: str) -> str:
        """A join of the rows of ``table`` (as ``alias``) that ``where`` names for each outer
        row. PostgreSQL: a ``LATERAL`` subquery (``OFFSET 0`` keeps it one), so each outer row
        is an index lookup and the planner does not read the table's matching rows whole to
        hash-join them; elsewhere a join read after the outer rows (``then``)."""
        if self.arrays:
            return (
                f"CROSS JOIN LATERAL (SELECT {columns} FROM {table} {alias} WHERE {where} "
                f"OFFSET 0) {alias}"
            )
        return f"{self.then} {table} {alias} ON {where}"

    def first_each(
        self,
        name: str,
        values: Iterable[Any],
        params: dict[str, Any],
        *,
        table: str,
        where: str,
        columns: str,
        order: str,
        limit: str,
    ) -> str:
        """A SELECT of ``name`` and ``columns``: for each of ``values``, the first ``limit``
        rows by ``order`` of ``table`` that ``where`` names (``{value}`` in it stands for the
        value), one subquery per value joined by ``UNION ALL``: each an index scan that stops
        at ``limit`` rows. For SQLite, which has no ``LATERAL`` (PostgreSQL's planner chose a
        bitmap scan and a sort for such a subquery: ``episodes`` calls a function there)."""
        parts = []
        for i, value in enumerate(values):
            params[f"{name}_{i}"] = value
            mark = f"%({name}_{i})s"
            parts.append(
                f"SELECT * FROM (SELECT {mark} AS {name}, {columns} FROM {table} "
                f"WHERE {where.format(value=mark)} ORDER BY {order} LIMIT {limit})"
            )
        return " UNION ALL ".join(parts)

    def join_first(self, alias: str, table: str, subquery: str) -> str:
        """A join of the rows of ``table`` (as ``alias``) whose ``id`` the correlated
        ``subquery`` (one column, ``id``, with its ORDER BY and LIMIT) returns for each outer
        row: a ``LATERAL`` subquery on PostgreSQL, an ``id IN`` lookup elsewhere (SQLite has no
        ``LATERAL``; it runs the subquery per outer row and looks each id up)."""
        if self.arrays:
            return f"CROSS JOIN LATERAL ({subquery}) {alias}"
        return f"{self.then} {table} {alias} ON {alias}.id IN ({subquery})"

    def in_rows(self, column: str, subquery: str) -> str:
        """``column`` is in the rows of ``subquery`` (one column). On PostgreSQL as an array
        built once (an InitPlan), so an index scan takes each value: with ``IN`` the planner
        of a generic plan read every posting of the namespace to semi-join them."""
        if self.arrays:
            return f"{column} = ANY(ARRAY({subquery}))"
        return f"{column} IN ({subquery})"

    def float(self, expression: str) -> str:
        """``expression`` as a double precision number."""
        return f"{expression}::float8" if self.arrays else f"CAST({expression} AS REAL)"

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        """A cursor for a read built here: prepared on PostgreSQL with psycopg 3 (planned once
        per connection for every namespace; ``binding_cursor``), Django's own elsewhere."""
        with binding_cursor(prepare=True) as (cursor, _):
            yield cursor


def array(values: Iterable[Any], kind: str) -> Any:
    """An array parameter: integers (``bigint``) in PostgreSQL's text form of an array, which
    the statement's cast reads (psycopg's list dumper, in Python, cost more per recall than the
    server took to read the ids); any other kind as the list itself (psycopg quotes it)."""
    if kind == "bigint":
        return "{" + ",".join(map(str, map(int, values))) + "}"
    return list(values)


POSTGRESQL = Dialect(arrays=True)
PORTABLE = Dialect(arrays=False)


def current() -> Dialect:
    """The dialect of Django's default connection."""
    return POSTGRESQL if connection.vendor == "postgresql" else PORTABLE
