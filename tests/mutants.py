"""Mutants that remove one protection each, and the tests that must fail against each.

``./dev mutants`` (part of ``./dev test``; ``python -m tests.mutants run [names]``) runs, for
each mutant and each database (PostgreSQL and SQLite), only that mutant's killing tests
(``KILLERS``) with ``-p tests.mutants``, as many runs side by side as there are cores (each in
a database of its own); a mutant no test fails against (a survivor) fails the command, and the
report names the test that killed each one. Each run stops at its first failure (``-x``): one
killer is proof enough, so the killers are listed what-a-user-sees first (``LOCK_RACES``), and
the test named is the first of the list that fails.

``TTM_MUTANT=<name> pytest -p tests.mutants <tests>`` runs any tests against one mutant; worker
processes the tests start (``tests/locks/worker.py``) apply the same mutant from the
environment. The mutants (``MUTANTS``):

- ``no_lock``: every session lock backend opens its transaction but takes no lock.
- ``no_transaction``: every session lock backend takes no lock and opens no transaction (each
  statement commits on its own).
- ``lock_released_before_commit``: the session lock is released when the body ends, before its
  transaction commits (PostgreSQL: a session-level advisory lock unlocked at the end of the
  body; elsewhere the lock is the transaction itself and the mutant equals ``no_lock``).
- ``counter_outside_lock``: an append reserves its seqs from the ``last_seq`` its caller read
  before taking the lock, instead of the row's own under the lock.
- ``hold_check_removed``: the service check for a legal hold is gone (the trigger stays).
- ``hold_triggers_dropped``: migration 0023 installs no legal-hold trigger (the service checks
  stay): a raw ORM delete of held rows goes through.
- ``credentials_cached``: a credential accepted once (an API key, a DRF token) is trusted
  again for 5 s without reading it (the window before issue 34's revocation at once).
- ``decrypt_without_row_binding``: encrypted values are sealed and opened with their table and
  column only, not their row (a value copied to another row opens there).
- ``empty_reads``: ``memory.message_recent`` returns ``[]`` in every thread but the main one.

Never loaded by a normal run.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

LOCK_RACES = [
    # What a user sees: a turn lost or half-applied, a rollback mixed with a concurrent append.
    "tests/locks/test_database_locks.py::test_appends_and_rollbacks_racing_in_two_processes_end_in_a_serial_state",
    "tests/locks/test_database_locks.py::test_rewinds_racing_appends_in_another_process_lose_no_append_made_after_them",
    "tests/contract/test_session_memory.py::test_concurrent_writers_lose_nothing_and_never_share_a_seq",
    "tests/contract/test_session_memory.py::test_every_read_during_concurrent_writes_is_a_prefix_of_the_final_history",
    "tests/contract/test_stateful.py",
    "tests/api/test_live_concurrency.py",
    # An append still in its caller's transaction (ATOMIC_REQUESTS, the idempotent REST append)
    # when a rollback takes the lock: the turn removed unreported, its fact left current.
    "tests/locks/test_callers_transaction.py",
    # The lock's own mechanics (the only killers where the lock is redundant: SQLite's
    # BEGIN IMMEDIATE serialises every transaction already).
    "tests/locks/test_database_locks.py::test_a_lease_held_by_another_process_blocks_until_released",
    "tests/locks/test_database_locks.py::test_the_in_process_lock_serialises_threads",
]

#: For each mutant, the tests that must fail against it (run selectively: fast).
KILLERS: dict[str, list[str]] = {
    "no_lock": LOCK_RACES,
    "no_transaction": LOCK_RACES,
    "lock_released_before_commit": LOCK_RACES,
    "counter_outside_lock": [
        "tests/contract/test_session_memory.py::test_concurrent_writers_lose_nothing_and_never_share_a_seq",
        "tests/contract/test_stateful.py",
    ],
    "hold_check_removed": [
        "tests/api/test_retention.py::test_a_held_namespace_refuses_erase_with_423_naming_the_hold",
        "tests/retention/test_prune.py",
    ],
    "credentials_cached": [
        "tests/api/test_authentication.py",
        "tests/security/test_revocation.py",
    ],
    "hold_triggers_dropped": [
        "tests/security/test_legal_hold.py::test_a_raw_orm_delete_in_a_shell_is_refused_until_the_hold_is_lifted",
        "tests/security/test_legal_hold.py::test_every_hold_trigger_is_installed",
    ],
    "decrypt_without_row_binding": ["tests/security/test_row_binding.py"],
    "empty_reads": [
        "tests/contract/test_session_memory.py::test_every_read_during_concurrent_writes_is_a_prefix_of_the_final_history",
        "tests/api/test_live_concurrency.py",
    ],
}
MUTANTS = tuple(KILLERS)

#: Mutants that cannot change behaviour on a database, and why: not run there, and said so.
EQUIVALENT = {
    ("hold_check_removed", "postgresql"): (
        "PostgreSQL's hold triggers refuse the same change with the same LegalHoldError naming "
        "the hold (its DETAIL carries it), so the service check only says it earlier; the "
        "guarantee itself is the hold_triggers_dropped mutant's"
    ),
    ("lock_released_before_commit", "sqlite"): (
        "SQLite's BEGIN IMMEDIATE holds the database's write lock until the commit, whatever "
        "the session lock does: nothing can be released before the commit"
    ),
}


def _lock_classes() -> list[type[Any]]:
    from ttmemory.backends.locks import (
        DatabaseLeaseLock,
        LocalLock,
        PostgresAdvisoryLock,
        RedisLock,
    )

    return [PostgresAdvisoryLock, DatabaseLeaseLock, RedisLock, LocalLock]


def apply(name: str) -> None:
    """Patch the running process with mutant ``name`` (for the rest of its life)."""
    from django.db import transaction

    if name not in MUTANTS:
        raise SystemExit(f"unknown mutant {name!r}; one of {', '.join(MUTANTS)}")
    if name in ("no_lock", "no_transaction"):
        with_transaction = name == "no_lock"

        @contextlib.contextmanager
        def locked(self: Any, session_id: int, *, timeout: float) -> Iterator[None]:
            self.stats.acquired += 1
            if with_transaction:
                with transaction.atomic():
                    yield
            else:
                yield

        for cls in _lock_classes():
            cls.locked = locked
        _no_lock_in_statement()
    elif name == "lock_released_before_commit":
        _lock_released_before_commit()
    elif name == "counter_outside_lock":
        _counter_outside_lock()
    elif name == "hold_check_removed":
        from ttmemory.services import gate

        gate.refuse_if_held = lambda **kwargs: None  # type: ignore[assignment]
    elif name == "hold_triggers_dropped":
        from ttmemory.models import holds as hold_triggers

        hold_triggers.trigger_sql = lambda *args, **kwargs: []  # type: ignore[assignment]
        hold_triggers.partitions_sql = lambda *args, **kwargs: []  # type: ignore[assignment]
    elif name == "credentials_cached":
        _credentials_cached()
    elif name == "decrypt_without_row_binding":
        from ttmemory.fields import _EncryptedField

        def unbound(self: Any) -> Any:
            prefix = self._aad_prefix.encode()
            return lambda binding: prefix

        _EncryptedField._row_aad = property(unbound)  # type: ignore[assignment]
    elif name == "empty_reads":
        from ttmemory import memory

        real = memory.message_recent

        def message_recent(**kwargs: Any) -> Any:
            if threading.current_thread() is threading.main_thread():
                return real(**kwargs)
            return []

        memory.message_recent = message_recent


def _no_lock_in_statement() -> None:
    # An uncontended append on PostgreSQL takes the advisory lock inside its one statement
    # (services.appends._lock_in_statement), and a contended one waits for it through
    # PostgresAdvisoryLock.locked_reading: the mutants send both through locked instead.
    from ttmemory.backends.locks import PostgresAdvisoryLock, SessionLock
    from ttmemory.services import appends

    appends._lock_in_statement = lambda *args: False
    PostgresAdvisoryLock.locked_reading = SessionLock.locked_reading  # type: ignore[method-assign]


def _lock_released_before_commit() -> None:
    from django.db import connection, transaction

    from ttmemory.backends.locks.database import advisory_key

    real = {cls: cls.locked for cls in _lock_classes()}

    @contextlib.contextmanager
    def locked(self: Any, session_id: int, *, timeout: float) -> Iterator[None]:
        if connection.vendor != "postgresql":
            # SQLite: BEGIN IMMEDIATE is the lock, held to the commit whatever the backend.
            with real[type(self)](self, session_id, timeout=timeout):
                yield
            return
        self.stats.acquired += 1
        key = advisory_key(session_id)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_lock(%s, %s)", list(key))
            try:
                yield
            finally:
                with connection.cursor() as cursor:  # released before the commit
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", list(key))

    for cls in _lock_classes():
        cls.locked = locked
    _no_lock_in_statement()


def _credentials_cached() -> None:
    import time

    from ttmemory.api import authentication
    from ttmemory.integrations.mcp import auth as mcp_auth
    from ttmemory.services import access

    def memo(real: Any) -> Any:
        seen: dict[str, tuple[float, Any]] = {}

        def check(**kwargs: Any) -> Any:
            asked = repr(sorted(kwargs.items()))
            hit = seen.get(asked)
            if hit is not None and hit[0] > time.monotonic():
                return hit[1]
            answer = real(**kwargs)
            if answer is not None:
                seen[asked] = (time.monotonic() + 5, answer)
            return answer

        return check

    for name in ("api_key_check", "token_check"):
        cached = memo(getattr(access, name))
        for module in (access, authentication, mcp_auth):
            if hasattr(module, name):
                setattr(module, name, cached)


def _counter_outside_lock() -> None:
    import contextlib

    from ttmemory.models import MemorySession
    from ttmemory.services import appends

    real_session_lock_reading = appends.session_lock_reading

    read_before: dict[int, Any] = {}

    @contextlib.contextmanager
    def session_lock_reading(session: Any, *, read: str, params: Any) -> Iterator[Any]:
        # The session's last_seq is read here, before the lock is taken, and the append
        # reserves its seqs from it (also when its write finds last_seq moved and reads again).
        before = MemorySession.objects.filter(pk=session.pk).values_list("last_seq").first()
        read_before[threading.get_ident()] = before
        with real_session_lock_reading(session, read=read, params=params):
            yield before

    appends.session_lock_reading = session_lock_reading
    appends._last_seq_row = lambda session: read_before[threading.get_ident()]
    _no_lock_in_statement()


def apply_from_env() -> str | None:
    """Apply the mutant named by ``TTM_MUTANT``, if any; return its name."""
    name = os.environ.get("TTM_MUTANT") or None
    if name is not None:
        apply(name)
    return name


def pytest_configure(config: Any) -> None:
    name = os.environ.get("TTM_MUTANT")
    if not name:
        raise SystemExit("-p tests.mutants needs TTM_MUTANT=<name>: " + ", ".join(MUTANTS))


def pytest_sessionstart(session: Any) -> None:
    apply_from_env()


def pytest_report_header(config: Any) -> str:
    return f"MUTANT: {os.environ.get('TTM_MUTANT')} (tests/mutants.py): race tests must fail"


FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


def run_one(name: str, database: str, env: dict[str, str]) -> list[str]:
    """Run ``name``'s killing tests against it on ``database``; return the tests that failed."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.mutants", "-x", "-q", "-rfE", "-p",
         "no:cacheprovider", "--no-header", *KILLERS[name]],
        cwd=ROOT, env={**env, "TTM_MUTANT": name}, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    killed = sorted(set(FAILED.findall(proc.stdout)))
    if proc.returncode not in (0, 1) and not killed:
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        raise SystemExit(f"mutant {name} on {database}: pytest exited {proc.returncode}")
    return killed


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "run":
        raise SystemExit("usage: python -m tests.mutants run [mutant ...]")
    names = argv[1:] or list(MUTANTS)
    unknown = [n for n in names if n not in MUTANTS]
    if unknown:
        raise SystemExit(f"unknown mutants {unknown}; known: {', '.join(MUTANTS)}")
    data = ROOT / ".data"
    data.mkdir(exist_ok=True)
    pg_url = os.environ.get("DATABASE_URL", "")
    if pg_url.startswith("sqlite"):
        pg_url = ""
    base = {k: v for k, v in os.environ.items() if k != "TTMEMORY_TEST_PASS"}

    def env_for(name: str, database: str) -> dict[str, str]:
        # Each (mutant, database) run has a database of its own, so runs can go side by side.
        if database == "postgresql":
            return {**base, "DATABASE_URL": pg_url, "TTMEMORY_EMBEDDED_DB": f"ttmemory_mut_{name}"}
        path = data / f"test-mutant-{name}.sqlite3"
        for leftover in data.glob(f"{path.name}*"):
            leftover.unlink()
        return {**base, "DATABASE_URL": f"sqlite:///{path}"}

    runs = [(name, database) for name in names for database in ("postgresql", "sqlite")]
    to_run = [run for run in runs if run not in EQUIVALENT]
    # Side by side, as many as the test passes use (TTMEMORY_TEST_WORKERS, else the cores).
    workers = int(os.environ.get("TTMEMORY_TEST_WORKERS") or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {run: pool.submit(run_one, *run, env_for(*run)) for run in to_run}
        survivors = []
        for name, database in runs:  # reported in order, each as soon as it and those before end
            if (name, database) in EQUIVALENT:
                why = EQUIVALENT[name, database]
                print(f"mutant {name} on {database}: equivalent, not run: {why}")
                continue
            killed = futures[name, database].result()
            if killed:
                print(f"mutant {name} on {database}: killed by {len(killed)} test(s)")
                for nodeid in killed:
                    print(f"    {nodeid}")
            else:
                print(f"mutant {name} on {database}: SURVIVED {' '.join(KILLERS[name])}")
                survivors.append(f"{name} on {database}")
            sys.stdout.flush()
    if survivors:
        print(f"surviving mutants: {', '.join(survivors)}")
        return 1
    print(f"all {len(names)} mutants killed (on both databases unless equivalent there)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
