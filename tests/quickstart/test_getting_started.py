"""The docs site's getting-started page, executed literally in a fresh project, then the
examples of the concepts page that continue it.

Every fenced block of docs/getting-started.md, and every block of docs/concepts.md, carries a
marker on the line before it, so neither page can grow a block this test does not know about:

- ``<!-- quickstart: shell -->``: run with bash in the project folder, the fresh venv first on
  ``PATH``; ``export NAME="value"`` lines it prints (``python -m ttmemory init``) are put in the
  environment of every later block, as the page tells the user to do.
- ``<!-- quickstart: settings -->``: appended to the project's ``settings.py``.
- ``<!-- quickstart: urls -->``: appended to the project's ``urls.py``.
- ``<!-- quickstart: python -->``: run in order in one ``python manage.py shell``.
- ``<!-- quickstart: skip (reason) -->``: not run (it needs a server this machine lacks).

What the test changes, and nothing else:

- ``path/to/ttmemory-checkout`` in a shell block becomes the wheel built from this checkout
  once per run (so the extras the page names are installed from it);
- ``127.0.0.1:8000`` in a shell block becomes a free port of this machine (other test runs
  may be serving on 8000);
- ``NAME = [..., x]`` / ``NAME = {..., x}`` in a settings block becomes ``NAME = [*NAME, x]`` /
  ``{**NAME, x}``: the page's "what you already have";
- on PostgreSQL it appends ``DATABASE_SETTINGS`` (below) to ``settings.py``, so the project uses
  a database of its own on the server the suite runs on (``DATABASE_URL``); on SQLite the
  project keeps ``startproject``'s own ``db.sqlite3``.

The fresh project is ``django-admin startproject`` in a temp folder with a venv of its own that
holds Django and then whatever the page installs, never this checkout's source. Afterwards the
project must print no warning of ttmemory's in ``check``, in ``migrate`` and in
``check --deploy`` with ``DEBUG`` off (Django's own deployment warnings aside), and its memory,
API, API docs page and admin must answer without a 500.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings

from tests.backends.redis_servers import RedisServer, require_redis_server

ROOT = Path(__file__).resolve().parents[2]
GETTING_STARTED = ROOT / "docs" / "getting-started.md"
CONCEPTS = ROOT / "docs" / "concepts.md"
MARKER = re.compile(r"^<!-- quickstart: (shell|settings|urls|python|skip)\b.*-->$")
FENCE = re.compile(r"^```(\w*)$")
EXPORT = re.compile(r'^export ([A-Z_][A-Z0-9_]*)="([^"]*)"$', re.M)
ELLIPSIS_LIST = re.compile(r"^(\w+) = \[\.\.\.,", re.M)
ELLIPSIS_DICT = re.compile(r"^(\w+) = \{\.\.\.,", re.M)
CHECKOUT = "path/to/ttmemory-checkout"
SERVER = "127.0.0.1:8000"

# Appended to the fresh project's settings.py on PostgreSQL: not from the docs.
DATABASE_SETTINGS = """

# Added by tests/quickstart/test_getting_started.py (not from the docs): the database under test.
import os as _os
from urllib.parse import parse_qs as _parse_qs, unquote as _unquote, urlsplit as _urlsplit

if _os.environ.get("DATABASE_URL", "").startswith("postgres"):
    _url = _urlsplit(_os.environ["DATABASE_URL"])
    _query = {key: values[0] for key, values in _parse_qs(_url.query).items()}
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": _url.path.lstrip("/"),
            "USER": _unquote(_url.username or ""),
            "PASSWORD": _unquote(_url.password or ""),
            "HOST": _query.get("host", _url.hostname or ""),
            "PORT": _query.get("port", str(_url.port or "")),
        }
    }
