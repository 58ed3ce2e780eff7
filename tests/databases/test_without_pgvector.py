"""PostgreSQL without pgvector: migrate, remember, recall, a window, check W050, move to pgvector.

The first test uses this machine's own PostgreSQL 15 (127.0.0.1:5432, user postgres, trust
auth), which has no pgvector: a required service here, so an unreachable server fails the test
(the ``system_postgres_database`` fixture of ``tests/conftest.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import TestCase

from tests.conftest import raw_rows
from ttmemory import memory
from ttmemory.checks import check_pgvector
from ttmemory.longterm.vector_index import SHIPPED_DIMENSIONS, index_name
from ttmemory.models.vectors import vector_storage_reset

ROOT = Path(__file__).resolve().parents[2]

# Run inside the migrated database: facts, recall, a session window, the checks, the command.
USE_IT = """
import io, json
import django
django.setup()
from django.core import checks
from django.core.management import call_command
from django.db import connection
from ttmemory import memory
from ttmemory.backends.embedders import get_embedder
from ttmemory.longterm import recall

for text in ("Ada is allergic to peanuts", "Ada prefers window seats", "Ada lives in Lisbon"):
    memory.fact_remember(namespace="user-1", text=text)
found = memory.fact_recall(namespace="user-1", query="peanuts allergy", k=3)
embedder = get_embedder()
query_vector = embedder.embed(["Ada allergic peanuts"])[0]
from ttmemory.models import Fact
by_vector = recall.vector_scores(
    Fact.objects.filter(namespace="user-1"), query_vector, embedder.model, 3, approximate=False
)
texts = {f.pk: f.text for f in Fact.objects.filter(namespace="user-1")}
with connection.cursor() as cursor:
    cursor.execute(
        "SELECT pg_typeof(embedding)::text, octet_length(embedding::bytea), embedding_dim "
        "FROM ttmemory_fact ORDER BY id LIMIT 1"
    )
    stored = cursor.fetchone()
from django.conf import settings
from django.test.utils import override_settings
vectors_too = override_settings(TTMEMORY={**settings.TTMEMORY, "MESSAGE_SEARCH_VECTOR_WEIGHT": 0.5})
vectors_too.enable()
session = memory.session_open(namespace="user-1", key="chat-1")
memory.message_add_many(session=session, messages=[
    {"role": "user", "content": "Where do I sit?"},
    {"role": "assistant", "content": "By the window, as you prefer."},
])
memory.message_add(session=session, message={"role": "user", "content": "Thanks!"})
warnings = [m for m in checks.run_checks(databases=["default"]) if m.id == "ttmemory.W050"]
out = io.StringIO()
call_command("ttmemory_reembed", stdout=out)
from ttmemory.models import MessageEntry
from ttmemory.services.episodes import messages_index_pending
searched = memory.message_search(namespace="user-1", query="window seat", k=2, window=0)
# The third message is past the index job's trigger (first message, then every 32): the search
# above scored it from the stored message; the catch-up job stores its vector too.
messages_index_pending(namespace="user-1")
from ttmemory import jobs
assert jobs.drain(30)  # message_embed, queued by the catch-up, runs on the background thread
message_vectors = list(MessageEntry.objects.values_list("embedding_dim", flat=True))
print(json.dumps({
    "mode": found.mode,
    "hits": [[fact.text, score] for fact, score in found.hits],
    "vector_top": texts[max(by_vector, key=by_vector.get)] if by_vector else None,
    "vector_scored": len(by_vector),
    "stored": list(stored),
    "dimensions": embedder.dimensions,
    "window": memory.context_window(session=session, max_tokens=1000),
    "recent": memory.message_recent(session=session, limit=2),
    "w050": [[m.level, m.msg, m.hint] for m in warnings],
    "reembed": out.getvalue(),
    "searched": [hit.seq for hit in searched],
    "message_vectors": message_vectors,
}))
"""


def run(code_or_args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *code_or_args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_postgresql_without_pgvector_migrates_stores_vectors_as_bytes_and_recalls(
    system_postgres_database: str,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TTMEMORY_EMBEDDED_DB"}
    env.update(DATABASE_URL=system_postgres_database, DJANGO_SETTINGS_MODULE="tests.settings")
    # A fixed blind-index key for this one process. The episodic search below weighs
    # HashEmbedder's vectors at 0.5, and those are keyed hashes of words: under the suite's
    # random key a bucket collision can rank "Where do I sit?" over "By the window" (12 of 2,000
    # random keys swap the two messages' vector order; CI failed on one, stop 31). This test
    # is about storing and scoring vectors without pgvector, not about one key's collisions.
    env["TTMEMORY_TEST_BLIND_KEY"] = "OAWBs9gxJJqHMWihgu7Jz_wRpTQ_8gDU7FO8zESXnlU="

    migrated = run(["-m", "django", "migrate", "--no-input"], env)
    assert migrated.returncode == 0, migrated.stderr
    assert "Applying ttmemory.0001_initial... OK" in migrated.stdout
    # Before and after migrate the check says what is missing and how to add it.
    assert "ttmemory.W050" in migrated.stderr
    checked = run(["-m", "django", "check", "--database", "default"], env)
    assert checked.returncode == 0, checked.stderr
    assert "ttmemory.W050" in checked.stderr and "CREATE EXTENSION vector" in checked.stderr
    # One model state on every database: nothing to migrate here either.
    unchanged = run(["-m", "django", "makemigrations", "--check", "--dry-run"], env)
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr

    used = run(["-c", USE_IT], env)
    assert used.returncode == 0, used.stderr
    result: dict[str, Any] = json.loads(used.stdout.strip().splitlines()[-1])

    # Hybrid recall: keyword (blind index) and vector (float32 bytes, numpy) both ran.
    assert result["mode"] == "hybrid"
    assert result["hits"][0][0] == "Ada is allergic to peanuts"
    assert result["vector_scored"] == 3
    assert result["vector_top"] == "Ada is allergic to peanuts"
    assert result["stored"] == ["bytea", 4 * result["dimensions"], result["dimensions"]]
    assert result["window"] == [
        {"role": "user", "content": "Where do I sit?"},
        {"role": "assistant", "content": "By the window, as you prefer."},
        {"role": "user", "content": "Thanks!"},
    ]
    assert result["recent"] == result["window"][1:]
    # Episodic search: its vectors are float32 bytes too (made by the embedding job).
    assert result["searched"][0] == 2
    assert result["message_vectors"] == [result["dimensions"]] * 3
    [(level, message, hint)] = result["w050"]
    assert level == 30  # a Warning: keyword + numpy vectors work, only pgvector is missing
    assert "the server has no pgvector extension" in message
    assert "CREATE EXTENSION vector" in hint and "ttmemory_reembed" in hint
    # ttmemory_reembed says why it cannot move the vectors yet, and changes nothing.
    assert "no pgvector extension" in result["reembed"]
    assert "moved" not in result["reembed"]


# Run against a fresh database on the embedded server (PostgreSQL 18 with pgvector).
FROM_0005 = """
import json
import django
django.setup()
import psycopg
from django.core.management import call_command
from django.db import connection, connections

