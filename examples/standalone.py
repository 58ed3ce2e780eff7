"""Django settings for the recipes run as plain scripts (in a Django project, yours are used).

MEMORY_DB names the SQLite file that outlives each process; TTMEMORY_ENCRYPTION_KEYS and
TTMEMORY_BLIND_INDEX_KEY come from the environment (``python -m ttmemory init`` prints them).
"""

from __future__ import annotations

import os

import django
from django.conf import settings
from django.core.management import call_command


def setup() -> None:
    """Configure Django with ttmemory on a SQLite file and create its tables (first run only)."""
    settings.configure(
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "ttmemory"],
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": os.environ.get("MEMORY_DB", "memory.sqlite3"),
                "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 30},
            }
        },
        TTMEMORY={"JOBS": "inline"},  # learn in this process, right after each turn
    )
    django.setup()
    call_command("migrate", verbosity=0)