"""

# Runs the python blocks in order in one `manage.py shell`, naming the block that fails.
RUNNER = """\
import linecache, sys, traceback
for _name, _code in QUICKSTART_BLOCKS:
    print(f"=== {_name}", flush=True)
    linecache.cache[_name] = (len(_code), None, _code.splitlines(True), _name)
    try:
        exec(compile(_code, _name, "exec"), globals())
    except BaseException:
        traceback.print_exc()
        print(f"QUICKSTART FAILED: {_name}", flush=True)
        sys.exit(1)
from django.db import connection
print(f"QUICKSTART OK on {connection.vendor}", flush=True)
"""


@dataclass(frozen=True)
class Block:
    kind: str  # shell, settings, urls, python or skip
    line: int  # of the opening fence in its page
    code: str
    page: str = "getting-started.md"

    @property
    def name(self) -> str:
        first = next((ln for ln in self.code.splitlines() if ln.strip()), "")
        return f"{self.page}:{self.line} ({self.kind}: {first.strip()[:60]})"


def quickstart_blocks(text: str, page: str = "getting-started.md") -> list[Block]:
    """The fenced blocks of a docs page, each with its marker's kind."""
    lines = text.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        if FENCE.match(lines[index]):
            marker = MARKER.match(lines[index - 1]) if index else None
            if marker is None:
                raise AssertionError(
                    f"{page}:{index + 1}: a block without a "
                    "<!-- quickstart: shell|settings|urls|python|skip (reason) --> marker"
                )
            end = index + 1
            while not lines[end].startswith("```"):
                end += 1
            code = "\n".join(lines[index + 1 : end]) + "\n"
            blocks.append(Block(marker.group(1), index + 1, code, page))
            index = end
        index += 1
    return blocks


def page_blocks() -> list[Block]:
    """Getting started, then the concepts page's examples, which continue its session."""
    concepts = quickstart_blocks(CONCEPTS.read_text(), "concepts.md")
    assert {b.kind for b in concepts} <= {"python", "skip"}, "concepts.md only runs Python"
    return quickstart_blocks(GETTING_STARTED.read_text()) + concepts


def apply_settings(code: str) -> str:
    """The page's ``[..., x]`` placeholders extend what the project already has."""
    code = ELLIPSIS_LIST.sub(r"\1 = [*\1,", code)
    return ELLIPSIS_DICT.sub(r"\1 = {**\1,", code)


def test_every_block_of_the_pages_is_marked_and_the_page_is_runnable() -> None:
    blocks = page_blocks()

    kinds = [block.kind for block in blocks]
    assert kinds.count("shell") >= 2 and "settings" in kinds and "python" in kinds
    installs = [b for b in blocks if b.kind == "shell" and "pip install" in b.code]
    assert installs and all(CHECKOUT in b.code for b in installs), (
        f"the install line must name {CHECKOUT!r}, which the test replaces by the wheel"
    )
    assert 'INSTALLED_APPS = [*INSTALLED_APPS, "ttmemory"]' in apply_settings(
        'INSTALLED_APPS = [..., "ttmemory"]'
    )


