"""Another OS process for the episodic index's read-your-writes and crash tests.

``python -m tests.longterm.episodic_worker MODE DB NAMESPACE KEY TEXT``:

- ``append``: append TEXT as a user message to the session KEY of NAMESPACE, the
  ``message_index`` job queued to a worker that never runs it (a broker nobody consumes);
  prints the seq.
- ``append-then-die``: the same, and the process kills itself (SIGKILL) when the job is
  dispatched after the commit: a crash between the append and its indexing.
- ``search``: print the ``(session key, seq)`` of each ``message_search`` hit for TEXT (a
  job it queues is not run).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

import django


def main() -> None:
    mode, db_name, namespace, key, text = sys.argv[1:6]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = db_name
    settings.TTMEMORY = {**settings.TTMEMORY, **json.loads(os.environ.get("TTM_OVERRIDES", "{}"))}
    django.setup()
    from ttmemory import jobs, memory

    if mode == "search":  # any job the search queues goes to a worker that is not running
        jobs.set_dispatcher(lambda name, args: None)
        hits = memory.message_search(namespace=namespace, query=text, window=0)
        print(json.dumps([[hit.session.key, hit.seq] for hit in hits]), flush=True)
        return

    def dispatch(name: str, args: tuple[Any, ...]) -> None:
        if name == "message_index" and mode == "append-then-die":
            os.kill(os.getpid(), signal.SIGKILL)

    jobs.set_dispatcher(dispatch)
    session = memory.session_open(namespace=namespace, key=key)
    row = memory.message_add(session=session, message={"role": "user", "content": text})
    print(row.seq, flush=True)


if __name__ == "__main__":
    main()
