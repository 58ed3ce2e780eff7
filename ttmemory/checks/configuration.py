"""Checks of the configuration: ``TTMEMORY``'s values, keys, and every backend family built once.

Settings are checked by the rules declared with them in ``ttmemory.conf`` (one place); these
checks turn a broken rule into an error with a hint, and load each backend family once to
prove it can be built.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
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


def _key_errors(
    name: str,
    hint: str,
    parse: Callable[[Any], object],
    missing: tuple[str, str],
    malformed: tuple[str, str],
) -> list[checks.CheckMessage]:
    """A key setting's errors: its settings rule, ``missing`` (message, id), or refused by
    ``parse``: ``malformed`` (the message's start, before the parser's words; id)."""
    problem = app_settings.problem(name)
    if problem is not None:
        return [
            checks.Error(f"TTMEMORY[{name!r}] {problem.problem}.", hint=hint, id=problem.check_id)
        ]
    value = getattr(app_settings, name)
    if not value:
        return [checks.Error(missing[0], hint=hint, id=missing[1])]
    try:
        parse(value)
    except (EncryptionKeyError, ValueError) as exc:
        return [checks.Error(f"{malformed[0]}{exc}.", hint=hint, id=malformed[1])]
    return []


def check_encryption_keys(**kwargs: Any) -> list[checks.CheckMessage]:
    missing = ("No ttmemory encryption key is configured.", "ttmemory.E001")
    malformed = ("Malformed ttmemory encryption key: ", "ttmemory.E002")
    return _key_errors("ENCRYPTION_KEYS", KEY_HINT, Keyring.from_entries, missing, malformed)


def check_blind_index_key(**kwargs: Any) -> list[checks.CheckMessage]:
    missing = ("No ttmemory blind index key is configured.", "ttmemory.E003")
    malformed = ("TTMEMORY['BLIND_INDEX_KEY'] ", "ttmemory.E004")
    return _key_errors("BLIND_INDEX_KEY", BLIND_KEY_HINT, parse_blind_key, missing, malformed)


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