def test_a_failing_python_block_fails_the_run_and_is_named(tmp_path: Path) -> None:
    blocks = [
        ("getting-started.md:1 (python: x = 1)", "x = 1\n"),
        ("getting-started.md:9 (python: y)", "y = x + z\n"),
    ]
    script = tmp_path / "blocks.py"
    script.write_text(f"QUICKSTART_BLOCKS = {blocks!r}\n{RUNNER}")

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)

    assert done.returncode == 1
    assert "QUICKSTART FAILED: getting-started.md:9 (python: y)" in done.stdout
    assert "y = x + z" in done.stderr and "NameError" in done.stderr  # the block's own line


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout, built once per run; the build writes nothing into the checkout."""
    before = {p.name for p in ROOT.iterdir()}
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    created = {p.name for p in ROOT.iterdir()} - before
    assert not created, f"building the checkout wrote {sorted(created)} into it"
    (built,) = out.glob("ttmemory-*.whl")
    return built


@pytest.fixture
def database_url() -> Any:
    """A fresh database on the suite's PostgreSQL server, or None on SQLite."""
    default = settings.DATABASES["default"]
    if default["ENGINE"] != "django.db.backends.postgresql":
        yield None
        return
    import psycopg  # on SQLite runs the driver may be missing

    name = f"ttmemory_quickstart_{uuid.uuid4().hex[:8]}"
    params = {
        "host": default.get("HOST") or None,
        "port": default.get("PORT") or None,
        "user": default.get("USER") or None,
        "password": default.get("PASSWORD") or None,
        "dbname": "postgres",
    }
    with psycopg.connect(autocommit=True, **params) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    user = quote(default.get("USER") or "", safe="")
    password = quote(default.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else f"{user}@"
    query = f"host={quote(default.get('HOST') or '', safe='')}&port={default.get('PORT') or ''}"
    try:
        yield f"postgres://{auth}/{name}?{query}"
    finally:
        with psycopg.connect(autocommit=True, **params) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run(
    cmd: list[str],
    *,
    name: str,
    cwd: Path,
    env: dict[str, str],
    stderr: dict[str, str] | None = None,
) -> str:
    """Run one step of the quickstart; fail naming the step, with what it printed. Its stderr
    goes to ``stderr[name]`` when given."""
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    print(f"{name}: {time.monotonic() - started:.1f} s")
    if stderr is not None:
        stderr[name] = done.stderr
    if done.returncode != 0:
        pytest.fail(
            f"{name} failed (exit {done.returncode})\n--- stdout\n{done.stdout[-6000:]}"
            f"\n--- stderr\n{done.stderr[-6000:]}",
            pytrace=False,
        )
    return done.stdout


def project_env(venv: Path, database_url: str | None) -> dict[str, str]:
    """This environment without the suite's settings, keys or database; the venv first."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "TTMEMORY_", "DATABASE_URL", "PYTHON", "CELERY"))
        and key != "VIRTUAL_ENV"
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    # The venvs are thrown away: pip's compiling every module it installs (Django, DRF...) was
    # a third of each install; the project's processes compile what they import.
    env["PIP_NO_COMPILE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


def start_project(venv: Path, project: Path, env: dict[str, str]) -> None:
    """The user's project: a venv with Django, and ``django-admin startproject mysite``."""
    base_python = getattr(sys, "_base_executable", None) or shutil.which("python3") or "python3"
    run([base_python, "-m", "venv", str(venv)], name="python -m venv", cwd=venv.parent, env=env)
    run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "Django>=5.2,<6.2"],
        name="pip install Django",
        cwd=venv.parent,
        env=env,
    )
    project.mkdir()
    run(
        [str(venv / "bin" / "django-admin"), "startproject", "mysite", str(project)],
        name="django-admin startproject",
        cwd=venv.parent,
        env=env,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Quickstart:
    project: Path
    env: dict[str, str]
    printed: str  # what the shell blocks printed
    stderr: dict[str, str]  # what each shell block printed on stderr, by block name
    seconds: float  # from the venv to the last block, as a newcomer would wait


def run_quickstart(wheel: Path, database_url: str | None, tmp_path: Path) -> Quickstart:
    """Every block of the pages in a fresh project on ``database_url`` (None: its SQLite);
    fails naming the block that fails."""
    started = time.monotonic()
    blocks = page_blocks()
    venv, project = tmp_path / "venv", tmp_path / "mysite"
    env = project_env(venv, database_url)
    python = str(venv / "bin" / "python")
    start_project(venv, project, env)
    settings_py = project / "mysite" / "settings.py"

    python_blocks: list[Block] = []
    printed: list[str] = []
    stderr: dict[str, str] = {}
    for block in blocks:
        if block.kind == "shell":
            code = block.code.replace(CHECKOUT, str(wheel))
            code = code.replace(SERVER, f"127.0.0.1:{free_port()}")
            out = run(
                ["bash", "-e", "-o", "pipefail", "-c", code],
                name=block.name,
                cwd=project,
                env=env,
                stderr=stderr,
            )
            printed.append(out)
            env.update(EXPORT.findall(out))
        elif block.kind == "urls":
            with (project / "mysite" / "urls.py").open("a") as fh:
                fh.write(f"\n# {block.name}\n{block.code}")
        elif block.kind == "settings":
            with settings_py.open("a") as fh:
                fh.write(f"\n# {block.name}\n{apply_settings(block.code)}")
            if database_url and DATABASE_SETTINGS not in settings_py.read_text():
                with settings_py.open("a") as fh:
                    fh.write(DATABASE_SETTINGS)
        elif block.kind == "python":
            python_blocks.append(block)

    assert {"TTMEMORY_ENCRYPTION_KEYS", "TTMEMORY_BLIND_INDEX_KEY"} <= set(env), (
        "the page's shell blocks never print the keys to export"
    )
    where = run(
        [python, "-c", "import ttmemory; print(ttmemory.__file__)"],
        name="import ttmemory",
        cwd=project,
        env=env,
    )
    assert where.strip().startswith(str(venv)), f"ttmemory imported from {where}"

    script = project / "quickstart_blocks.py"
    script.write_text(
        f"QUICKSTART_BLOCKS = {[(b.name, b.code) for b in python_blocks]!r}\n{RUNNER}"
    )
    out = run(
        [python, "manage.py", "shell", "-c", f"exec(open({str(script)!r}).read())"],
        name="manage.py shell with the pages' python blocks",
        cwd=project,
        env=env,
    )
    assert f"QUICKSTART OK on {'postgresql' if database_url else 'sqlite'}" in out
    assert [ln[4:] for ln in out.splitlines() if ln.startswith("=== ")] == [
        b.name for b in python_blocks
    ]
    seconds = time.monotonic() - started
    print(f"a newcomer's run of the pages: {seconds:.0f} s")
    return Quickstart(project, env, "".join(printed), stderr, seconds)


# Run in the fresh project after the pages: every page a newcomer opens, as a staff user.
PAGES = """import json
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()  # the test client's host, nothing else
user = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw")
browser = Client(raise_request_exception=False)
browser.force_login(user)
urls = ["/api/memory/docs/", "/api/memory/schema/", "/admin/", "/admin/ttmemory/"]
urls += [
    f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
    for model in admin.site._registry
    if model._meta.app_label == "ttmemory"
]
from ttmemory.models import MemorySession
urls += [f"/admin/ttmemory/memorysession/{s.pk}/change/" for s in MemorySession.objects.all()[:3]]
statuses = {url: browser.get(url).status_code for url in urls}
# What a browser gets from the API itself (DRF's browsable page), signed in or not.
statuses["/api/memory/sessions/ (browser)"] = browser.get(
    "/api/memory/sessions/", HTTP_ACCEPT="text/html"
).status_code
statuses["/api/memory/sessions/ (anonymous)"] = Client(raise_request_exception=False).get(
    "/api/memory/sessions/", HTTP_ACCEPT="text/html"
).status_code
docs = browser.get("/api/memory/docs/").content.decode()
print("PAGES", json.dumps({"statuses": statuses, "sidecar": "drf_spectacular_sidecar" in docs}))
"""
CHECK_ID = re.compile(r"^\?: \(([\w.]+)\)", re.M)


def test_the_getting_started_page_runs_in_a_fresh_project_without_a_warning_or_a_500(
    wheel: Path, database_url: str | None, tmp_path: Path
) -> None:
    done = run_quickstart(wheel, database_url, tmp_path)
    project, env = done.project, done.env
    python = str(Path(env["VIRTUAL_ENV"]) / "bin" / "python")

    # The REST API answered: the fact the page posts, then found by the recall it asks for.
    (answer,) = [ln for ln in done.printed.splitlines() if ln.startswith('{"mode":')]
    recall = json.loads(answer)
    assert recall["mode"] == "hybrid"
    assert recall["hits"][0]["fact"]["text"] == "Ada prefers window seats"

    # No warning: not from the first migrate (it printed W001 and W050 before), not from check.
    (migrate,) = [name for name in done.stderr if "manage.py migrate" in name]
    assert CHECK_ID.findall(done.stderr[migrate]) == [], done.stderr[migrate]
    checked = subprocess.run(
        [python, "manage.py", "check", "--database", "default"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0 and checked.stderr == "", checked.stderr
    assert "System check identified no issues (0 silenced)." in checked.stdout

    # check --deploy on the same settings with DEBUG off: only Django's own warnings.
    (project / "mysite" / "deploy_settings.py").write_text(
        "from .settings import *\nDEBUG = False\n"
    )
    deploy = subprocess.run(
        [python, "manage.py", "check", "--deploy", "--database", "default"],
        cwd=project,
        env={**env, "DJANGO_SETTINGS_MODULE": "mysite.deploy_settings"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert deploy.returncode == 0, deploy.stderr
    found = CHECK_ID.findall(deploy.stderr)
    assert found and all(check_id.startswith("security.") for check_id in found), deploy.stderr

    # Memory, API, its docs page and the admin: no 500 anywhere.
    out = run([python, "manage.py", "shell", "-c", PAGES], name="every page", cwd=project, env=env)
    pages = json.loads(out.split("PAGES ", 1)[1])
    assert pages["sidecar"] is True  # Swagger UI from the sidecar app, not a CDN
    statuses = pages["statuses"]
    assert len(statuses) > 8
    anonymous = statuses.pop("/api/memory/sessions/ (anonymous)")
    assert {url: code for url, code in statuses.items() if code != 200} == {}
    assert anonymous in (401, 403)  # refused, and rendered: not a 500


# Run in the fresh project after the quickstart: where it ran, and a recall.
WHERE_AND_RECALL = """\
import json
from django.db import connection
from ttmemory import memory
for text in ("Ada is allergic to peanuts", "Ada prefers window seats", "Ada lives in Lisbon"):
    memory.fact_remember(namespace="user-7", text=text)
found = memory.fact_recall(namespace="user-7", query="peanuts allergy", k=3)
with connection.cursor() as cursor:
    cursor.execute(
        "SELECT inet_server_port(), current_database(), current_setting('server_version_num'), "
        "(SELECT count(*) FROM pg_extension WHERE extname = 'vector'), "
        "(SELECT DISTINCT pg_typeof(embedding)::text FROM ttmemory_fact)"
    )
    server = cursor.fetchone()
print("RESULT", json.dumps({"server": server, "mode": found.mode, "hits": [
    [fact.text, score] for fact, score in found.hits
]}))
"""


def test_the_getting_started_page_runs_on_postgresql_without_pgvector(
    wheel: Path, system_postgres_database: str, tmp_path: Path
) -> None:
    """The same quickstart on a fresh database of this machine's PostgreSQL 15 (no pgvector).

    Runs in the PostgreSQL pass only (the SQLite pass has its own quickstart above): the
    system server is the same whichever database the suite runs on.
    """
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("run once, in the PostgreSQL pass: the system server is the same for both")
    done = run_quickstart(wheel, system_postgres_database, tmp_path)
    project, env = done.project, done.env
    python = str(Path(env["VIRTUAL_ENV"]) / "bin" / "python")

    checked = subprocess.run(
        [python, "manage.py", "check", "--database", "default"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ttmemory.W050" in checked.stderr and "CREATE EXTENSION vector" in checked.stderr
    out = run(
        [python, "manage.py", "shell", "-c", WHERE_AND_RECALL],
        name="where it ran, and a recall",
        cwd=project,
        env=env,
    )
    result = json.loads(out.split("RESULT ", 1)[1])
    port, database, version, extensions, column = result["server"]
    assert (port, database) == (5432, system_postgres_database.rsplit("/", 1)[1])
    assert version.startswith("15") and extensions == 0 and column == "bytea"
    assert result["mode"] == "hybrid"
    assert result["hits"][0][0] == "Ada is allergic to peanuts"


INSTALLATION = ROOT / "docs" / "installation.md"
CELERY_FILES = re.compile(r"^# (mysite/[\w.]+|settings\.py)$", re.M)
CELERY_LEARN = """\
import time
from ttmemory import memory
session = memory.session_open(namespace="user-42", key="support-chat")
memory.message_add(session=session, message={"role": "user", "content": "I'm allergic to peanuts."})
deadline = time.monotonic() + 90
while not memory.fact_list(namespace="user-42") and time.monotonic() < deadline:
    time.sleep(0.5)
print("FACTS", [fact.text for fact in memory.fact_list(namespace="user-42")])
"""


def celery_block() -> dict[str, str]:
    """docs/installation.md's Celery wiring, by file: {"mysite/celery.py": code, ...}."""
    lines = INSTALLATION.read_text().splitlines()
    start = lines.index("<!-- quickstart: celery -->") + 2
    end = lines.index("```", start)
    parts = CELERY_FILES.split("\n".join(lines[start:end]))
    return {name: code.strip() + "\n" for name, code in zip(parts[1::2], parts[2::2], strict=True)}


def test_the_documented_celery_wiring_sends_jobs_to_a_redis_worker(
    wheel: Path, database_url: str | None, tmp_path: Path
) -> None:
    """``ttmemory[celery]`` and the ten lines of docs/installation.md: a worker on Redis learns.

    The test adds ``LEARN_EVERY = 1`` (learn after each message) and points the broker at a
    private redis-server; the job can only finish in the worker (``JOBS = "celery"``).
    """
    require_redis_server()
    files = celery_block()
    assert set(files) == {"mysite/celery.py", "mysite/__init__.py", "settings.py"}
    venv, project = tmp_path / "venv", tmp_path / "mysite"
    env = project_env(venv, database_url)
    python = str(venv / "bin" / "python")
    start_project(venv, project, env)
    run(
        [python, "-m", "pip", "install", "-q", f"{wheel}[postgres,celery]"],
        name="pip install ttmemory[postgres,celery]",
        cwd=project,
        env=env,
    )
    env.update(
        EXPORT.findall(run([python, "-m", "ttmemory", "init"], name="init", cwd=project, env=env))
    )
    broker = RedisServer(tmp_path / "redis").start()
    settings_code = files["settings.py"].replace("redis://127.0.0.1:6379/0", broker.url)
    assert broker.url in settings_code, "the Celery block names no redis://127.0.0.1:6379/0 broker"
    (project / "mysite" / "celery.py").write_text(files["mysite/celery.py"])
    with (project / "mysite" / "__init__.py").open("a") as fh:
        fh.write(files["mysite/__init__.py"])
    with (project / "mysite" / "settings.py").open("a") as fh:
        fh.write('\nINSTALLED_APPS = [*INSTALLED_APPS, "ttmemory"]\n' + settings_code)
        fh.write('TTMEMORY["LEARN_EVERY"] = 1  # added by the test\n')
        if database_url:
            fh.write(DATABASE_SETTINGS)
    run([python, "manage.py", "migrate", "-v", "0"], name="migrate", cwd=project, env=env)

    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [str(venv / "bin" / "celery"), "-A", "mysite", "worker", "-P", "solo", "-l", "info"],
            cwd=project,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        learned = run(
            [python, "manage.py", "shell", "-c", CELERY_LEARN],
            name="a message, learned by the worker",
            cwd=project,
            env=env,
        )
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        broker.stop()
    assert re.search(r"^FACTS \[.*peanuts.*\]$", learned, re.M), (
        f"{learned}\n--- worker\n{log.read_text()[-4000:]}"
    )
    assert re.search(r"Task ttmemory\.learn\[[-\w]+\] succeeded", log.read_text())
