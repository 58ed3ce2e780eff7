"""Settings: one ``TTMEMORY`` dict, read through typed accessors on ``app_settings``.

The face of the package (``from ttmemory.conf import app_settings``). Every key is declared once
on ``AppSettings`` (``ttmemory.conf.settings``) with its default and the rule that coerces and
checks a value (``ttmemory.conf.rules``); the accessor returns the rule's type
(``app_settings.LOCK_TIMEOUT`` is a float). ``ttmemory.checks`` reports every value that breaks
its rule. Reading such a value when code runs logs the problem and uses the default, so a bad
number never crashes a write; a bad key or backend (no safe default exists) raises
``ImproperlyConfigured``. ``ttmemory.conf.reset`` forgets the parsed values when the setting
changes.

This package imports nothing else from ttmemory: each cache built from these settings (keyring,
blind key, backends, observers, resolver) connects its own ``setting_changed`` receiver and
resets lazily, so the order receivers run in does not matter.
"""

from __future__ import annotations

from ttmemory.conf import reset as reset
from ttmemory.conf.rules import (  # the rules other modules use; the rest: conf.rules
    PARTITIONS_MAX,
    PARTITIONS_MIN,
    QUEUE_FAMILIES,
    VALID_EXPIRY_MODES,
    VALID_JOB_MODES,
    VALID_TRIM_MODES,
    BackendConfig,
    InvalidSetting,
    NamespaceResolver,
    TrimMode,
    network_list,
    rate_parts,
)
from ttmemory.conf.settings import (
    DEFAULTS,
    ENV_BLIND_KEY,
    ENV_KEYS,
    SETTINGS,
    AppSettings,
    Setting,
    app_settings,
)

__all__ = [
    "DEFAULTS",
    "ENV_BLIND_KEY",
    "ENV_KEYS",
    "PARTITIONS_MAX",
    "PARTITIONS_MIN",
    "QUEUE_FAMILIES",
    "SETTINGS",
    "VALID_EXPIRY_MODES",
    "VALID_JOB_MODES",
    "VALID_TRIM_MODES",
    "AppSettings",
    "BackendConfig",
    "InvalidSetting",
    "NamespaceResolver",
    "Setting",
    "TrimMode",
    "app_settings",
    "network_list",
    "rate_parts",
]
