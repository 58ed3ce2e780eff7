"""Reset hook: the parsed settings are forgotten when ``TTMEMORY`` changes (tests, ``reload``)."""

from __future__ import annotations

from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.conf.settings import app_settings


# Connected here, at import, before any module that builds a cache from these settings (they
# all import this one), so it runs first; the caches reset lazily, so it need not.
@receiver(setting_changed)
def _reload_settings(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        app_settings.clear()
