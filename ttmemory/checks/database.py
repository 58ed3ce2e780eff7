"""Checks that query the database: derived values, pgvector, partitions, hold triggers, API
key grants and ciphertext upgrades. They carry only Django's database tag (``register``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connections

from ttmemory.longterm.blind import fact_index_version
from ttmemory.longterm.blind import stale as stale_rows
from ttmemory.models import ApiKey, Fact
from ttmemory.models.ciphertext import ROW_BINDING, CiphertextUpgrade
from ttmemory.models.holds import missing_triggers
from ttmemory.models.partitioning import configured_partitions, message_partitions
from ttmemory.models.vectors import (
    BYTES,
    embedding_column_type,
    pgvector_available,
    pgvector_installed,
    vector_storage,
)


def check_derived_values(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Facts the upgrade has not finished: stale blind index (W040), keyless vectors (W041).

    Runs with ``check --database default`` and before ``migrate``; a database without the
    tables yet, or settings without keys, has nothing to report here.
    """
    warnings: list[checks.CheckMessage] = []
    for alias in databases or ():
        facts = Fact.objects.using(alias)
        try:
            stale = stale_rows(facts, marker=fact_index_version).count()
            keyless = facts.filter(embedding_model__regex=r"^hash-[0-9]+$").count()
        except (DatabaseError, ImproperlyConfigured):
            continue
        if stale:
            warnings.append(
                checks.Warning(
                    f"{stale} facts in database {alias!r} have a blind keyword index written "
                    "with an older scheme, BLIND_INDEX_KEY, term normaliser (stemmer, "
                    "STEMMER_LANGUAGE, NAMESPACE_LANGUAGES) or rule files' slot words and kinds.",
                    hint="Run: python manage.py ttmemory_reindex (resumable), and with the "
                    "HashEmbedder ttmemory_reembed. Facts of the first release are still found "
                    "meanwhile; after a key or normaliser change keyword search misses the "
                    "stale ones until it has run.",
                    id="ttmemory.W040",
                )
            )
        if keyless:
            warnings.append(
                checks.Warning(
                    f"{keyless} facts in database {alias!r} carry vectors of the keyless "
                    "HashEmbedder of the first release: their words can be read back from the "
                    "stored vectors with a dictionary.",
                    hint="Run: python manage.py ttmemory_reembed (resumable); recall ignores "
                    "those vectors meanwhile and finds the facts by keyword.",
                    id="ttmemory.W041",
                )
            )
    return warnings


PGVECTOR_INSTALL = (
    "install pgvector on the database server (Debian/Ubuntu: the postgresql-<version>-pgvector "
    "package from apt.postgresql.org; others: https://github.com/pgvector/pgvector#installation)"
)
PGVECTOR_CREATE = "run CREATE EXTENSION vector; in the database as a superuser"
PGVECTOR_MOVE = "run python manage.py ttmemory_reembed to move the stored vectors to it"


