"""Print what ttmemory runs on here, one line per part, each with a hint when it could be better."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import DatabaseError, connections

from ttmemory import jobs
from ttmemory.backends.embedders import get_embedder
from ttmemory.backends.locks import get_lock
from ttmemory.conf import app_settings
from ttmemory.crypto import get_keyring, key_id_of
from ttmemory.exceptions import DecryptionError
from ttmemory.models.vectors import BYTES, pgvector_available, pgvector_installed, vector_storage
from ttmemory.services import rotation

#: Newest values per encrypted column read to see which keys encrypted them.
KEY_SAMPLE = 200


@dataclass(frozen=True)
class Finding:
    part: str
    state: str
    hint: str = ""  # empty: nothing to do


def database(alias: str) -> list[Finding]:
    """The database and where fact vectors live on it."""
    conn = connections[alias]
    try:
        conn.ensure_connection()
    except DatabaseError as exc:
        return [Finding("database", f"{alias}: cannot connect ({exc})", "check DATABASES")]
    version = ".".join(str(part) for part in conn.get_database_version())
    found = [Finding("database", f"{alias}: {conn.vendor} {version}")]
    if conn.vendor == "sqlite":
        found[0] = Finding(
            "database",
            found[0].state,
            "fine for development and one machine; PostgreSQL for several"
            if conn.settings_dict.get("OPTIONS", {}).get("transaction_mode") == "IMMEDIATE"
            else "set OPTIONS {'transaction_mode': 'IMMEDIATE', 'timeout': 30} so writers queue",
        )
        found.append(Finding("vectors", "float32 bytes, ranked in numpy (exact)"))
    elif conn.vendor == "postgresql":
        if vector_storage(conn) != BYTES:
            found.append(Finding("vectors", "pgvector (HNSW indexes for large namespaces)"))
        else:
            missing = (
                "not installed in this database"
                if pgvector_available(conn) and not pgvector_installed(conn)
                else "missing on the server"
                if not pgvector_available(conn)
                else "installed after the fact table was created"
            )
            found.append(
                Finding(
                    "vectors",
                    f"float32 bytes, ranked in numpy: pgvector {missing}",
                    "see check ttmemory.W050 (manage.py check --database default)",
                )
            )
    return found


def cache() -> Finding:
    backend = settings.CACHES.get("default", {}).get("BACKEND", "")
    name = backend.rsplit(".", 1)[-1]
    if "locmem" in backend or "dummy" in backend:
        return Finding(
            "cache",
            name,
            "per process: the API's write throttle counts per process; a shared cache "
            "(RedisCache) makes it count per caller",
        )
    return Finding("cache", name)


def lock() -> Finding:
    configured = app_settings.LOCK
    name = type(get_lock()).__name__
    state = f"{name} ({'TTMEMORY[LOCK]' if configured else 'the database default'})"
    if name == "LocalLock":
        return Finding("lock", state, "threads of one process only: not for several processes")
    return Finding("lock", state)


def background() -> Finding:
    mode = app_settings.JOBS
    broker = getattr(settings, "CELERY_BROKER_URL", None)
    eager = getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False)
    # Asking whether jobs queue may log, once, that they run inline: the line below says it.
    quiet = logging.getLogger("ttmemory.tasks")
    before, quiet.disabled = quiet.disabled, True
    try:
        queued = jobs.queues()
    finally:
        quiet.disabled = before
    if queued:
        where = "Celery tasks, run in this process (eager)" if eager else "Celery workers"
    else:
        where = "inline, after each commit, in the process that wrote"
    detail = f"JOBS={mode!r}, broker {'set' if broker else 'not set'}" + (
        ", eager" if eager else ""
    )
    hint = (
        ""
        if queued or mode == "inline"
        else "fine for one process; for workers see docs/installation.md, Celery in ten lines"
    )
    return Finding("background jobs", f"{where} ({detail})", hint)


def embedder() -> Finding:
    try:
        backend = get_embedder()
    except Exception as exc:  # reported, like check E030 would
        return Finding("embedder", f"cannot be built: {exc}", "fix TTMEMORY['EMBEDDER']")
    state = f"{type(backend).__name__}, model {backend.model}, {backend.dimensions} dimensions"
    if type(backend).__name__ == "HashEmbedder":
        return Finding(
            "embedder",
            state,
            "lexical only (no synonyms); WordLlama or a sentence embedder recall by meaning "
            "(docs/installation.md, Embedders)",
        )
    return Finding("embedder", state)


def keys(alias: str) -> list[Finding]:
    """Which keys are configured, and which encrypted the newest values of each column."""
    found: list[Finding] = []
    try:
        keyring = get_keyring()
    except Exception as exc:
        return [Finding("encryption keys", f"unusable: {exc}", "see check ttmemory.E001/E002")]
    configured = [key_id for key_id, _ in keyring.keys]
    primary = keyring.primary_key_id
    state = f"{len(configured)} configured, new values under {primary!r}"
    if len(configured) > 1:
        state += f", older ones still decrypt: {', '.join(map(repr, configured[1:]))}"
    found.append(Finding("encryption keys", state))
    older: dict[str, int] = {}
    conn = connections[alias]
    try:
        for model, fields in rotation.encrypted_columns():
            quote = conn.ops.quote_name
            table, pk = quote(model._meta.db_table), quote(str(model._meta.pk.column))
            for field in fields:
                column = quote(str(field.column))
                with conn.cursor() as cursor:
                    cursor.execute(
                        f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL "
                        f"ORDER BY {pk} DESC LIMIT %s",
                        [KEY_SAMPLE],
                    )
                    for (value,) in cursor.fetchall():
                        key_id = key_id_of(bytes(value))
                        if key_id != primary:
                            older[key_id] = older.get(key_id, 0) + 1
    except (DatabaseError, DecryptionError) as exc:
        found.append(Finding("key rotation", f"not read ({exc})", "run migrate first"))
        return found
    if older:
        counts = ", ".join(f"{n} under {k!r}" for k, n in sorted(older.items()))
        found.append(
            Finding(
                "key rotation",
                f"not finished: among the newest values of each column, {counts}",
                "run python manage.py ttmemory_rotate_keys (resumable); remove an old key "
                "only after a complete run",
            )
        )
    else:
        found.append(Finding("key rotation", f"the newest values are all under {primary!r}"))
    blind = "set" if app_settings.BLIND_INDEX_KEY else "missing"
    found.append(
        Finding(
            "blind index key",
            blind,
            "" if blind == "set" else "see check ttmemory.E003",
        )
    )
    return found


class Command(BaseCommand):
    help = (
        "Print what ttmemory is configured to run on (database, vector support, cache, lock, "
        "background jobs, embedder, keys), each with a hint when something could be better."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--database", default="default", help="the database alias to read")

    def handle(self, *args: Any, **options: Any) -> None:
        alias = options["database"]
        findings = [
            *database(alias),
            cache(),
            lock(),
            background(),
            embedder(),
            *keys(alias),
        ]
        width = max(len(f.part) for f in findings)
        for finding in findings:
            self.stdout.write(f"{finding.part:<{width}}  {finding.state}")
            if finding.hint:
                self.stdout.write(f"{'':<{width}}  -> {finding.hint}")
