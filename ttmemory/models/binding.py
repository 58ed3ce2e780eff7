"""Cursors whose parameters the server binds (the write path's batches and its newest-page read),
and transactions for derived rows that need not wait for the WAL flush."""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from django.db import connection, transaction

from ttmemory.conf import app_settings


@contextmanager
def binding_cursor(
    *, binary_results: bool = False, prepare: bool = False
) -> Iterator[tuple[Any, str]]:
    """A Django cursor whose parameters travel apart from the SQL, and its placeholder.

    On psycopg 3 the parameters are bound by the server (``%b``: binary, no text escaping),
    whatever ``server_side_binding`` says: with Django's default client-side binding, psycopg
    escapes every value into the SQL text in Python, which cost more than the server's work on
    a batch append (profiled: text escaping of the 10 arrays of 100 messages about eight times
    the binary binding). Without ``prepare``, an unnamed statement (PgBouncer's transaction
    pooling is fine), prepared only if ``prepare_threshold`` says so. ``binary_results``: rows
    come in binary (bytea as bytes, no hex to decode). Elsewhere (psycopg 2, SQLite) the
    connection's own cursor, ``%s`` and text results.

    ``prepare``: the statement is prepared on its connection on first use and run by name
    afterwards, whatever ``prepare_threshold`` says, unless a transaction pooler may be in front
    (a named statement lives on one server connection; see ``_may_prepare``). For the append
    statements: parsing and planning their CTE were most of the server's work per append when
    not prepared (measured: server backend CPU per ``message_add``).
    """
    if not server_binds():
        with connection.cursor() as own:
            yield own, "%s"
        return
    import psycopg  # psycopg 3 is the connection's own driver here

    raw = connection.connection
    if not getattr(raw, "_ttmemory_vectors", False):  # once per connection: a type of its own
        for dumper in _vector_dumpers():
            raw.adapters.register_dumper(BinaryVector, dumper)
        raw._ttmemory_vectors = True
    preparing = prepare and _may_prepare()
    cursor: Any = _preparing_cursor_class()(raw) if preparing else psycopg.Cursor(raw)
    if binary_results:
        cursor.format = psycopg.pq.Format.BINARY
    # Wrapped as Django wraps its own cursors: database errors become Django's, and
    # execute_wrapper / query logging see the statement.
    wrap: Any = connection._prepare_cursor  # type: ignore[attr-defined]
    with wrap(cursor) as wrapped:
        yield wrapped, "%b"


def server_binds() -> bool:
    """Whether ``binding_cursor`` binds parameters on the server here (PostgreSQL through
    psycopg 3), and so takes binary ones (``%b``), such as a ``BinaryVector``."""
    if connection.vendor != "postgresql":
        return False
    connection.ensure_connection()
    return type(connection.connection).__module__.partition(".")[0] == "psycopg"


class BinaryVector:
    """A query vector as a ``binding_cursor``'s ``%b`` parameter, in pgvector's binary form
    (``vector_send``'s: the dimensions, an unused int16, the big-endian float4s): the float32
    values pgvector stores, as its text form would give them. Sent without a type, the server
    takes it as the ``vector`` its cast in the statement names (``%(vec)b::vector``). Formatting
    the text form's 384 numbers in Python, and parsing them on the server, cost a recall more."""

    __slots__ = ("data",)

    def __init__(self, values: Any) -> None:
        floats = np.asarray(values, dtype=">f4")
        self.data = struct.pack(">HH", len(floats), 0) + floats.tobytes()

    def text(self) -> str:
        """pgvector's text form of the same values (for a statement logged with its values)."""
        values = np.frombuffer(self.data, dtype=">f4", offset=4).tolist()
        return "[" + ",".join(["%.9g"] * len(values)) % tuple(values) + "]"


@functools.cache
def _vector_dumpers() -> tuple[Any, Any]:
    """``BinaryVector``'s dumpers: binary, as bound; text, for Django's statement log (its
    ``last_executed_query`` composes the values into the SQL client-side)."""
    import psycopg

    class BinaryVectorDumper(psycopg.adapt.Dumper):
        format = psycopg.pq.Format.BINARY
        oid = 0  # unknown: the statement's cast gives it its type (pgvector's OID varies)

        def dump(self, obj: Any) -> bytes:
            return bytes(obj.data)

    class BinaryVectorTextDumper(psycopg.adapt.Dumper):
        oid = 0

        def dump(self, obj: Any) -> bytes:
            return obj.text().encode()

    return BinaryVectorDumper, BinaryVectorTextDumper


def _may_prepare() -> bool:
    """Whether ttmemory may prepare its own statements on the default connection.

    Not when ``TTMEMORY["POOLED"]`` says a transaction pooler is in front, nor when the
    database entry looks set up for one as Django's documentation sets it up for PgBouncer's
    transaction mode (``DISABLE_SERVER_SIDE_CURSORS``), nor when its ``OPTIONS`` turn
    preparing off explicitly (``"prepare_threshold": None``): a project that did either
    before ``POOLED`` existed keeps working behind its pooler.
    """
    if app_settings.POOLED:
        return False
    database = connection.settings_dict
    if database.get("DISABLE_SERVER_SIDE_CURSORS"):
        return False
    options = database.get("OPTIONS") or {}
    return not ("prepare_threshold" in options and options["prepare_threshold"] is None)


@functools.cache
def _preparing_cursor_class() -> Any:
    import psycopg

    class PreparingCursor(psycopg.Cursor):
        """Runs every statement prepared (``prepare=True``), also on a connection whose
        ``prepare_threshold`` is None (Django's default), which psycopg reads as "never": the
        threshold is lifted for this one execution, so nothing else on the connection is
        ever prepared."""

        def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
            conn = self.connection
            kwargs["prepare"] = True
            if conn.prepare_threshold is not None:
                return super().execute(query, params, **kwargs)
            conn.prepare_threshold = 1 << 62  # no count reaches it: only prepare=True
            try:
                return super().execute(query, params, **kwargs)
            finally:
                conn.prepare_threshold = None

    return PreparingCursor


@contextmanager
def derived_write() -> Iterator[None]:
    """``transaction.atomic()`` for rows derived from others (index postings, recall counts):
    on PostgreSQL its commit does not wait for the WAL flush.

    A crash can lose only such a transaction, and whatever derives the rows does so again (the
    index job re-indexes past its mark; recall counts are statistics). Inside a caller's
    transaction it is a savepoint and changes nothing: that commit is the caller's, and may
    hold rows that must be durable.
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit = off")
        yield
