"""System checks: ttmemory.E001-E099 stop start-up, ttmemory.W001-W099 warn."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks
from django.db import connections

from ttmemory.conf import DEFAULTS, VALID_TRIM_MODES, app_settings
from ttmemory.crypto import Keyring
from ttmemory.exceptions import EncryptionKeyError

KEY_HINT = (
    "Set TTMEMORY['ENCRYPTION_KEYS'] = ['k1:<base64 of 32 random bytes>'] or the "
    "TTMEMORY_ENCRYPTION_KEYS environment variable; print one with: "
    "python -c 'from ttmemory.crypto import generate_key; print(generate_key())'"
)


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
    entries = app_settings.ENCRYPTION_KEYS
    if not entries:
        return [
            checks.Error(
                "No ttmemory encryption key is configured.", hint=KEY_HINT, id="ttmemory.E001"
            )
        ]
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list | tuple):
        return [
            checks.Error(
                "TTMEMORY['ENCRYPTION_KEYS'] must be a list of strings.",
                hint=KEY_HINT,
                id="ttmemory.E002",
            )
        ]
    try:
        Keyring.from_entries(list(entries))
    except EncryptionKeyError as exc:
        return [
            checks.Error(
                f"Malformed ttmemory encryption key: {exc}.", hint=KEY_HINT, id="ttmemory.E002"
            )
        ]
    return []


def check_blind_index_key(**kwargs: Any) -> list[checks.CheckMessage]:
    from ttmemory.longterm.blind import parse_blind_key

    hint = (
        "Set TTMEMORY['BLIND_INDEX_KEY'] (or TTMEMORY_BLIND_INDEX_KEY) to base64 of 32 random "
        "bytes, different from the encryption keys: python -c 'import base64, os; "
        "print(base64.urlsafe_b64encode(os.urandom(32)).decode())'"
    )
    value = app_settings.BLIND_INDEX_KEY
    if not value:
        return [
            checks.Error(
                "No ttmemory blind index key is configured.", hint=hint, id="ttmemory.E003"
            )
        ]
    try:
        parse_blind_key(value)
    except ValueError as exc:
        return [checks.Error(f"TTMEMORY['BLIND_INDEX_KEY'] {exc}.", hint=hint, id="ttmemory.E004")]
    return []


def check_backends(**kwargs: Any) -> list[checks.CheckMessage]:
    from django.core.exceptions import ImproperlyConfigured

    from ttmemory.backends import load_backend
    from ttmemory.backends.embedders import Embedder
    from ttmemory.backends.locks import SessionLock

    errors: list[checks.CheckMessage] = []
    for name, base in (("EMBEDDER", Embedder), ("LOCK", SessionLock)):
        config = getattr(app_settings, name)
        if config is None:
            continue
        try:
            backend = load_backend(name, config, base=base)
            backend.close()
        except ImproperlyConfigured as exc:
            errors.append(
                checks.Error(
                    str(exc),
                    hint=f"TTMEMORY[{name!r}] = "
                    "{'BACKEND': 'dotted.path.Class', 'OPTIONS': {...}}",
                    id="ttmemory.E030",
                )
            )
    return errors


def check_options(**kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    from ttmemory import conversation

    tokenizer = app_settings.TOKENIZER
    if tokenizer not in conversation.supported_encodings():
        errors.append(
            checks.Error(
                f"TTMEMORY['TOKENIZER'] is {tokenizer!r}, which this install cannot count with.",
                hint=f"Use one of: {', '.join(sorted(conversation.supported_encodings()))}.",
                id="ttmemory.E020",
            )
        )
    for name in ("MAX_MESSAGE_BYTES", "MAX_NAMESPACE_LENGTH", "BATCH_SIZE"):
        value = getattr(app_settings, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            errors.append(
                checks.Error(
                    f"TTMEMORY[{name!r}] must be a positive integer, not {value!r}.",
                    hint=f"The default is {DEFAULTS[name]!r}.",
                    id="ttmemory.E021",
                )
            )
    if app_settings.MAX_NAMESPACE_LENGTH > 255:
        errors.append(
            checks.Error(
                "TTMEMORY['MAX_NAMESPACE_LENGTH'] cannot exceed 255, the column width.",
                hint="Use 255 or less.",
                id="ttmemory.E022",
            )
        )
    if app_settings.TRIM_MODE not in VALID_TRIM_MODES:
        errors.append(
            checks.Error(
                f"TTMEMORY['TRIM_MODE'] is {app_settings.TRIM_MODE!r}.",
                hint=f"Use one of: {', '.join(VALID_TRIM_MODES)}.",
                id="ttmemory.E023",
            )
        )
    return errors


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
                    "'timeout': 20} so concurrent writers wait instead of failing with "
                    "'database is locked'.",
                    id="ttmemory.W001",
                )
            )
    return warnings


def register() -> None:
    for check in (
        check_settings_shape,
        check_encryption_keys,
        check_blind_index_key,
        check_backends,
        check_options,
    ):
        checks.register(check, "ttmemory")
    checks.register(check_sqlite_transactions, "ttmemory", checks.Tags.database)
