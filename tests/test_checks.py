"""System checks name the problem and the fix."""

from __future__ import annotations

import ast
import base64
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from ttmemory import checks
from ttmemory.conf import app_settings
from ttmemory.crypto import generate_key

ROOT = Path(__file__).resolve().parent.parent


def ids(messages: list[Any]) -> list[str]:
    return [m.id for m in messages]


def test_a_missing_key_is_error_e001_with_a_hint(settings: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("TTMEMORY_ENCRYPTION_KEYS", raising=False)
    settings.TTMEMORY = {}

    errors = checks.check_encryption_keys()

    assert ids(errors) == ["ttmemory.E001"]
    assert "generate_key" in (errors[0].hint or "")


def test_the_environment_variable_supplies_keys(settings: Any, monkeypatch: Any) -> None:
    settings.TTMEMORY = {}
    monkeypatch.setenv("TTMEMORY_ENCRYPTION_KEYS", f"{generate_key('e1')},{generate_key('e2')}")
    from ttmemory.conf import app_settings

    app_settings.reload()
    try:
        assert checks.check_encryption_keys() == []
        assert [k.split(":")[0] for k in app_settings.ENCRYPTION_KEYS] == ["e1", "e2"]
    finally:
        monkeypatch.delenv("TTMEMORY_ENCRYPTION_KEYS")
        app_settings.reload()


@pytest.mark.parametrize("keys", [["k1:short"], ["nocolon"], 42])
def test_a_malformed_key_is_error_e002(settings: Any, keys: Any) -> None:
    settings.TTMEMORY = {"ENCRYPTION_KEYS": keys}

    assert ids(checks.check_encryption_keys()) == ["ttmemory.E002"]


def test_unknown_settings_and_bad_options_are_reported(settings: Any) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "ENCRYPTON_KEYS": [],
        "TOKENIZER": "nope",
        "MAX_MESSAGE_BYTES": 0,
        "TRIM_MODE": "shred",
    }

    assert ids(checks.check_settings_shape()) == ["ttmemory.E011"]
    assert ids(checks.check_options()) == ["ttmemory.E020", "ttmemory.E021", "ttmemory.E023"]


def test_sqlite_without_immediate_transactions_warns(settings: Any) -> None:
    from django.db import connections

    conn = connections["default"]
    original = conn.settings_dict.get("OPTIONS", {})
    conn.settings_dict["OPTIONS"] = {}
    try:
        warnings = checks.check_sqlite_transactions()
    finally:
        conn.settings_dict["OPTIONS"] = original
    expected = ["ttmemory.W001"] if conn.vendor == "sqlite" else []
    assert ids(warnings) == expected


def messages_for(overrides: dict[str, Any]) -> list[Any]:
    """Every ttmemory check message with ``overrides`` over the test settings (W001 aside)."""
    from django.conf import settings

    with override_settings(TTMEMORY={**settings.TTMEMORY, **overrides}):
        found = run_checks(tags=["ttmemory"])
    return [m for m in found if m.id.startswith("ttmemory.") and m.id != "ttmemory.W001"]


def test_the_test_settings_pass_every_check() -> None:
    assert messages_for({}) == []