def column_type():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'ttmemory_fact'::regclass AND attname = 'embedding'"
        )
        return cursor.fetchone()[0]

call_command("migrate", "ttmemory", "0005", verbosity=0)
before = column_type()
call_command("migrate", verbosity=0)
after = column_type()
with connection.cursor() as cursor:
    cursor.execute("SELECT extname FROM pg_extension WHERE extname = 'vector'")
    extension = cursor.fetchone()
params = dict(connection.get_connection_params())
name = connection.settings_dict["NAME"]
connections.close_all()
params["dbname"] = "postgres"
with psycopg.connect(**params, autocommit=True) as admin:
    admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
print(json.dumps({"before": before, "after": after, "extension": extension}))
"""


def test_a_database_with_pgvector_migrates_from_0005_to_head_with_its_vector_column() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings",
        TTMEMORY_EMBEDDED_DB=f"ttm_from0005_{uuid.uuid4().hex[:10]}",
    )

    done = run(["-c", FROM_0005], env)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"before": "vector", "after": "vector", "extension": ["vector"]}


@pytest.fixture
def bytes_column(db: Any) -> Iterator[None]:
    """The embedding column as a database migrated before pgvector was installed has it."""
    if connection.vendor != "postgresql":
        pytest.skip("moving the column to pgvector needs PostgreSQL with pgvector")
    with connection.cursor() as cursor:
        # Such a database never got the HNSW indexes (migration 0013 skips them there).
        for dimensions in SHIPPED_DIMENSIONS:
            cursor.execute(f"DROP INDEX {index_name(dimensions)}")
        cursor.execute("ALTER TABLE ttmemory_fact ALTER COLUMN embedding TYPE bytea USING NULL")
        cursor.execute(
            "ALTER TABLE ttmemory_messageentry ALTER COLUMN embedding TYPE bytea USING NULL"
        )
    vector_storage_reset(connection)
    yield
    vector_storage_reset(connection)  # the test's transaction rolls the column type back


def test_reembed_moves_byte_vectors_to_pgvector_once_the_extension_is_installed(
    bytes_column: None, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_VECTOR_WEIGHT": 0.5}
    for text in ("Ada is allergic to peanuts", "Ada prefers window seats", "Ada lives in Lisbon"):
        memory.fact_remember(namespace="user-1", text=text)
    session = memory.session_open(namespace="user-1", key="chat")
    with TestCase.captureOnCommitCallbacks(execute=True):  # the message_embed job
        memory.message_add(session=session, message={"role": "user", "content": "window seat"})
    assert raw_rows("SELECT DISTINCT pg_typeof(embedding)::text FROM ttmemory_fact") == [("bytea",)]
    before = memory.fact_recall(namespace="user-1", query="peanuts allergy", k=3)
    [warning] = check_pgvector(databases=["default"])
    assert warning.id == "ttmemory.W050"
    assert "created before pgvector was installed" in warning.msg
    assert "ttmemory_reembed" in (warning.hint or "")
    assert "CREATE EXTENSION" not in (warning.hint or "")  # it is installed already

    out = _reembed()

    assert "moved 4 stored vectors to a pgvector column" in out  # 3 facts, 1 message
    assert raw_rows("SELECT pg_typeof(embedding)::text FROM ttmemory_messageentry") == [("vector",)]
    assert memory.message_search(namespace="user-1", query="window seat")[0].seq == 1
    assert "0 facts re-embedded" in out  # the vectors were kept, not recomputed
    assert raw_rows("SELECT DISTINCT pg_typeof(embedding)::text FROM ttmemory_fact") == [
        ("vector",)
    ]
    after = memory.fact_recall(namespace="user-1", query="peanuts allergy", k=3)
    assert after.mode == before.mode == "hybrid"
    assert [f.text for f in after.facts] == [f.text for f in before.facts]
    assert [s for _, s in after.hits] == pytest.approx([s for _, s in before.hits], abs=1e-6)
    assert check_pgvector(databases=["default"]) == []


def test_no_w050_where_vectors_are_native_or_the_database_is_not_postgresql(db: Any) -> None:
    # The embedded server has pgvector; SQLite stores bytes by design: nothing to say either way.
    assert check_pgvector(databases=["default"]) == []


def _reembed() -> str:
    out = StringIO()
    call_command("ttmemory_reembed", stdout=out)
    return out.getvalue()
