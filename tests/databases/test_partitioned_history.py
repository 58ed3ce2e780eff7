"""Partitioned history (PostgreSQL): the migration's layout, the conversion command, pruning.

With ``TTMEMORY_TEST_PARTITIONED=1`` (the partitioned pass of ``./dev test``) the test database
is migrated with ``PARTITIONED_HISTORY`` set, and the contract suite runs on it. The tests here
also convert a populated plain table inside their transaction (rolled back afterwards), so
they prove the conversion on every PostgreSQL pass.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core import checks
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.test.utils import override_settings

from tests.conftest import assistant, raw_rows, tool_call, tool_result, user
from ttmemory import memory
from ttmemory.models import Message
from ttmemory.models.partitioning import message_partitions
from ttmemory.selectors.sessions import message_recent
from ttmemory.services.sessions import message_pop

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="declarative partitioning is PostgreSQL's"
)
PARTITIONED_RUN = os.environ.get("TTMEMORY_TEST_PARTITIONED") == "1"
ROOT = Path(__file__).resolve().parents[2]


def fill(namespace: str, key: str, turns: int) -> memory.MemorySession:
    session = memory.session_open(namespace=namespace, key=key)
    memory.message_add(session=session, message={"role": "system", "content": "Be brief."})
    for n in range(turns):
        memory.message_add(session=session, message=user(f"question {n} from {key}"))
        memory.message_add(session=session, message=tool_call([f"{key}-call-{n}"]))
        memory.message_add(session=session, message=tool_result(f"{key}-call-{n}", f"r{n}"))
        memory.message_add(session=session, message=assistant(f"answer {n} to {key}"))
    return session


def history(session: memory.MemorySession) -> list[tuple[Any, ...]]:
    return list(
        Message.objects.filter(session=session)
        .order_by("seq")
        .values_list("id", "seq", "group_seq", "archived_at", "data")
    )


def test_the_test_database_has_the_layout_the_run_asked_for(db: Any) -> None:
    if connection.vendor != "postgresql":
        assert message_partitions(connection) is None
    else:
        assert message_partitions(connection) == (8 if PARTITIONED_RUN else 0)


@postgres_only
def test_converting_a_populated_table_keeps_every_message_and_appends_go_on(db: Any) -> None:
    sessions = [fill("user-1", f"chat-{n}", turns=3) for n in range(5)]
    memory.session_trim(session=sessions[0], max_tokens=30)  # archived rows move too
    other = fill("user-2", "chat-0", turns=2)
    before = {s.pk: history(s) for s in [*sessions, other]}
    windows = {s.pk: message_recent(session=s, limit=5) for s in [*sessions, other]}
    top_id = Message.objects.order_by("-id").values_list("id", flat=True)[0]

    out = StringIO()
    call_command("ttmemory_partition", partitions=4, batch_size=7, stdout=out)

    assert message_partitions(connection) == 4
    total = sum(len(rows) for rows in before.values())
    assert f"done: {total} messages in 4 partitions" in out.getvalue()
    assert "copying messages" in out.getvalue()  # the progress bar
    for s in [*sessions, other]:
        assert history(s) == before[s.pk]
        assert message_recent(session=s, limit=5) == windows[s.pk]
    # The primary key now includes the partition key; ids still come from one sequence.
    assert raw_rows(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = 'ttmemory_message'::regclass AND contype = 'p'"
    ) == [("PRIMARY KEY (id, session_id)",)]
    added = memory.message_add(session=sessions[1], message=user("after the move"))
    assert added.pk > top_id
    assert [m.seq for m in Message.objects.filter(session=sessions[1]).order_by("seq")] == list(
        range(1, 15)
    )
    batch = memory.message_add_many(session=other, messages=[user("a"), assistant("b")])
    assert [m.seq for m in batch] == [10, 11]
    # A lookup and a delete by id alone (message_pop) work across partitions.
    assert Message.objects.get(pk=added.pk).data == user("after the move")
    assert message_pop(session=sessions[1]) == user("after the move")
    assert not Message.objects.filter(pk=added.pk).exists()
    # (session, seq) stays unique: the constraint survived the move.
    duplicate = Message.objects.filter(session=other).values_list(
        "namespace", "seq", "role", "group_seq"
    )[0]
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_rows(
            "INSERT INTO ttmemory_message (session_id, namespace, seq, role, data, token_count, "
            "tool_call_id, tool_call_ids, group_seq, created_at) "
            "VALUES (%s, %s, %s, %s, '{}', 0, '', '[]', %s, now())",
            [other.pk, *duplicate],
        )
    # Repartitioning (4 -> 2) keeps everything too.
    call_command("ttmemory_partition", partitions=2, stdout=StringIO())
    assert message_partitions(connection) == 2
    assert history(sessions[2]) == before[sessions[2].pk]


@postgres_only
def test_a_sessions_window_reads_one_partition(db: Any) -> None:
    if not message_partitions(connection):
        call_command("ttmemory_partition", partitions=8, stdout=StringIO())
    sessions = [fill("user-1", f"chat-{n}", turns=1) for n in range(12)]
    used = {
        row[0]
        for row in raw_rows(
            "SELECT tableoid::regclass::text FROM ttmemory_message WHERE session_id = ANY(%s)",
            [[s.pk for s in sessions]],
        )
    }
    assert len(used) > 1  # the sessions are spread over partitions...
    window = Message.objects.live().filter(session=sessions[0]).order_by("-seq")[:20]
    sql, params = window.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    # ...and one session's newest window plans a scan of exactly one of them.
    assert len(set(re.findall(r"ttmemory_message_h\d+_\d+", plan))) == 1, plan


@postgres_only
def test_the_check_says_when_the_table_differs_from_the_setting(db: Any) -> None:
    current = message_partitions(connection)
    assert current is not None
    other = 3 if current != 3 else 5
    asked = {**settings.TTMEMORY, "PARTITIONED_HISTORY": {"by": "hash", "partitions": other}}
    with override_settings(TTMEMORY=asked):
        found = [m for m in checks.run_checks(databases=["default"]) if m.id == "ttmemory.W060"]
        assert len(found) == 1 and f"asks for {other} partitions" in found[0].msg
        assert "ttmemory_partition" in (found[0].hint or "")
        call_command("ttmemory_partition", stdout=StringIO())  # the setting's count
        assert message_partitions(connection) == other
        assert not [m for m in checks.run_checks(databases=["default"]) if m.id == "ttmemory.W060"]


@postgres_only
def test_a_foreign_key_to_messages_stops_the_conversion_and_nothing_changes(db: Any) -> None:
    before = message_partitions(connection)
    target = "(id, session_id)" if before else "(id)"
    columns = "message_id bigint, session_id bigint" if before else "message_id bigint"
    fk = "(message_id, session_id)" if before else "(message_id)"
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE user_bookmark ({columns}, "
            f"CONSTRAINT bookmark_message_fk FOREIGN KEY {fk} REFERENCES ttmemory_message {target})"
        )
    with pytest.raises(CommandError, match="bookmark_message_fk on user_bookmark"):
        call_command("ttmemory_partition", partitions=6, stdout=StringIO())
    assert message_partitions(connection) == before


def test_the_command_refuses_other_databases_and_missing_counts(db: Any) -> None:
    if connection.vendor != "postgresql":
        with pytest.raises(CommandError, match="needs PostgreSQL"):
            call_command("ttmemory_partition", partitions=4, stdout=StringIO())
        return
    unset = {**settings.TTMEMORY, "PARTITIONED_HISTORY": None}
    with override_settings(TTMEMORY=unset), pytest.raises(CommandError, match="how many"):
        call_command("ttmemory_partition", stdout=StringIO())
    with pytest.raises(CommandError, match="from 2 to 256"):
        call_command("ttmemory_partition", partitions=1, stdout=StringIO())


USE_IT = """
import json
import django
django.setup()
from django.db import connection
from ttmemory import memory
from ttmemory.models.partitioning import message_partitions