@pytest.mark.parametrize(
    ("name", "value", "check_id"),
    [
        # a count that must be positive (E021, existing) or may be 0 to turn it off (E024)
        ("API_MAX_BATCH", 0, "ttmemory.E021"),
        ("SUMMARY_MAX_TOKENS", -1, "ttmemory.E021"),
        ("PROMPT_MEMORY_CHARS", "many", "ttmemory.E021"),
        ("ADMIN_REVEAL_SECONDS", None, "ttmemory.E021"),
        ("MAX_NAMESPACE_LENGTH", 300, "ttmemory.E022"),
        ("LEARN_EVERY", None, "ttmemory.E024"),
        ("LEARN_EVERY", -2, "ttmemory.E024"),
        ("AUTO_SNAPSHOT_EVERY", 2.5, "ttmemory.E024"),
        ("SUMMARISE_AT_TOKENS", [], "ttmemory.E024"),
        ("DAILY_TOKEN_BUDGET", True, "ttmemory.E024"),
        ("MAX_SNAPSHOTS_PER_SESSION", -1, "ttmemory.E024"),
        ("RECALL_EXACT_LIMIT", None, "ttmemory.E024"),
        ("RECALL_VECTOR_CACHE_MB", -1, "ttmemory.E024"),
        ("SUMMARY_KEEP_TOKENS", -5, "ttmemory.E024"),
        # durations (E025)
        ("LOCK_TIMEOUT", -1, "ttmemory.E025"),
        ("LOCK_LEASE", 0, "ttmemory.E025"),
        ("EMBEDDER_BREAKER_SECONDS", "soon", "ttmemory.E025"),
        ("RECALL_TOUCH_SECONDS", None, "ttmemory.E025"),
        ("LEARN_IDLE_SECONDS", float("nan"), "ttmemory.E025"),
        ("API_IDEMPOTENCY_SECONDS", 0, "ttmemory.E025"),
        # a fraction out of range (E026), a flag (E027), a throttle rate (E028)
        ("RECALL_VECTOR_WEIGHT", 1.5, "ttmemory.E026"),
        ("RECALL_VECTOR_WEIGHT", -0.1, "ttmemory.E026"),
        ("RECALL_VECTOR_WEIGHT", "half", "ttmemory.E026"),
        ("ADMIN_MASK_CONTENT", "no", "ttmemory.E027"),
        ("API_WRITE_RATE", "fast", "ttmemory.E028"),
        ("API_WRITE_RATE", "10/week", "ttmemory.E028"),
        # choices (existing ids)
        ("TRIM_MODE", None, "ttmemory.E023"),
        ("TOKENIZER", 42, "ttmemory.E020"),
        # a stemmer language Snowball does not have (E045)
        ("STEMMER_LANGUAGE", "klingon", "ttmemory.E045"),
        ("STEMMER_LANGUAGE", 1, "ttmemory.E045"),
        # per-namespace languages (E048)
        ("NAMESPACE_LANGUAGES", {"user-1": "klingon"}, "ttmemory.E048"),
        ("NAMESPACE_LANGUAGES", {"acme/*/x": "german"}, "ttmemory.E048"),
        ("NAMESPACE_LANGUAGES", ["german"], "ttmemory.E048"),
        # model prices for the cost metric (E060)
        ("TELEMETRY_MODEL_PRICES", {"m": {"input": -1}}, "ttmemory.E060"),
        ("TELEMETRY_MODEL_PRICES", {"m": {"input": 1, "currency": "EUR"}}, "ttmemory.E060"),
        ("TELEMETRY_MODEL_PRICES", ["m"], "ttmemory.E060"),
        ("TELEMETRY_CAPTURE_QUERY", "yes", "ttmemory.E027"),
        # lifetimes (E036) and the expiry mode (E037)
        ("SESSION_TTL", 0, "ttmemory.E036"),
        ("ARCHIVED_MESSAGE_TTL", -60, "ttmemory.E036"),
        ("SNAPSHOT_TTL", "a month", "ttmemory.E036"),
        ("AUDIT_TTL", dt.timedelta(0), "ttmemory.E036"),
        ("LEDGER_TTL", float("inf"), "ttmemory.E036"),
        ("SESSION_EXPIRY", "cold", "ttmemory.E037"),
    ],
)
def test_a_bad_option_is_an_error_whose_hint_names_the_setting(
    name: str, value: Any, check_id: str
) -> None:
    found = messages_for({name: value})

    assert ids(found) == [check_id]
    assert name in found[0].msg and name in (found[0].hint or "")


