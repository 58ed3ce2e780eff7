"""Mutants that remove a protection, to show a race test has teeth.

``TTM_MUTANT=<name> pytest -p tests.mutants <tests>`` runs the tests against the mutant; worker
processes the tests start (``tests/locks/worker.py``) apply the same mutant from the
environment. Each race test must fail against the mutant of the protection it checks:

- ``no_lock``: every session lock backend opens its transaction but takes no lock.
- ``no_transaction``: every session lock backend takes no lock and opens no transaction (each
  statement commits on its own).
- ``empty_reads``: ``memory.message_recent`` returns ``[]`` in every thread but the main one.

Never loaded by a normal run.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

MUTANTS = ("no_lock", "no_transaction", "empty_reads")


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
        # An uncontended append on PostgreSQL takes the advisory lock inside its one statement
        # (services.sessions._one_statement_applies): the mutant sends it through locked too.
        from ttmemory.services import sessions

        sessions._one_statement_applies = lambda *args: False  # type: ignore[assignment]
    elif name == "empty_reads":
        from ttmemory import memory

        real = memory.message_recent

        def message_recent(**kwargs: Any) -> Any:
            if threading.current_thread() is threading.main_thread():
                return real(**kwargs)
            return []

        memory.message_recent = message_recent  # type: ignore[assignment]


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
