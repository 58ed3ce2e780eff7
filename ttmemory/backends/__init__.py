"""Pluggable backends, each family loaded in one place from ``TTMEMORY[<FAMILY>]``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string


def load_backend(setting: str, config: Any, *, base: type) -> Any:
    """Instantiate ``{"BACKEND": "dotted.Path", "OPTIONS": {...}}`` as a subclass of ``base``.

    Any import or option error becomes ImproperlyConfigured naming the setting.
    """
    if not isinstance(config, dict) or not isinstance(config.get("BACKEND"), str):
        raise ImproperlyConfigured(
            f"TTMEMORY[{setting!r}] must be a dict with a 'BACKEND' dotted path and optional "
            f"'OPTIONS', not {config!r}"
        )
    unknown = set(config) - {"BACKEND", "OPTIONS"}
    if unknown:
        raise ImproperlyConfigured(f"TTMEMORY[{setting!r}] has unknown keys: {sorted(unknown)}")
    path = config["BACKEND"]
    try:
        cls = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"TTMEMORY[{setting!r}]: cannot import {path!r}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ImproperlyConfigured(
            f"TTMEMORY[{setting!r}]: {path!r} is not a {base.__module__}.{base.__name__}"
        )
    options = config.get("OPTIONS") or {}
    if not isinstance(options, dict):
        raise ImproperlyConfigured(f"TTMEMORY[{setting!r}]['OPTIONS'] must be a dict")
    try:
        return cls(**options)
    except TypeError as exc:
        raise ImproperlyConfigured(f"TTMEMORY[{setting!r}]['OPTIONS'] for {path}: {exc}") from exc