@pytest.mark.parametrize(
    ("overrides", "check_id"),
    [
        ({"EMBEDDER": None}, "ttmemory.E030"),
        (
            {
                "EMBEDDER": {
                    "BACKEND": "ttmemory.backends.embedders.HashEmbedder",
                    "OPTIONS": {"dimensions": 3},
                }
            },
            "ttmemory.E030",
        ),
        ({"LOCK": {"BACKEND": "nowhere.Lock"}}, "ttmemory.E030"),
        ({"LLM": "gpt-4o"}, "ttmemory.E031"),
        ({"LLM": {"BACKEND": "nowhere.LLM"}}, "ttmemory.E031"),
        ({"LLM": {"BACKEND": "ttmemory.backends.embedders.HashEmbedder"}}, "ttmemory.E031"),
        (
            {"LLM": {"BACKEND": "ttmemory.backends.llm.ScriptedLLM", "OPTIONS": {"x": 1}}},
            "ttmemory.E031",
        ),
        (
            {"EVENT_OBSERVERS": {"BACKEND": "ttmemory.backends.events.ListObserver"}},
            "ttmemory.E032",
        ),
        (
            {"EVENT_OBSERVERS": [{"BACKEND": "ttmemory.backends.embedders.HashEmbedder"}]},
            "ttmemory.E032",
        ),
        (
            {
                "EVENT_OBSERVERS": [
                    {
                        "BACKEND": "ttmemory.backends.events.WebhookObserver",
                        "OPTIONS": {"url": "ftp://x", "secret": "s"},
                    }
                ]
            },
            "ttmemory.E032",
        ),
        ({"API_NAMESPACE_RESOLVER": 42}, "ttmemory.E033"),
        ({"API_NAMESPACE_RESOLVER": "nowhere.resolve"}, "ttmemory.E033"),
        ({"API_NAMESPACE_RESOLVER": "ttmemory.conf.DEFAULTS"}, "ttmemory.E033"),
    ],
)
def test_every_backend_family_is_checked(overrides: dict[str, Any], check_id: str) -> None:
    found = messages_for(overrides)

    assert ids(found) == [check_id]
    assert next(iter(overrides)) in found[0].msg + (found[0].hint or "")


def test_working_backends_of_every_family_pass() -> None:
    assert (
        messages_for(
            {
                "LLM": {"BACKEND": "ttmemory.backends.llm.ScriptedLLM"},
                "LOCK": {"BACKEND": "ttmemory.backends.locks.LocalLock"},
                "EVENT_OBSERVERS": [{"BACKEND": "ttmemory.backends.events.ListObserver"}],
                "API_NAMESPACE_RESOLVER": "ttmemory.api.namespaces.user_namespace",
            }
        )
        == []
    )


def test_learn_every_none_is_reported_and_crashes_no_append(db: Any, caplog: Any) -> None:
    from django.conf import settings

    from ttmemory import memory

    assert ids(messages_for({"LEARN_EVERY": None})) == ["ttmemory.E024"]
    with override_settings(TTMEMORY={**settings.TTMEMORY, "LEARN_EVERY": None}):
        session = memory.session_open(namespace="checks", key="learn-none")
        memory.message_add(session=session, message={"role": "user", "content": "hi"})
        memory.message_add(session=session, message={"role": "user", "content": "again"})

        assert app_settings.LEARN_EVERY == 0  # the default: off
        assert [m["content"] for m in memory.message_recent(session=session)] == ["hi", "again"]
    logged = [r.getMessage() for r in caplog.records if r.name == "ttmemory.conf"]
    assert len(logged) == 1 and "LEARN_EVERY" in logged[0] and "E024" in logged[0]


def test_accessors_coerce_to_their_type(settings: Any) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "LOCK_TIMEOUT": 5,
        "LEARN_EVERY": "7",
        "BATCH_SIZE": 1e3,
        "RECALL_VECTOR_WEIGHT": 1,
        "ENCRYPTION_KEYS": settings.TTMEMORY["ENCRYPTION_KEYS"][0],
    }

    assert app_settings.LOCK_TIMEOUT == 5.0 and isinstance(app_settings.LOCK_TIMEOUT, float)
    assert app_settings.LEARN_EVERY == 7
    assert app_settings.BATCH_SIZE == 1000 and isinstance(app_settings.BATCH_SIZE, int)
    assert app_settings.RECALL_VECTOR_WEIGHT == 1.0
    assert [settings.TTMEMORY["ENCRYPTION_KEYS"]] == app_settings.ENCRYPTION_KEYS
    assert messages_for({}) == []


