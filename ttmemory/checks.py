"""System checks: ttmemory.E001-E099 stop start-up, ttmemory.W001-W099 warn.

Settings are checked by the rules declared with them in ``ttmemory.conf`` (one place); this
module turns a broken rule into an error with a hint, and loads each backend family once to
prove it can be built. DRF is imported only when ``rest_framework`` is installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connections
from django.utils.module_loading import import_string

from ttmemory import conversation
from ttmemory.backends import load_backend
from ttmemory.backends.embedders import Embedder
from ttmemory.backends.events import EventObserver
from ttmemory.backends.llm import LLM
from ttmemory.backends.locks import SessionLock
from ttmemory.conf import DEFAULTS, SETTINGS, InvalidSetting, app_settings
from ttmemory.crypto import Keyring
from ttmemory.exceptions import EncryptionKeyError
from ttmemory.longterm.blind import parse_blind_key
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

KEY_HINT = (
    "Set TTMEMORY['ENCRYPTION_KEYS'] = ['k1:<base64 of 32 random bytes>'] or the "
    "TTMEMORY_ENCRYPTION_KEYS environment variable; print one with: "
    "python -c 'from ttmemory.crypto import generate_key; print(generate_key())'"
)
BLIND_KEY_HINT = (
    "Set TTMEMORY['BLIND_INDEX_KEY'] (or TTMEMORY_BLIND_INDEX_KEY) to base64 of 32 random "
    "bytes, different from the encryption keys: python -c 'import base64, os; "
    "print(base64.urlsafe_b64encode(os.urandom(32)).decode())'"
)
BACKEND_HINT = "TTMEMORY[{name!r}] = {{'BACKEND': 'dotted.path.Class', 'OPTIONS': {{...}}}}"
# Backend families holding one backend: (setting, base class, check id).
BACKEND_FAMILIES: tuple[tuple[str, type, str], ...] = (
    ("EMBEDDER", Embedder, "ttmemory.E030"),
    ("LOCK", SessionLock, "ttmemory.E030"),
    ("LLM", LLM, "ttmemory.E031"),
)


def _setting_error(name: str, problem: InvalidSetting) -> checks.Error:
    hint = problem.hint or f"Fix or remove TTMEMORY[{name!r}]; the default is {DEFAULTS[name]!r}."
    return checks.Error(f"TTMEMORY[{name!r}] {problem.problem}.", hint=hint, id=problem.check_id)


def check_settings_shape(**kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    raw = getattr(settings, "TTMEMORY", None)
    if raw is not None and not isinstance(raw, dict):
        return [
            checks.Error(
                "settings.TTMEMORY must be a dict.",
                hint="TTMEMORY = {'ENCRYPTION_KEYS': [...], ...}",
                id="ttmemory.E010",
            )
        ]
    unknown = sorted(set(raw or {}) - set(DEFAULTS))
    if unknown:
        errors.append(
            checks.Error(
                f"Unknown TTMEMORY setting(s): {', '.join(unknown)}.",
                hint=f"Valid settings: {', '.join(sorted(DEFAULTS))}.",
                id="ttmemory.E011",
            )
        )
    return errors


def check_encryption_keys(**kwargs: Any) -> list[checks.CheckMessage]:
    problem = app_settings.problem("ENCRYPTION_KEYS")
    if problem is not None:
        return [
            checks.Error(
                f"TTMEMORY['ENCRYPTION_KEYS'] {problem.problem}.",
                hint=KEY_HINT,
                id=problem.check_id,
            )
        ]
    entries = app_settings.ENCRYPTION_KEYS
    if not entries:
        return [
            checks.Error(
                "No ttmemory encryption key is configured.", hint=KEY_HINT, id="ttmemory.E001"
            )
        ]
    try:
        Keyring.from_entries(entries)
    except EncryptionKeyError as exc:
        return [
            checks.Error(
                f"Malformed ttmemory encryption key: {exc}.", hint=KEY_HINT, id="ttmemory.E002"
            )
        ]
    return []


def check_blind_index_key(**kwargs: Any) -> list[checks.CheckMessage]:
    problem = app_settings.problem("BLIND_INDEX_KEY")
    if problem is not None:
        return [
            checks.Error(
                f"TTMEMORY['BLIND_INDEX_KEY'] {problem.problem}.",
                hint=BLIND_KEY_HINT,
                id=problem.check_id,
            )
        ]
    value = app_settings.BLIND_INDEX_KEY
    if not value:
        return [
            checks.Error(
                "No ttmemory blind index key is configured.",
                hint=BLIND_KEY_HINT,
                id="ttmemory.E003",
            )
        ]
    try:
        parse_blind_key(value)
    except ValueError as exc:
        return [
            checks.Error(
                f"TTMEMORY['BLIND_INDEX_KEY'] {exc}.", hint=BLIND_KEY_HINT, id="ttmemory.E004"
            )
        ]
    return []


def _load_problem(name: str, config: Any, base: type) -> str | None:
    """Why ``config`` cannot be built as a ``base`` backend, or None (the backend is closed)."""
    try:
        load_backend(name, config, base=base).close()
    except ImproperlyConfigured as exc:
        return str(exc)
    except Exception as exc:  # a constructor's own failure is reported, never raised by check
        return f"TTMEMORY[{name!r}]: {config.get('BACKEND')!r} failed: {type(exc).__name__}: {exc}"
    return None


def check_backends(**kwargs: Any) -> list[checks.CheckMessage]:
    """Every single-backend family (EMBEDDER, LOCK: E030; LLM: E031) can be built."""
    errors: list[checks.CheckMessage] = []
    for name, base, check_id in BACKEND_FAMILIES:
        problem = app_settings.problem(name)
        if problem is not None:
            errors.append(
                checks.Error(
                    f"TTMEMORY[{name!r}] {problem.problem}.",
                    hint=BACKEND_HINT.format(name=name),
                    id=check_id,
                )
            )
            continue
        config = getattr(app_settings, name)
        if config is None:  # LOCK: the database's default; LLM: offline rules
            continue
        message = _load_problem(name, config, base)
        if message is not None:
            errors.append(checks.Error(message, hint=BACKEND_HINT.format(name=name), id=check_id))
    return errors


def check_event_observers(**kwargs: Any) -> list[checks.CheckMessage]:
    """Every entry of EVENT_OBSERVERS can be built (E032)."""
    hint = "TTMEMORY['EVENT_OBSERVERS'] = [{'BACKEND': 'dotted.path.Class', 'OPTIONS': {...}}]"
    problem = app_settings.problem("EVENT_OBSERVERS")
    if problem is not None:
        return [
            checks.Error(
                f"TTMEMORY['EVENT_OBSERVERS'] {problem.problem}.", hint=hint, id=problem.check_id
            )
        ]
    errors: list[checks.CheckMessage] = []
    for config in app_settings.EVENT_OBSERVERS:
        message = _load_problem("EVENT_OBSERVERS", config, EventObserver)
        if message is not None:
            errors.append(checks.Error(message, hint=hint, id="ttmemory.E032"))
    return errors


def check_namespace_resolver(**kwargs: Any) -> list[checks.CheckMessage]:
    """API_NAMESPACE_RESOLVER imports as a callable (E033); only with the REST API installed."""
    if not apps.is_installed("rest_framework"):
        return []  # no API, no resolver: and importing the default would import DRF
    hint = (
        "TTMEMORY['API_NAMESPACE_RESOLVER'] = 'myproject.memory.namespace_for' (a callable "
        "taking the request, returning a namespace or None); the default is "
        f"{DEFAULTS['API_NAMESPACE_RESOLVER']!r}."
    )
    problem = app_settings.problem("API_NAMESPACE_RESOLVER")
    if problem is not None:
        return [_setting_error("API_NAMESPACE_RESOLVER", problem)]
    resolver = app_settings.API_NAMESPACE_RESOLVER
    if isinstance(resolver, str):
        try:
            resolver = import_string(resolver)
        except ImportError as exc:
            return [
                checks.Error(
                    f"TTMEMORY['API_NAMESPACE_RESOLVER']: cannot import {resolver!r}: {exc}.",
                    hint=hint,
                    id="ttmemory.E033",
                )
            ]
    if not callable(resolver):
        return [
            checks.Error(
                f"TTMEMORY['API_NAMESPACE_RESOLVER'] is {resolver!r}, which is not callable.",
                hint=hint,
                id="ttmemory.E033",
            )
        ]
    return []


def check_options(**kwargs: Any) -> list[checks.CheckMessage]:
    """Every other setting keeps its rule: numbers, durations, fractions, choices, rates."""
    errors: list[checks.CheckMessage] = []
    problem = app_settings.problem("TOKENIZER")
    if problem is not None:
        errors.append(_setting_error("TOKENIZER", problem))
    elif app_settings.TOKENIZER not in conversation.supported_encodings():
        errors.append(
            checks.Error(
                f"TTMEMORY['TOKENIZER'] is {app_settings.TOKENIZER!r}, which this install cannot "
                "count with.",
                hint=f"Use one of: {', '.join(sorted(conversation.supported_encodings()))}.",
                id="ttmemory.E020",
            )
        )
    for name, spec in SETTINGS.items():
        if spec.strict or name == "TOKENIZER":  # keys and backends: the checks above
            continue
        problem = app_settings.problem(name)
        if problem is not None:
            errors.append(_setting_error(name, problem))
    return errors


def check_jobs(**kwargs: Any) -> list[checks.CheckMessage]:
    """JOBS = "celery" without Celery installed (ttmemory.tasks checks the app itself: E035)."""
    if app_settings.problem("JOBS") is not None or app_settings.JOBS != "celery":
        return []
    if importlib.util.find_spec("celery") is not None:
        return []
    return [
        checks.Error(
            "TTMEMORY['JOBS'] is 'celery' but Celery is not installed.",
            hint="pip install 'ttmemory[celery]' (Celery with its Redis transport), "
            "or set TTMEMORY['JOBS'] = 'inline'.",
            id="ttmemory.E035",
        )
    ]


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


def check_derived_values(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Facts the upgrade has not finished: stale blind index (W040), keyless vectors (W041).

    Runs with ``check --database default`` and before ``migrate``; a database without the
    tables yet, or settings without keys, has nothing to report here.
    """
    warnings: list[checks.CheckMessage] = []
    for alias in databases or ():
        facts = Fact.objects.using(alias)
        try:
            stale = stale_rows(facts).count()
            keyless = facts.filter(embedding_model__regex=r"^hash-[0-9]+$").count()
        except (DatabaseError, ImproperlyConfigured):
            continue
        if stale:
            warnings.append(
                checks.Warning(
                    f"{stale} facts in database {alias!r} have a blind keyword index written "
                    "with an older scheme, BLIND_INDEX_KEY or term normaliser (stemmer, "
                    "STEMMER_LANGUAGE, NAMESPACE_LANGUAGES).",
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
