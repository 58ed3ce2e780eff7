"""Settings of the test suite: the demo's database choice, fresh random keys per run."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from demo_project.database import database_settings

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = False
SECRET_KEY = "tests-only"
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "ttmemory",
    # The benchmarks' commands (bench/, not installed), so their tests can run them.
    "bench",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "demo_project" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
ROOT_URLCONF = "demo_project.urls"
DATABASES = {"default": database_settings(BASE_DIR)}
# The read-replica tests (tests/databases/test_replicas.py) point this alias at a real standby;
# elsewhere it mirrors the test database, as Django's multi-database testing recommends.
DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}
# Set by tests/conftest.py for the worker processes of a run through PgBouncer.
if os.environ.get("TTMEMORY_TEST_PGBOUNCER_PORT"):
    DATABASES["default"].update(
        HOST="127.0.0.1",
        PORT=os.environ["TTMEMORY_TEST_PGBOUNCER_PORT"],
        OPTIONS={},
        DISABLE_SERVER_SIDE_CURSORS=True,
    )
USE_TZ = True
# Django's default hasher spends about 0.3 s of CPU per password on purpose; the suite creates
# staff users in many fixtures, so it uses the fast hasher Django's own test docs recommend.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Random per run: no key lives in code. Two keys, so decryption by a non-primary key is exercised.
# Exported to the environment so worker processes the tests start share them.
if "TTMEMORY_TEST_KEYS" not in os.environ:
    os.environ["TTMEMORY_TEST_KEYS"] = ",".join(
        f"t{n}:{base64.urlsafe_b64encode(os.urandom(32)).decode()}" for n in (1, 2)
    )
TEST_KEYS = os.environ["TTMEMORY_TEST_KEYS"].split(",")
if "TTMEMORY_TEST_BLIND_KEY" not in os.environ:
    os.environ["TTMEMORY_TEST_BLIND_KEY"] = base64.urlsafe_b64encode(os.urandom(32)).decode()
TTMEMORY = {
    "ENCRYPTION_KEYS": TEST_KEYS,
    "BLIND_INDEX_KEY": os.environ["TTMEMORY_TEST_BLIND_KEY"],
    "MAX_MESSAGE_BYTES": 2 * 1024 * 1024,
    "RECALL_TOUCH_SECONDS": 0,  # write recall counts at once (tests read them back)
    # A run through PgBouncer (tests/conftest.py) says so, as docs/scaling.md asks.
    "POOLED": os.environ.get("TTMEMORY_TEST_POOLER") == "pgbouncer",
}
# TTMEMORY_TEST_PARTITIONED=1: the test database's message table is partitioned by hash of
# session (read by the migration), for the partitioned pass of `./dev test`.
if os.environ.get("TTMEMORY_TEST_PARTITIONED") == "1":
    TTMEMORY["PARTITIONED_HISTORY"] = {"by": "hash", "partitions": 8}

# Background jobs run inline at commit, unless a test starts a real worker with a broker.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_URL = "memory://"
STATIC_URL = "static/"

# The REST API (ttmemory.api.urls): session and token authentication for users, plus
# ttmemory's API keys (always accepted by its views).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ttmemory API",
    "DESCRIPTION": "Session memory, snapshots and long-term memory for LLM agents.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}
