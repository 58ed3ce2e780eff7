"""Checks of the deployment around ttmemory: the API's apps and URLs, SQLite transactions,
connection pooling and read replicas, read from settings (no query). DRF is imported only when
``rest_framework`` is installed.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.db import connections

from ttmemory.conf import app_settings

API_NAMESPACE = "ttmemory-api"
API_APPS_HINT = (
    "pip install 'ttmemory[api]' and add 'rest_framework', 'drf_spectacular' and "
    "'drf_spectacular_sidecar' to INSTALLED_APPS."
)


def api_mounted(urlconf: str | None = None) -> bool:
    """The project's URLconf includes ``ttmemory.api.urls`` (its ``ttmemory-api`` namespace),
    at any depth."""
    from django.urls import URLResolver, get_resolver

    def walk(resolver: URLResolver) -> bool:
        if resolver.namespace == API_NAMESPACE:
            return True
        return any(
            walk(pattern) for pattern in resolver.url_patterns if isinstance(pattern, URLResolver)
        )

    return walk(get_resolver(urlconf))


def check_api_apps(**kwargs: Any) -> list[checks.CheckMessage]:
    """The mounted REST API needs DRF's and drf-spectacular's apps (E070, E071); the docs page
    serves Swagger UI from the sidecar app, else from a CDN (W003).

    A check, not a docs page that renders without them: DRF's browsable pages and error pages
    load their templates from the ``rest_framework`` app as well, so only INSTALLED_APPS cures
    every TemplateDoesNotExist (a 500), and a check says so before the first request.
    """
    if importlib.util.find_spec("rest_framework") is None:
        return []  # the API cannot even be imported: the URLconf's ImportError says so
    try:
        mounted = api_mounted()
    except Exception:  # a broken URLconf: Django's own URL checks report it
        return []
    if not mounted:
        return []
    missing = [
        (app, check_id, page)
        for app, check_id, page in (
            ("rest_framework", "ttmemory.E070", "its browsable pages and the docs/ page"),
            ("drf_spectacular", "ttmemory.E071", "its schema/ and docs/ pages"),
        )
        if not apps.is_installed(app)
    ]
    if missing:
        return [
            checks.Error(
                f"The ttmemory API is mounted but {app!r} is not in INSTALLED_APPS: {page} "
                "answer 500 (TemplateDoesNotExist).",
                hint=API_APPS_HINT,
                id=check_id,
            )
            for app, check_id, page in missing
        ]
    if not apps.is_installed("drf_spectacular_sidecar"):
        return [
            checks.Warning(
                "The ttmemory API's docs/ page loads Swagger UI from a CDN.",
                hint="Add 'drf_spectacular_sidecar' to INSTALLED_APPS (pip install "
                "'ttmemory[api]') to serve it from your static files.",
                id="ttmemory.W003",
            )
        ]
    return []


def check_sqlite_transactions(**kwargs: Any) -> list[checks.CheckMessage]:
    warnings: list[checks.CheckMessage] = []
    for alias in connections:
        conn = connections[alias]
        if (
            conn.vendor == "sqlite"
            and conn.settings_dict.get("OPTIONS", {}).get("transaction_mode") != "IMMEDIATE"
        ):
            warnings.append(
                checks.Warning(
                    f"Database {alias!r} is SQLite without transaction_mode IMMEDIATE.",
                    hint="Set DATABASES[...]['OPTIONS'] = {'transaction_mode': 'IMMEDIATE', "
                    "'timeout': 30} so concurrent writers wait instead of failing with "
                    "'database is locked'.",
                    id="ttmemory.W001",
                )
            )
    return warnings


POOLER_HINT = (
    "Behind a pooler in transaction mode, consecutive transactions of one client run on "
    "different server connections; see the PgBouncer section of docs/scaling.md."
)


def check_pooling(**kwargs: Any) -> list[checks.CheckMessage]:
    """With TTMEMORY["POOLED"]: options of DATABASES that break under transaction pooling."""
    if app_settings.problem("POOLED") is not None or not app_settings.POOLED:
        return []
    return pooling_problems(settings.DATABASES)


def pooling_problems(databases: dict[str, dict[str, Any]]) -> list[checks.CheckMessage]:
    """Prepared statements (W061) and server-side cursors (W062) on a pooled PostgreSQL.

    A named prepared statement lives on one server connection and the client's next
    transaction may run on another ("prepared statement does not exist", or "already exists"
    for a client handed one that has it); Django's server-side cursors (``.iterator()`` outside
    a transaction) outlive the transaction that declared them. Server-side binding alone is
    fine: psycopg then sends unnamed statements, parsed and run in one exchange.
    """
    warnings: list[checks.CheckMessage] = []
    for alias, database in databases.items():
        if database.get("ENGINE") != "django.db.backends.postgresql":
            continue
        if (database.get("TEST") or {}).get("MIRROR"):
            continue  # the mirrored alias's own settings are what connect
        threshold = (database.get("OPTIONS") or {}).get("prepare_threshold")
        if threshold is not None:
            warnings.append(
                checks.Warning(
                    f"Database {alias!r} prepares statements (OPTIONS prepare_threshold = "
                    f"{threshold!r}) but TTMEMORY['POOLED'] says a transaction pooler is in "
                    "front of it: a prepared statement is missing on the next server connection.",
                    hint="Remove 'prepare_threshold' from OPTIONS (Django's default, None, "
                    "prepares nothing). " + POOLER_HINT,
                    id="ttmemory.W061",
                )
            )
        if not database.get("DISABLE_SERVER_SIDE_CURSORS"):
            warnings.append(
                checks.Warning(
                    f"Database {alias!r} uses server-side cursors for QuerySet.iterator() but "
                    "TTMEMORY['POOLED'] says a transaction pooler is in front of it.",
                    hint=f"Set DATABASES[{alias!r}]['DISABLE_SERVER_SIDE_CURSORS'] = True. "
                    + POOLER_HINT,
                    id="ttmemory.W062",
                )
            )
    return warnings


def check_replicas(**kwargs: Any) -> list[checks.CheckMessage]:
    """PRIMARY_DATABASE and READ_REPLICAS name databases (E047); replicas without the router
    read nothing (W063)."""
    found: list[checks.CheckMessage] = []
    for name in ("PRIMARY_DATABASE", "READ_REPLICAS"):
        if app_settings.problem(name) is not None:
            return []  # check_options reports it
    aliases = [app_settings.PRIMARY_DATABASE, *app_settings.READ_REPLICAS]
    unknown = [alias for alias in aliases if alias not in settings.DATABASES]
    if unknown:
        found.append(
            checks.Error(
                f"TTMEMORY names database(s) {', '.join(map(repr, unknown))} that DATABASES "
                "does not define.",
                hint="PRIMARY_DATABASE and READ_REPLICAS are aliases of DATABASES.",
                id="ttmemory.E047",
            )
        )
    router = "ttmemory.routers.ReplicaRouter"
    if app_settings.READ_REPLICAS and router not in getattr(settings, "DATABASE_ROUTERS", []):
        found.append(
            checks.Warning(
                "TTMEMORY['READ_REPLICAS'] is set but no read goes to a replica without "
                f"{router!r} in DATABASE_ROUTERS.",
                hint=f"DATABASE_ROUTERS = [{router!r}] (docs/scaling.md, Read replicas).",
                id="ttmemory.W063",
            )
        )
    return found