def test_a_bad_key_or_backend_raises_when_read_instead_of_falling_back(settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "ENCRYPTION_KEYS": 42, "LLM": "gpt-4o"}

    with pytest.raises(ImproperlyConfigured, match="ENCRYPTION_KEYS"):
        _ = app_settings.ENCRYPTION_KEYS
    with pytest.raises(ImproperlyConfigured, match="LLM"):
        _ = app_settings.LLM


def test_conf_imports_nothing_from_ttmemory() -> None:
    code = (
        "import sys, ttmemory.conf; "
        "print(sorted(m for m in sys.modules if m.startswith('ttmemory')))"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )

    assert done.returncode == 0, done.stderr
    loaded = ast.literal_eval(done.stdout.strip())
    # The package's own modules only (rules, the declaration, the reset hook).
    assert [m for m in loaded if m != "ttmemory" and not m.startswith("ttmemory.conf")] == []
    assert "ttmemory.conf.settings" in loaded


def test_checks_do_not_import_drf_when_the_api_is_not_installed(tmp_path: Path) -> None:
    (tmp_path / "nodrf_settings.py").write_text(
        "SECRET_KEY = 'x'\nINSTALLED_APPS = ['django.contrib.contenttypes', "
        "'django.contrib.auth', 'ttmemory']\nDATABASES = {}\n"
        f"TTMEMORY = {{'ENCRYPTION_KEYS': [{generate_key()!r}], "
        f"'BLIND_INDEX_KEY': {base64.urlsafe_b64encode(os.urandom(32)).decode()!r}, "
        "'API_NAMESPACE_RESOLVER': 'nowhere.resolve'}\n"
    )
    code = (
        # DRF is not installed (and so neither is drf-spectacular, which needs it)
        "import sys; sys.modules['rest_framework'] = sys.modules['drf_spectacular'] = None; "
        "import django; django.setup(); "
        "from django.core.management import call_command; call_command('check'); "
        "print('drf' if sys.modules.get('rest_framework') else 'no drf')"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TTMEMORY_")}
    env.update(DJANGO_SETTINGS_MODULE="nodrf_settings", PYTHONPATH=f"{tmp_path}:{ROOT}")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("no drf")


# Each cache built from TTMEMORY resets itself on setting_changed (conf imports none of them).


def test_changed_encryption_keys_take_effect_and_are_restored(settings: Any) -> None:
    from ttmemory.crypto import get_keyring

    before = get_keyring().primary_key_id
    with override_settings(TTMEMORY={**settings.TTMEMORY, "ENCRYPTION_KEYS": [generate_key("x9")]}):
        assert get_keyring().primary_key_id == "x9"
    assert get_keyring().primary_key_id == before


def test_a_changed_blind_key_changes_the_term_hashes(settings: Any) -> None:
    from ttmemory.longterm.blind import term_hash

    before = term_hash("peanuts", namespace="user-1")
    other = base64.urlsafe_b64encode(os.urandom(32)).decode()
    with override_settings(TTMEMORY={**settings.TTMEMORY, "BLIND_INDEX_KEY": other}):
        assert term_hash("peanuts", namespace="user-1") != before
    assert term_hash("peanuts", namespace="user-1") == before


def test_backends_and_observers_are_rebuilt_from_changed_settings(settings: Any) -> None:
    from ttmemory.backends.embedders import get_embedder
    from ttmemory.backends.events import ListObserver
    from ttmemory.backends.llm import ScriptedLLM, get_llm
    from ttmemory.backends.locks import LocalLock, get_lock
    from ttmemory.events import get_observers

    changed = {
        **settings.TTMEMORY,
        "EMBEDDER": {
            "BACKEND": "ttmemory.backends.embedders.HashEmbedder",
            "OPTIONS": {"dimensions": 64},
        },
        "LLM": {"BACKEND": "ttmemory.backends.llm.ScriptedLLM"},
        "LOCK": {"BACKEND": "ttmemory.backends.locks.LocalLock"},
        "EVENT_OBSERVERS": [{"BACKEND": "ttmemory.backends.events.ListObserver"}],
    }
    embedder, llm, lock = get_embedder(), get_llm(), get_lock()
    with override_settings(TTMEMORY=changed):
        assert get_embedder().dimensions == 64
        assert isinstance(get_llm(), ScriptedLLM)
        assert isinstance(get_lock(), LocalLock)
        assert [type(o) for o in get_observers()] == [ListObserver]
    assert get_embedder().dimensions == embedder.dimensions
    assert get_llm() is None and llm is None
    assert type(get_lock()) is type(lock)
    assert not any(isinstance(o, ListObserver) for o in get_observers())


def test_a_changed_namespace_resolver_is_used(settings: Any, rf: Any) -> None:
    from ttmemory.api.namespaces import resolve_namespace

    request = rf.get("/")
    request.auth = None
    request.user = type("U", (), {"is_authenticated": True, "pk": 7})()
    assert resolve_namespace(request) == "user-7"
    with override_settings(
        TTMEMORY={**settings.TTMEMORY, "API_NAMESPACE_RESOLVER": lambda request: "team-1"}
    ):
        assert resolve_namespace(request) == "team-1"
    assert resolve_namespace(request) == "user-7"


def test_a_settings_change_closes_the_embedder_breaker(settings: Any) -> None:
    from ttmemory.longterm.embedding import health, reset_health

    health.open_until = time.monotonic() + 60
    try:
        settings.TTMEMORY = {**settings.TTMEMORY, "EMBEDDER_BREAKER_SECONDS": 1.0}
        assert health.open_until == 0.0
    finally:
        reset_health()


def test_lifetimes_take_a_timedelta_or_seconds_and_none_keeps_forever(settings: Any) -> None:
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "SESSION_TTL": dt.timedelta(days=90),
        "SNAPSHOT_TTL": 3600,
        "AUDIT_TTL": "86400",
        "LEDGER_TTL": None,
    }
    assert messages_for({}) == []
    read = (app_settings.SESSION_TTL, app_settings.SNAPSHOT_TTL, app_settings.AUDIT_TTL)
    assert read == (dt.timedelta(days=90), dt.timedelta(hours=1), dt.timedelta(days=1))
    assert app_settings.LEDGER_TTL is None and app_settings.ARCHIVED_MESSAGE_TTL is None


