"""The demo project's settings plus the ``bench`` app, whose commands run the benchmarks."""

from __future__ import annotations

from demo_project.settings import *  # noqa: F403
from demo_project.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "bench"]
