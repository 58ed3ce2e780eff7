"""Settings of the demo project: DEBUG with a local key; production reads the environment."""

from __future__ import annotations

import os
from pathlib import Path

from demo_project.database import database_settings
from demo_project.demokeys import local_blind_key, local_encryption_keys

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = BASE_DIR / ".data"

DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or ("insecure-demo-only" if DEBUG else "")
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")

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
    "demo_project",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "demo_project.urls"
WSGI_APPLICATION = "demo_project.wsgi.application"

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

DATABASES = {"default": database_settings(BASE_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

USE_TZ = True
TIME_ZONE = "UTC"
STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"

TTMEMORY = {
    # Learn facts every 4 messages and keep a rolling summary past 3,000 live tokens.
    "LEARN_EVERY": 4,
    "LEARN_IDLE_SECONDS": 300,
    "SUMMARISE_AT_TOKENS": 3000,
    # Production: set TTMEMORY_ENCRYPTION_KEYS in the environment. The demo generates a local
    # key into .data/demo-keys.txt (git-ignored) on first run.
    "ENCRYPTION_KEYS": local_encryption_keys(DATA_DIR) if DEBUG else None,
    "BLIND_INDEX_KEY": local_blind_key(DATA_DIR) if DEBUG else None,
}

# A shared cache (the API's write throttle counts per caller across processes) when Redis is
# configured; the default per-process memory cache otherwise.
if os.environ.get("REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
            "OPTIONS": {"IGNORE_EXCEPTIONS": True},  # Redis down: no throttling, no failure
        }
    }
if os.environ.get("TTMEMORY_API_WRITE_RATE"):
    TTMEMORY["API_WRITE_RATE"] = (
        None
        if os.environ["TTMEMORY_API_WRITE_RATE"] == "off"
        else os.environ["TTMEMORY_API_WRITE_RATE"]
    )

# /metrics (docs/observability.md) is closed unless a bearer token or allowed networks are
# given: TTMEMORY_METRICS_TOKEN, TTMEMORY_METRICS_ALLOWED_NETWORKS (comma-separated CIDRs).
_metrics_networks = [
    net.strip()
    for net in os.environ.get("TTMEMORY_METRICS_ALLOWED_NETWORKS", "").split(",")
    if net.strip()
]
if os.environ.get("TTMEMORY_METRICS_TOKEN") or _metrics_networks:
    TTMEMORY["METRICS_ENABLED"] = True
    TTMEMORY["METRICS_TOKEN"] = os.environ.get("TTMEMORY_METRICS_TOKEN") or None
    TTMEMORY["METRICS_ALLOWED_NETWORKS"] = _metrics_networks

# Celery (the worker is started by docker-compose; with no broker tasks run inline).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_BEAT_SCHEDULE = {
    "ttmemory-prune-expired": {"task": "ttmemory.prune_expired", "schedule": 3600.0},
    "ttmemory-learn-idle": {"task": "ttmemory.learn_idle", "schedule": 60.0},
}

# Every ttmemory record carries the namespace and session id of its operation (never content).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "ttmemory": {
            "format": "%(asctime)s %(levelname)s %(name)s "
            "namespace=%(namespace)s session_id=%(session_id)s %(message)s"
        }
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "ttmemory": {"class": "logging.StreamHandler", "formatter": "ttmemory"},
    },
    "loggers": {"ttmemory": {"handlers": ["ttmemory"], "level": "INFO", "propagate": False}},
}

# Metrics at /metrics for Prometheus (docs/observability.md): ttmemory's OpenTelemetry
# instruments write to prometheus_client, summed over gunicorn's workers (and the Celery
# worker's processes) through PROMETHEUS_MULTIPROC_DIR when it is set.
try:
    from ttmemory.telemetry import prometheus as _prometheus
except ImportError:  # the "prometheus" extra is not installed
    pass
else:
    _prometheus.install()

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
    "DESCRIPTION": (
        "Session memory, snapshots with safe rollback and long-term memory for LLM agents.\n\n"
        "**Authenticate** with the session of a logged-in user (log in at /admin/ first, then "
        "*Try it out*), a DRF token (`Authorization: Token <key>`; `./dev demo` prints one) or "
        "an API key (`Authorization: Api-Key ttm_…`, namespace in `X-Memory-Namespace`). "
        "Every object belongs to the caller's namespace; other ids answer 404.\n\n"
        "**Start here:** `POST /sessions/` with a key, `POST /sessions/{id}/messages/`, then "
        "`POST /sessions/{id}/prompt/` for what to send to the model."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "TAGS": [
        {"name": "sessions", "description": "Sessions, messages, context, snapshots, rollback."},
        {"name": "facts", "description": "Long-term memory: remember, recall, correct, learn."},
        {"name": "profile", "description": "Structured profiles per kind."},
        {"name": "namespace", "description": "Who am I, export, erase."},
        {"name": "ledger", "description": "LLM token costs."},
    ],
}