# A newcomer's setup mistakes: each is a check with an id and a hint, and only when true.


@pytest.mark.parametrize(
    ("removed", "check_id", "url"),
    [
        # DRF's browsable page (what a browser gets from any endpoint), then the docs page
        ("rest_framework", "ttmemory.E070", "/api/memory/sessions/"),
        ("drf_spectacular", "ttmemory.E071", "/api/memory/docs/"),
    ],
)
def test_the_mounted_api_without_its_apps_is_an_error_and_really_answers_500(
    settings: Any, removed: str, check_id: str, url: str
) -> None:
    from django.test import Client

    settings.INSTALLED_APPS = [
        app for app in settings.INSTALLED_APPS if not app.startswith(removed)
    ]

    found = [m for m in run_checks(tags=["ttmemory"]) if m.id.startswith("ttmemory.E07")]
    page = Client(raise_request_exception=False).get(url, HTTP_ACCEPT="text/html")

    assert ids(found) == [check_id]
    assert removed in found[0].msg and "drf_spectacular_sidecar" in (found[0].hint or "")
    assert page.status_code == 500  # what the check prevents: TemplateDoesNotExist


def test_the_api_apps_are_not_required_when_the_api_is_not_mounted(settings: Any) -> None:
    settings.INSTALLED_APPS = [
        app
        for app in settings.INSTALLED_APPS
        if app not in {"rest_framework", "drf_spectacular", "drf_spectacular_sidecar"}
    ]
    settings.ROOT_URLCONF = "tests.urls_without_api"

    assert checks.check_api_apps() == []
    settings.ROOT_URLCONF = "demo_project.urls"
    assert ids(checks.check_api_apps()) == ["ttmemory.E070", "ttmemory.E071"]


