"""A frozen clock for lifecycle tests: time moves only when a test moves it (no sleeping)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.utils import timezone


class Clock:
    """``django.utils.timezone.now`` answers ``self.now``; ``advance`` moves it."""

    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> dt.datetime:
        self.now += dt.timedelta(**delta)
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    real_now = timezone.now
    frozen = Clock(real_now().replace(microsecond=0))
    monkeypatch.setattr(timezone, "now", frozen)
    # Fields stamped by ``default=timezone.now`` hold the real function (bound at import);
    # Field._get_default caches it per field, so that cache is what answers the clock.
    for model in apps.get_app_config("ttmemory").get_models():
        for field in model._meta.concrete_fields:
            if field.default is real_now:
                monkeypatch.setitem(vars(field), "_get_default", frozen)
    yield frozen


@pytest.fixture
def lifetimes(settings: Any) -> Any:
    """Set TTMEMORY lifetimes for one test: ``lifetimes(SESSION_TTL=...)``."""

    def apply(**values: Any) -> None:
        settings.TTMEMORY = {**settings.TTMEMORY, **values}

    return apply
