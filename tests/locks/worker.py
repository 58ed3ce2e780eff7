"""A separate OS process for lock tests: ``python -m tests.locks.worker MODE DB SESSION ARG``.

Modes:
- ``append N``: append N messages "p<pid>-<i>", printing "seq content" per message.
- ``rollback N``: N times, snapshot then roll back to a random earlier snapshot of the session.
- ``hold SECONDS``: take the session lock, print the database backend pid (PostgreSQL) or
  "held", flush, and sleep holding it.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

import django


def main() -> None:
    mode, db_name, session_id, arg = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = db_name
    # The parent test's TTMEMORY overrides (lock backend, retention...), keys excepted.
    settings.TTMEMORY = {**settings.TTMEMORY, **json.loads(os.environ.get("TTM_OVERRIDES", "{}"))}
    django.setup()
    from django.db import connection

    from ttmemory import memory
    from ttmemory.backends.locks import session_lock
    from ttmemory.models import MemorySession

    session = MemorySession.objects.get(pk=session_id)
    if mode == "append":
        for i in range(int(arg)):
            row = memory.message_add(
                session=session, message={"role": "user", "content": f"p{os.getpid()}-{i}"}
            )
            print(row.seq, row.data["content"], flush=True)
    elif mode == "rollback":
        rng = random.Random(os.getpid())
        for _ in range(int(arg)):
            memory.snapshot_create(session=session, label="race")
            snapshots = memory.snapshot_list(session=session)
            memory.snapshot_rollback(session=session, snapshot=rng.choice(snapshots))
    elif mode == "hold":
        with session_lock(session):
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid()")
                    print(cursor.fetchone()[0], flush=True)
            else:
                print("held", flush=True)
            time.sleep(float(arg))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
