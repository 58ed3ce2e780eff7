"""The gate: the one way a service changes stored content.

Every public mutator of ``ttmemory.services`` runs its writes inside ``change(...)``, which in
this order: announces the change (``watching``: what the path-enumerating tests spy on),
validates the namespace (``ttmemory.validation``), opens the transaction and takes the session
lock where the change touches a session, refuses a change under legal hold (the friendly
``LegalHoldError`` naming the hold; the database triggers of migration 0023 are the
guarantee), runs the service's write, and gives it ``Change.audit`` (the audit row, in the
same transaction) and ``Change.emit`` (the content-free event, sent after commit). A new
mutator written as ``with change("verb", session=session) as c:`` inherits all of it; REST
views, admin actions, integrations, MCP tools and commands call the mutators, never models'
write methods (``tests/services/test_gate.py`` checks both).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Literal

from django.db import transaction

from ttmemory import events, jobs
from ttmemory.backends.locks import session_lock
from ttmemory.exceptions import LegalHoldError
from ttmemory.models import AuditEntry, LegalHold, MemorySession
from ttmemory.selectors.retention import legal_hold_find
from ttmemory.services.audit import audit_record
from ttmemory.validation import clean_identifier, clean_namespace

# "refuse": refused up front while held; "check": the service calls ``refuse_if_held`` where
# the refusal belongs (after a read that decides whether anything is deleted); "allow": the
# change deletes and rewrites nothing held (an append, a snapshot, a new fact).
HoldRule = Literal["refuse", "check", "allow"]
SAME: Any = object()
# ``change(namespace=...)`` not given: a change across namespaces (a None given is validated).
ACROSS: Any = object()

_watchers: list[list[str]] = []
_watchers_guard = threading.Lock()


class Change:
    """One change passing the gate: what the service's body uses to check, audit and emit."""

    __slots__ = ("action", "namespace", "session")

    def __init__(self, action: str, namespace: str, session: MemorySession | None) -> None:
        self.action = action
        self.namespace = namespace
        self.session = session

    def held(self, *, session_id: int | None = SAME) -> LegalHold | None:
        """The hold covering this change's namespace (or its session), None when free."""
        if session_id is SAME:
            session_id = self.session.pk if self.session is not None else None
        return legal_hold_find(namespace=self.namespace, session_id=session_id)

    def refuse_if_held(self, *, session_id: int | None = SAME, any_session: bool = False) -> None:
        """``LegalHoldError`` naming the hold when the namespace (or the session
        ``session_id``; with ``any_session``, any session of the namespace) is held."""
        if session_id is SAME:
            session_id = self.session.pk if self.session is not None else None
        refuse_if_held(
            namespace=self.namespace,
            session_id=session_id,
            action=self.action,
            any_session=any_session,
        )

    def emit(
        self,
        event_type: str,
        *,
        session_id: int | None = SAME,
        counts: dict[str, int] | None = None,
        ids: dict[str, Any] | None = None,
        duration_ms: float | None = None,
        namespace: str | None = None,
    ) -> None:
        """The change's event (counts and ids, never content), sent when the transaction
        commits (``ttmemory.events.emit``). ``namespace``: for a change across namespaces."""
        if session_id is SAME:
            session_id = self.session.pk if self.session is not None else None
        events.emit(
            event_type,
            namespace=self.namespace if namespace is None else namespace,
            session_id=session_id,
            counts=counts,
            ids=ids,
            duration_ms=duration_ms,
        )

    def audit(self, *, action: str, namespace: str | None = None, **fields: Any) -> AuditEntry:
        """The change's audit row, in the change's transaction: ``audit_record``'s fields
        (``user``, ``actor``, ``object_type``, ``object_id``, ``reason``, ``details``: ids and
        counts only), in this change's namespace unless ``namespace`` names another."""
        name = self.namespace if namespace is None else namespace
        return audit_record(action=action, namespace=name, **fields)


@contextmanager
def change(
    action: str,
    *,
    namespace: Any = ACROSS,
    session: MemorySession | None = None,
    stored: bool = False,
    lock: bool = True,
    atomic: bool = True,
    hold: HoldRule = "refuse",
) -> Iterator[Change]:
    """Run a service's write as ``action`` (the verb a ``LegalHoldError`` names).

    ``session``: the change touches that session; its lock is taken (with the transaction)
    unless ``lock=False`` (the append takes it inside its own statement, the erase takes every
    session's). ``namespace``: a namespace given by the caller, checked with
    ``clean_namespace`` (a new name) or, with ``stored=True``, ``clean_identifier`` (a name
    that may predate the identifier rules: forget, supersede, erase reach it). Neither: a
    change across namespaces (the prune), whose body checks holds row by row.
    ``atomic=False`` leaves transactions to the body (several batches, or none on the
    append's one-statement path). ``hold``: see ``HoldRule``.
    """
    _announce(action)
    if session is not None:
        name = session.namespace
    elif namespace is ACROSS:
        name = ""
    elif stored:
        name = clean_identifier(namespace, field="namespace")
    else:
        name = clean_namespace(namespace, field="namespace")
    gate = Change(action, name, session)
    with ExitStack() as stack:
        stack.enter_context(jobs.foreground())  # index jobs wait for the change to end
        if session is not None and lock:
            stack.enter_context(session_lock(session))
        elif atomic:
            stack.enter_context(transaction.atomic())
        if hold == "refuse":
            gate.refuse_if_held()
        yield gate


def refuse_if_held(
    *, namespace: str, action: str, session_id: int | None = None, any_session: bool = False
) -> None:
    """Raise ``LegalHoldError`` naming the hold when ``namespace`` (or its session
    ``session_id``; with ``any_session``, any of its sessions) is under legal hold.

    Called inside the change's transaction, after its session lock, so a hold committed
    before the change starts is always seen.
    """
    if any_session:
        found = LegalHold.objects.filter(namespace=namespace).order_by("session_id").first()
    else:
        found = legal_hold_find(namespace=namespace, session_id=session_id)
    if found is not None:
        raise LegalHoldError(
            namespace=found.namespace,
            session_id=found.session_id,
            reason=found.reason,
            action=action,
        )


def _announce(action: str) -> None:
    if _watchers:
        with _watchers_guard:
            for seen in _watchers:
                seen.append(action)


@contextmanager
def watching() -> Iterator[list[str]]:
    """The actions of every change entering the gate while the block runs, in every thread
    (the async twins run in Django's executor thread): the spy of the gate's tests."""
    seen: list[str] = []
    with _watchers_guard:
        _watchers.append(seen)
    try:
        yield seen
    finally:
        with _watchers_guard:
            _watchers.remove(seen)