def check_pgvector(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """PostgreSQL without pgvector (W050): vectors as float32 bytes, ranked in numpy.

    Recall stays hybrid (exact cosine similarity in numpy, as on SQLite), but there is no HNSW
    index for large namespaces. Says what is missing: the extension on the server, in the
    database, or the move of a column created before the extension was installed. Silent
    before the first ``migrate`` on a server that has pgvector: the migration installs it.
    """
    warnings: list[checks.CheckMessage] = []
    for alias in databases or ():
        conn = connections[alias]
        if conn.vendor != "postgresql":
            continue
        try:
            if vector_storage(conn) != BYTES:
                continue
            available = pgvector_available(conn)
            installed = pgvector_installed(conn)
            migrated = embedding_column_type(conn) is not None
        except DatabaseError:  # unreachable: Django's own checks and migrate say so
            continue
        if available and not migrated:
            # Before the first migrate (which runs this check): the migration creates the
            # extension itself, and says so if its role may not.
            continue
        if not available:
            missing, steps = (
                "the server has no pgvector extension",
                [
                    PGVECTOR_INSTALL,
                    PGVECTOR_CREATE,
                ],
            )
        elif not installed:
            missing, steps = "the pgvector extension is not installed in it", [PGVECTOR_CREATE]
        else:
            missing, steps = "its fact table was created before pgvector was installed", []
        if migrated:
            steps.append(PGVECTOR_MOVE)
        warnings.append(
            checks.Warning(
                f"Database {alias!r} is PostgreSQL without pgvector: {missing}. Fact "
                "vectors are stored as float32 bytes and ranked in numpy, like on SQLite "
                "(recall stays hybrid and exact, without an HNSW index for large namespaces).",
                hint="To use pgvector: "
                + "; then ".join(steps)
                + ". Or silence this with SILENCED_SYSTEM_CHECKS = ['ttmemory.W050'].",
                id="ttmemory.W050",
            )
        )
    return warnings


def check_partitioned_history(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """PARTITIONED_HISTORY and the message table disagree (W060): the setting is read when the
    table is created, so one set later (or a table too large for the migration) needs the
    conversion command."""
    wanted = configured_partitions()
    warnings: list[checks.CheckMessage] = []
    for alias in databases or ():
        conn = connections[alias]
        if conn.vendor != "postgresql" or wanted is None:
            continue
        try:
            current = message_partitions(conn)
        except DatabaseError:  # unreachable: Django's own checks and migrate say so
            continue
        if current is None or current == wanted:  # not migrated yet, or as asked
            continue
        layout = f"is partitioned into {current}" if current else "is not partitioned"
        warnings.append(
            checks.Warning(
                f"TTMEMORY['PARTITIONED_HISTORY'] asks for {wanted} partitions, but the "
                f"message table of database {alias!r} {layout}.",
                hint=f"Run python manage.py ttmemory_partition --database {alias} (appends "
                "wait while it copies; see docs/scaling.md, 'Partitioned history').",
                id="ttmemory.W060",
            )
        )
    return warnings


def check_hold_triggers(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Legal-hold triggers missing where their migration ran (E072): SQLite drops a table's
    triggers when a migration rebuilds it, and a hold is only as good as its triggers."""
    from django.db.migrations.recorder import MigrationRecorder

    errors: list[checks.CheckMessage] = []
    for alias in databases or ():
        conn = connections[alias]
        try:
            applied = MigrationRecorder(conn).applied_migrations()
            if not any(
                app == "ttmemory" and name.endswith("_legal_hold_triggers") for app, name in applied
            ):
                continue
            missing = missing_triggers(conn)
        except DatabaseError:  # unreachable or not migrated: migrate says so
            continue
        if missing:
            errors.append(
                checks.Error(
                    f"Legal-hold triggers missing on database {alias!r}: {', '.join(missing)}; "
                    "held rows can be deleted.",
                    hint="Create them again: ttmemory.models.holds.trigger_sql(vendor) (a "
                    "migration that rebuilt a protected SQLite table must run it after).",
                    id="ttmemory.E072",
                )
            )
    return errors


def check_api_key_grants(
    *, databases: Sequence[str] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """Active keys holding stored prefix grants that do not end at a separator: they grant
    nothing (``ApiKey.grants``), so say which, and how to replace them. Reads the databases
    Django names (``migrate``, ``check --database default``), like Django's own database checks.
    """
    found: list[checks.CheckMessage] = []
    for alias in databases or ():
        try:
            keys = list(ApiKey.objects.using(alias).active().order_by("pk"))
        except DatabaseError:  # not migrated yet: nothing stored to check
            continue
        found.extend(
            checks.Warning(
                f"API key {key.prefix!r} ({key.name}) has prefix grants that do not end at a "
                f"separator and therefore grant nothing: {', '.join(map(repr, unsafe))}.",
                hint="A prefix grant ends with one of / : . - _ and then '*' ('acme/*', "
                "'user-1:*'), so 'user-1*' cannot reach 'user-10'. Create a key with the "
                "grants you mean and revoke this one.",
                id="ttmemory.W020",
            )
            for key, unsafe in ((key, key.unsafe_grants) for key in keys)
            if unsafe
        )
    return found


def check_ciphertext_upgrade(**kwargs: Any) -> list[checks.CheckMessage]:
    """W010 while values encrypted before row binding remain (one indexed query per database)."""
    warnings: list[checks.CheckMessage] = []
    for alias in kwargs.get("databases") or []:
        try:
            pending = (
                CiphertextUpgrade.objects.using(alias)
                .filter(name=ROW_BINDING, finished_at__isnull=True)
                .exists()
            )
        except DatabaseError:  # not migrated yet: nothing stored, nothing to upgrade
            continue
        if pending:
            warnings.append(
                checks.Warning(
                    f"Database {alias!r} holds values encrypted before row binding; they are "
                    "still read, and refused once the upgrade finishes.",
                    hint="Run: python manage.py ttmemory_rebind (batched, resumable).",
                    id="ttmemory.W010",
                )
            )
    return warnings
