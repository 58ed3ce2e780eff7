"""Optional backends and integrations leave the host's logging alone and print no warning.

Each runs in a fresh interpreter (an import happens once per process) with every warning shown
(``-W default``), and reports the root logger before and after: its handlers and its level.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.backends.test_embedders import model_package

ROOT = Path(__file__).resolve().parents[2]

PROBE = """\
import json, logging, sys, warnings
import django
from django.conf import settings
settings.configure(
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "ttmemory"],
    DATABASES={{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}}},
    TTMEMORY={{
        "ENCRYPTION_KEYS": ["k1:" + "A" * 43 + "="],
        "BLIND_INDEX_KEY": "OAWBs9gxJJqHMWihgu7Jz_wRpTQ_8gDU7FO8zESXnlU=",
    }},
)
django.setup()
root = logging.getLogger()
def state():
    return [[type(h).__name__ for h in root.handlers], root.level]
before = state()
{code}
print("PROBE " + json.dumps({{"before": before, "after": state()}}))
"""


def probe(code: str, *, extra_path: str = "") -> tuple[dict[str, list[object]], str]:
    """Run ``code`` after Django's setup; (root logger before and after, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "TTMEMORY_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, str(ROOT)) if p)
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", PROBE.format(code=textwrap.dedent(code))],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith("PROBE ")]
    return json.loads(line[6:]), done.stderr


def test_the_wordllama_backend_leaves_logging_alone_and_is_quiet() -> None:
    """wordllama calls logging.basicConfig(level=INFO) at import; the backend undoes it."""
    if importlib.util.find_spec("wordllama") is None:
        pytest.fail("wordllama not installed: pip install 'wordllama==0.4.0.post1'")
    roots, stderr = probe(
        """
        from ttmemory.backends.embedders import WordLlamaEmbedder
        vectors = WordLlamaEmbedder(dimensions=64).embed(["peanut allergy"])
        assert len(vectors[0]) == 64
        logging.getLogger("celery.worker").info("an INFO line of another library")
        """
    )

    assert roots["after"] == roots["before"] == [[], logging_warning()]
    assert stderr == ""  # no warning, and no INFO line of another library


def test_the_unpatched_wordllama_import_does_change_logging() -> None:
    """What the test above guards against is real: importing wordllama itself configures it."""
    if importlib.util.find_spec("wordllama") is None:
        pytest.fail("wordllama not installed: pip install 'wordllama==0.4.0.post1'")
    roots, _ = probe("import wordllama.inference")

    assert roots["before"] == [[], logging_warning()]
    assert roots["after"] == [["StreamHandler"], 20]  # INFO


def logging_warning() -> int:
    return 30  # logging.WARNING, the root logger's default level


# A stand-in for sentence-transformers 5.4+, where the old name warns (the real package needs
# torch, which this venv does not have: tests/backends/test_embedders.py runs the real model
# in .venv-embed and asserts the same).
RENAMED = """\
import warnings
class SentenceTransformer:
    def __init__(self, path, device):
        pass
    def get_embedding_dimension(self):
        return 8
    def get_sentence_embedding_dimension(self):
        warnings.warn(
            "The `get_sentence_embedding_dimension` method has been renamed to "
            "`get_embedding_dimension`.",
            FutureWarning,
        )
        return 8
    def encode(self, texts, **options):
        import numpy
        return numpy.ones((len(texts), 8))
"""


def test_the_sentence_transformer_backend_calls_the_new_name_without_a_warning(
    tmp_path: Path,
) -> None:
    (tmp_path / "sentence_transformers.py").write_text(RENAMED)
    model_package(tmp_path, "ttm_quiet_model", 8)

    roots, stderr = probe(
        """
        from ttmemory.backends.embedders import SentenceTransformerEmbedder
        embedder = SentenceTransformerEmbedder(package="ttm_quiet_model")
        assert len(embedder.embed(["hello"])[0]) == 8
        """,
        extra_path=str(tmp_path),
    )

    assert roots["after"] == roots["before"]
    assert "FutureWarning" not in stderr and stderr == "", stderr


@pytest.mark.parametrize(
    "module",
    [
        "ttmemory.backends.embedders",
        "ttmemory.backends.llm",
        "ttmemory.backends.locks",
        "ttmemory.backends.events",
        "ttmemory.integrations.openai_agents",
        "ttmemory.integrations.langgraph",
        "ttmemory.integrations.mcp",
        "ttmemory.telemetry.prometheus",
    ],
)
def test_every_optional_integration_imports_quietly(module: str) -> None:
    roots, stderr = probe(f"import importlib; importlib.import_module({module!r})")

    assert roots["after"] == roots["before"]
    assert stderr == "", stderr
