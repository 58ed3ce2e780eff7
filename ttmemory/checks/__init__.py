"""System checks: ttmemory.E001-E099 stop start-up, ttmemory.W001-W099 warn.

The face of the package: ``register`` wires every check into Django's framework, with its tags.
The checks live by what they look at: ``configuration`` (settings and backends),
``deployment`` (apps, URLs, database connections, from settings) and ``database`` (what
queries the database).
"""

from __future__ import annotations

from django.core import checks

from ttmemory.checks.configuration import (
    BACKEND_FAMILIES,
    BACKEND_HINT,
    BLIND_KEY_HINT,
    KEY_HINT,
    check_backends,
    check_blind_index_key,
    check_encryption_keys,
    check_event_observers,
    check_jobs,
    check_namespace_resolver,
    check_options,
    check_settings_shape,
)
from ttmemory.checks.database import (
    PGVECTOR_CREATE,
    PGVECTOR_INSTALL,
    PGVECTOR_MOVE,
    check_api_key_grants,
    check_ciphertext_upgrade,
    check_derived_values,
    check_hold_triggers,
    check_partitioned_history,
    check_pgvector,
)
from ttmemory.checks.deployment import (
    API_APPS_HINT,
    API_NAMESPACE,
    POOLER_HINT,
    api_mounted,
    check_api_apps,
    check_pooling,
    check_replicas,
    check_sqlite_transactions,
    pooling_problems,
)

__all__ = [
    "API_APPS_HINT",
    "API_NAMESPACE",
    "BACKEND_FAMILIES",
    "BACKEND_HINT",
    "BLIND_KEY_HINT",
    "KEY_HINT",
    "PGVECTOR_CREATE",
    "PGVECTOR_INSTALL",
    "PGVECTOR_MOVE",
    "POOLER_HINT",
    "api_mounted",
    "check_api_apps",
    "check_api_key_grants",
    "check_backends",
    "check_blind_index_key",
    "check_ciphertext_upgrade",
    "check_derived_values",
    "check_encryption_keys",
    "check_event_observers",
    "check_hold_triggers",
    "check_jobs",
    "check_namespace_resolver",
    "check_options",
    "check_partitioned_history",
    "check_pgvector",
    "check_pooling",
    "check_replicas",
    "check_settings_shape",
    "check_sqlite_transactions",
    "pooling_problems",
    "register",
]


def register() -> None:
    for check in (
        check_settings_shape,
        check_encryption_keys,
        check_blind_index_key,
        check_backends,
        check_event_observers,
        check_namespace_resolver,
        check_options,
        check_jobs,
    ):
        checks.register(check, "ttmemory")
    checks.register(check_api_apps, "ttmemory", checks.Tags.urls)
    # A development SQLite (startproject's db.sqlite3, one runserver) is fine as it is: the
    # warning is for deployments, where concurrent writers meet "database is locked".
    checks.register(check_sqlite_transactions, "ttmemory", deploy=True)
    for check in (check_pooling, check_replicas):
        checks.register(check, "ttmemory")
    # Checks that query the database carry only Django's database tag: they run with
    # `check --database default` and before `migrate`, never for a tag selection alone (on
    # Django 6 a tag selection runs them against every connection).
    for check in (
        check_derived_values,
        check_api_key_grants,
        check_ciphertext_upgrade,
        check_pgvector,
        check_partitioned_history,
        check_hold_triggers,
    ):
        checks.register(check, checks.Tags.database)