def test_a_development_sqlite_is_not_warned_about_but_a_deployment_is(settings: Any) -> None:
    from django.db import connections

    conn = connections["default"]
    original = conn.settings_dict.get("OPTIONS", {})
    conn.settings_dict["OPTIONS"] = {}
    try:
        development = ids(run_checks(tags=["ttmemory"], databases=["default"]))
        deployment = ids(run_checks(tags=["ttmemory"], include_deployment_checks=True))
    finally:
        conn.settings_dict["OPTIONS"] = original
    assert "ttmemory.W001" not in development
    assert ("ttmemory.W001" in deployment) == (conn.vendor == "sqlite")


CELERY_SETTINGS = """\
SECRET_KEY = 'x'
INSTALLED_APPS = ['django.contrib.contenttypes', 'django.contrib.auth', 'ttmemory']
DATABASES = {{}}
TTMEMORY = {{'ENCRYPTION_KEYS': [{key!r}], 'BLIND_INDEX_KEY': {blind!r}}}
{extra}
"""
# The project's celery.py, as docs/installation.md writes it (loaded by the settings here).
CELERY_APP = """\
from celery import Celery
app = Celery('mysite')
app.config_from_object('django.conf:settings', namespace='CELERY')
"""


@pytest.mark.parametrize(
    ("app", "extra", "warned"),
    [
        (CELERY_APP, "", True),  # the project's app, no broker: jobs silently inline
        (CELERY_APP, "CELERY_BROKER_URL = 'redis://127.0.0.1:6379/0'", False),
        (CELERY_APP, "CELERY_TASK_ALWAYS_EAGER = True", False),
        (CELERY_APP, "TTMEMORY['JOBS'] = 'inline'", False),  # chosen, so said
        ("", "", False),  # no app of the project: Celery came as another package's dependency
    ],
)
def test_a_celery_app_without_a_broker_is_warned_about(
    tmp_path: Path, app: str, extra: str, warned: bool
) -> None:
    (tmp_path / "celery_app.py").write_text(app)
    (tmp_path / "celery_settings.py").write_text(
        "import celery_app\n"
        + CELERY_SETTINGS.format(
            key=generate_key(),
            blind=base64.urlsafe_b64encode(os.urandom(32)).decode(),
            extra=extra,
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TTMEMORY_", "CELERY"))}
    env.update(DJANGO_SETTINGS_MODULE="celery_settings", PYTHONPATH=f"{tmp_path}:{ROOT}")
    done = subprocess.run(
        [sys.executable, "-m", "django", "check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert ("ttmemory.W070" in done.stderr) == warned, done.stderr
    if warned:
        assert "'mysite' has no broker_url" in done.stderr and "CELERY_BROKER_URL" in done.stderr


def test_migrate_on_a_server_with_pgvector_warns_nothing_and_installs_it() -> None:
    """Before the first migrate the extension is missing but the migration creates it: no W050
    (`./dev demo` printed it there). A server without pgvector still gets it
    (tests/databases/test_without_pgvector.py)."""
    from django.conf import settings

    default = settings.DATABASES["default"]
    if default["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("pgvector is PostgreSQL's; SQLite has no W050")
    import psycopg

    params = {
        key: default.get(name) or None
        for key, name in (("host", "HOST"), ("port", "PORT"), ("user", "USER"))
    } | {"password": default.get("PASSWORD") or None}
    name = f"ttm_fresh_{os.urandom(4).hex()}"
    with psycopg.connect(autocommit=True, dbname="postgres", **params) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    env = {k: v for k, v in os.environ.items() if k != "TTMEMORY_EMBEDDED_DB"}
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings",
        DATABASE_URL=f"postgres://{params['user'] or ''}@/{name}"
        f"?host={params['host'] or ''}&port={params['port'] or ''}",
    )
    try:
        migrated = subprocess.run(
            [sys.executable, "-m", "django", "migrate", "--no-input"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        with psycopg.connect(dbname=name, **params) as conn:
            installed = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
            has_vector = installed.fetchone() is not None
    finally:
        with psycopg.connect(autocommit=True, dbname="postgres", **params) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    assert migrated.returncode == 0, migrated.stderr
    assert "Applying ttmemory.0001_initial... OK" in migrated.stdout
    assert "W050" not in migrated.stderr, migrated.stderr
    assert has_vector