session = memory.session_open(namespace="user-1", key="chat-1")
memory.message_add(session=session, message={"role": "user", "content": "Where do I sit?"})
memory.message_add_many(session=session, messages=[
    {"role": "assistant", "content": "By the window."},
    {"role": "user", "content": "Thanks!"},
])
print(json.dumps({
    "partitions": message_partitions(connection),
    "server": connection.connection.info.server_version,
    "recent": memory.message_recent(session=session, limit=2),
}))
"""


def test_migrate_partitions_the_table_on_postgresql_15_too(system_postgres_database: str) -> None:
    """PostgreSQL before 17 has no identity column on a partitioned table: ids come from a
    sequence default there, so the opt-in works on the servers teams run today."""
    env = {k: v for k, v in os.environ.items() if k != "TTMEMORY_EMBEDDED_DB"}
    env.update(
        DATABASE_URL=system_postgres_database,
        DJANGO_SETTINGS_MODULE="tests.settings",
        TTMEMORY_TEST_PARTITIONED="1",
    )
    migrated = subprocess.run(
        [sys.executable, "-m", "django", "migrate", "--no-input"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert migrated.returncode == 0, migrated.stderr
    assert "Applying ttmemory.0013_partitioned_history... OK" in migrated.stdout
    used = subprocess.run(
        [sys.executable, "-c", USE_IT],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert used.returncode == 0, used.stderr
    result = json.loads(used.stdout.strip().splitlines()[-1])
    assert result["partitions"] == 8
    assert result["server"] // 10000 == 15
    assert result["recent"] == [
        {"role": "assistant", "content": "By the window."},
        {"role": "user", "content": "Thanks!"},
    ]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"by": "range", "partitions": 8}, "only 'hash'"),
        ({"by": "hash", "partitions": 1}, "use 2 to 256"),
        ({"by": "hash", "partitions": "16"}, "must be"),
        ({"by": "hash"}, "must be"),
        (16, "must be"),
    ],
)
def test_a_malformed_setting_is_an_error_naming_it(value: Any, says: str) -> None:
    with override_settings(TTMEMORY={**settings.TTMEMORY, "PARTITIONED_HISTORY": value}):
        found = [m for m in checks.run_checks(tags=["ttmemory"]) if m.id == "ttmemory.E038"]
    assert len(found) == 1 and "PARTITIONED_HISTORY" in found[0].msg and says in found[0].msg
