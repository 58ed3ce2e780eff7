"""A separate OS process for lock tests: ``python -m tests.locks.worker MODE DB SESSION ARG [DIR]``.

Modes:
- ``append ROUNDS DIR``: per round, three free appends, then one append made while the other
  process's rollback holds the lock (the rendezvous below). Prints one JSON line per append:
  ``{"seq", "content", "asked", "got"}`` (``asked``/``got``: monotonic ns when it asked for
  the session lock and when it had it; null for an uncontended append, which takes the lock
  inside its one statement).
- ``rollback ROUNDS DIR``: per round, snapshot then roll back to a random earlier snapshot of
  the session, pausing inside the rollback's critical section until the appender has asked for
  the lock. Prints one JSON line per rollback: ``{"safety", "inside", "last_inside"}``
  (``last_inside``: monotonic ns at the end of the critical section, still under the lock).
- ``rewind ROUNDS DIR``: like ``rollback``, but per round rewinds to one of the newest live
  messages (no snapshot taken beforehand), pausing inside the rewind's critical section the
  same way. Prints one JSON line per rewind: ``{"safety", "to_seq", "inside", "last_inside"}``.
- ``hold SECONDS``: take the session lock, print the database backend pid (PostgreSQL) or
  "held", flush, and sleep holding it.

The rendezvous uses marker files in DIR (``ready-R``, ``inside-R``, ``asked-R``): the roller
starts rollback R once the appender is ready (so no free append is stuck behind it), and inside
the critical section waits until the appender has asked for the lock. Waits are bounded.
``TTM_MUTANT`` applies a mutant of ``tests/mutants.py`` first.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import django

FREE_APPENDS = 3
WAIT = 30.0


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {path.name}")
        time.sleep(0.0005)


def mark(path: Path) -> None:
    path.touch()


def main() -> None:
    mode, db_name, session_id, arg = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    rendezvous = Path(sys.argv[5]) if len(sys.argv) > 5 else None
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = db_name
    # The parent test's TTMEMORY overrides (lock backend, retention...), keys excepted.
    settings.TTMEMORY = {**settings.TTMEMORY, **json.loads(os.environ.get("TTM_OVERRIDES", "{}"))}
    django.setup()
    from django.db import connection

    from tests import mutants
    from ttmemory import memory
    from ttmemory.backends.locks import get_lock, session_lock
    from ttmemory.models import MemorySession, Message
    from ttmemory.services import history, snapshots

    mutants.apply_from_env()
    session = MemorySession.objects.get(pk=session_id)
    lock = get_lock()
    real_locked = lock.locked
    # Set by the round in progress: (marker file to write when asking for the lock, times).
    probe: dict[str, Any] = {}

    @contextlib.contextmanager
    def timed_locked(session_id: int, *, timeout: float) -> Iterator[None]:
        probe["asked"] = time.monotonic_ns()
        if probe.get("announce"):
            mark(probe.pop("announce"))
        with real_locked(session_id, timeout=timeout):
            probe["got"] = time.monotonic_ns()
            yield
            # The last moment inside the critical section, taken under the lock (its commit
            # and release follow): an append that waited for the lock got it after this.
            probe["last_inside"] = time.monotonic_ns()

    lock.locked = timed_locked  # type: ignore[method-assign]
    # A contended append on PostgreSQL waits through wait_reading (the lock and the session's
    # last_seq in one statement) instead of locked: timed the same way.
    real_wait_reading = getattr(lock, "wait_reading", None)
    if real_wait_reading is not None:

        def timed_wait_reading(session_id: int, **kwargs: Any) -> Any:
            probe["asked"] = time.monotonic_ns()
            if probe.get("announce"):
                mark(probe.pop("announce"))
            row = real_wait_reading(session_id, **kwargs)
            probe["got"] = time.monotonic_ns()
            return row

        lock.wait_reading = timed_wait_reading  # type: ignore[attr-defined]

    def emit(**fields: Any) -> None:
        print(json.dumps(fields), flush=True)

    if mode == "append":
        assert rendezvous is not None
        i = 0
        for round_no in range(int(arg)):
            for rendezvous_append in [False] * FREE_APPENDS + [True]:
                if rendezvous_append:
                    mark(rendezvous / f"ready-{round_no}")
                    wait_for(rendezvous / f"inside-{round_no}")
                    probe["announce"] = rendezvous / f"asked-{round_no}"
                content = f"p{os.getpid()}-{i}"
                # An uncontended append takes the lock inside its one statement (no call of
                # lock.locked): no times then. A contended one waits through lock.locked.
                probe.pop("asked", None)
                probe.pop("got", None)
                row = memory.message_add(
                    session=session, message={"role": "user", "content": content}
                )
                emit(seq=row.seq, content=content, asked=probe.get("asked"), got=probe.get("got"))
                i += 1
    elif mode == "rollback":
        assert rendezvous is not None
        rng = random.Random(os.getpid())
        real_restore = snapshots.restore_locked
        current = {"round": 0}

        def paused_restore(session: MemorySession, payload: dict[str, Any]) -> None:
            # Inside the rollback's critical section, after the safety snapshot: let the
            # appender ask for the lock before going on.
            round_no = current["round"]
            probe["inside"] = time.monotonic_ns()
            mark(rendezvous / f"inside-{round_no}")
            wait_for(rendezvous / f"asked-{round_no}")
            real_restore(session, payload)

        snapshots.restore_locked = paused_restore  # type: ignore[assignment]
        for round_no in range(int(arg)):
            current["round"] = round_no
            memory.snapshot_create(session=session, label="race")
            choices = memory.snapshot_list(session=session)
            wait_for(rendezvous / f"ready-{round_no}")
            safety = memory.snapshot_rollback(session=session, snapshot=rng.choice(choices))
            assert safety is not None
            emit(safety=safety.pk, inside=probe["inside"], last_inside=probe["last_inside"])
    elif mode == "rewind":
        assert rendezvous is not None
        rng = random.Random(os.getpid())
        real_cut = history.history_cut
        current = {"round": 0}

        def paused_cut(**kwargs: Any) -> Any:
            # Inside the rewind's critical section, before it reads the history it cuts: let
            # the appender ask for the lock before going on.
            round_no = current["round"]
            probe["inside"] = time.monotonic_ns()
            mark(rendezvous / f"inside-{round_no}")
            wait_for(rendezvous / f"asked-{round_no}")
            return real_cut(**kwargs)

        history.history_cut = paused_cut  # type: ignore[assignment]
        for round_no in range(int(arg)):
            current["round"] = round_no
            wait_for(rendezvous / f"ready-{round_no}")
            # Only this process removes messages, so a seq live now is live inside the rewind.
            newest = list(
                Message.objects.live()
                .filter(session=session)
                .order_by("-seq")
                .values_list("seq", flat=True)[:4]
            )
            to_seq = rng.choice(newest)
            result = memory.session_rewind(session=session, to_seq=to_seq)
            emit(
                safety=result.safety.pk,
                to_seq=to_seq,
                inside=probe["inside"],
                last_inside=probe["last_inside"],
            )
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
