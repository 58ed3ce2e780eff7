"""SQL dialects of recall and search: what PostgreSQL and SQLite spell differently, in one place.

Recall's and search's statements (``candidates``, ``fusion``, the hits read of
``selectors.facts``) are written once; a ``Dialect`` supplies the pieces that differ: a list
parameter (one array on PostgreSQL, so the statement text is the same for any length and is
prepared once; one mark per value elsewhere), membership in a subquery's rows, a float cast,
and the cursor (prepared on PostgreSQL, ``binding_cursor``). Where pgvector is installed,
``candidates`` adds what only it can do (vector distance and HNSW search in SQL) to the same
statement; elsewhere vectors are scored in numpy (``vector_cache``). The ORM is not used for
these statements: compiling them cost more than the database took to answer (docs/benchmarks.md,
"Recall latency").
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
            params.append(values)
            return f"{column} = ANY(%s::{kind}[])"
        params.extend(values)
        return f"{column} IN ({', '.join(['%s'] * len(values))})"

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


POSTGRESQL = Dialect(arrays=True)
PORTABLE = Dialect(arrays=False)


def current() -> Dialect:
    """The dialect of Django's default connection."""
    return POSTGRESQL if connection.vendor == "postgresql" else PORTABLE
