"""A real Celery worker for the tests: ``python -m celery -A tests.celery_worker worker ...``.

The parent test passes the test database name (``TTM_DB_NAME``), the broker (``TTM_BROKER``),
TTMEMORY overrides (``TTM_OVERRIDES``, JSON) and the broker's visibility timeout.
"""

from __future__ import annotations

import json
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
from django.conf import settings

settings.DATABASES["default"]["NAME"] = os.environ["TTM_DB_NAME"]
settings.TTMEMORY = {**settings.TTMEMORY, **json.loads(os.environ.get("TTM_OVERRIDES", "{}"))}
django.setup()

from demo_project.celery import app  # noqa: E402

app.conf.update(
    broker_url=os.environ["TTM_BROKER"],
    result_backend=None,
    task_always_eager=False,
    task_eager_propagates=False,
    worker_prefetch_multiplier=1,
    broker_transport_options={
        "visibility_timeout": float(os.environ.get("TTM_VISIBILITY", "3600"))
    },
    worker_hijack_root_logger=False,
)
