"""The gate: every public mutator passes it, and nothing but services writes rows.

Driven: every public mutator of ``ttmemory.memory`` (found the way the legal-hold test finds
them, ``tests.security.test_hold_paths.public_mutators``: the service functions re-exported
there, async twins included) is called, with the same arguments as in that test, with the gate
watched (``gate.watching``); a mutator that changes anything without entering the gate fails,
and the count is printed. Structural (an AST scan of the installed package, so a file added
later is scanned too): outside ``services/``, ``models/`` and ``migrations/`` nothing calls a
write method of the ORM (``create``, ``update``, ``delete``, ``bulk_*``, ``save``...) or writes
by SQL; inside ``services/`` only the gate takes a session lock, refuses a held change and
emits an event; and every admin of a ttmemory model that may add, change or delete replaces
Django's own ``save_model`` / ``delete_model`` / ``delete_queryset`` with a call to a service.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import RequestFactory

from tests.security.test_hold_paths import (
    MUTATOR_CALLS,
    Held,
    held,  # noqa: F401  (the fixture: a filled namespace under legal hold)
    public_mutators,
)
from ttmemory import memory
from ttmemory.services import gate

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = Path(gate.__file__).resolve().parents[1]
# Layers allowed to write rows: the services, the models (their QuerySets) and migrations.
WRITERS = ("services/", "models/", "migrations/")
# Outside those, rows that are no one's content, each with its reason.
EXEMPT = {
    "backends/locks/database.py": "the lease table is the lock's own state (SessionLease)",
    "fields/queryset.py": "EncryptedQuerySet.update: the ORM's update, sealing values for it",
}
ORM_WRITES = {
    "create",
    "get_or_create",
    "update_or_create",
    "update",
    "delete",
    "bulk_create",
    "bulk_update",
    "_raw_delete",
    "save",
}
ALWAYS_ORM = {"get_or_create", "update_or_create", "bulk_create", "bulk_update", "_raw_delete"}
MANAGERS = re.compile(r"(\.objects\b|_default_manager|_base_manager|queryset|QuerySet)")
SQL_WRITE = re.compile(r"\b(INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+\S+\s+SET|TRUNCATE)\b", re.I)


def test_every_public_mutator_passes_the_gate(held: Held, capsys: Any) -> None:  # noqa: F811
    names = public_mutators()
    bypassed: list[str] = []
    uncovered: list[str] = []
    passes: dict[str, list[str]] = {}
    for name in names:
        base = name[1:] if name.startswith("a") and name[1:] in MUTATOR_CALLS else name
        if base not in MUTATOR_CALLS:
            uncovered.append(name)
            continue
        function = getattr(memory, name)
        with gate.watching() as seen:
            try:
                if inspect.iscoroutinefunction(function):
                    async_to_sync(function)(**MUTATOR_CALLS[base](held))
                else:
                    function(**MUTATOR_CALLS[base](held))
            except Exception:  # a refusal (the hold, validation) is fine: inside the gate
                pass
        passes[name] = list(seen)
        if not seen:
            bypassed.append(name)
    with capsys.disabled():
        print(f"\ngate: {len(passes)} public mutators called, {len(bypassed)} bypassed it")
        for name, actions in sorted(passes.items()):
            print(f"  {name}: {', '.join(dict.fromkeys(actions)) or 'BYPASSED'}")
    assert not uncovered, f"public mutators with no call in test_hold_paths: {uncovered}"
    assert not bypassed, f"public mutators that do not pass the gate: {bypassed}"
    assert len(passes) == len(names) >= 48


def test_a_mutator_around_the_gate_is_caught(
    held: Held,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The spy sees a bypass: the same call with the gate's announcement switched off."""
    with monkeypatch.context() as patched:
        patched.setattr(gate, "_announce", lambda action: None)
        with gate.watching() as seen:
            memory.snapshot_create(session=held.session)
        assert seen == []
    with gate.watching() as seen:
        memory.snapshot_create(session=held.session)
        memory.message_recent(session=held.session)  # a selector: never the gate
    assert seen == ["snapshot"]


def _orm_writes(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, receiver = node.func.attr, ast.unparse(node.func.value)
            if method not in ORM_WRITES:
                continue
            instance_write = method in ("save", "delete") and not node.args
            if method in ALWAYS_ORM or instance_write or MANAGERS.search(receiver):
                found.append((node.lineno, f"{receiver}.{method}(...)"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and SQL_WRITE.search(node.value)
        ):
            found.append((node.lineno, f"SQL {node.value[:40]!r}"))
    return found


def _modules() -> list[tuple[str, ast.AST]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text()))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_only_services_write_rows(capsys: Any) -> None:
    offenders = []
    scanned = 0
    for relative, tree in _modules():
        if relative.startswith(WRITERS) or relative in EXEMPT:
            continue
        scanned += 1
        offenders += [f"{relative}:{line}: {what}" for line, what in _orm_writes(tree)]
    with capsys.disabled():
        print(f"\nwrites outside services: {scanned} modules scanned, {len(offenders)} found")
    assert scanned > 100
    assert not offenders, "write through a service instead:\n" + "\n".join(offenders)


def test_the_scan_finds_a_write() -> None:
    tree = ast.parse(
        "def perform_destroy(self, instance):\n"
        "    Message.objects.filter(session=instance).delete()\n"
        "    instance.delete()\n"
        "    fact.save()\n"
        "    Fact.objects.bulk_create(rows)\n"
        "    cursor.execute('DELETE FROM ttmemory_message WHERE id = %s', [1])\n"
        "    context.update(extra)\n"
        "    client.delete(key)\n"
    )
    assert [line for line, _ in _orm_writes(tree)] == [2, 3, 4, 5, 6]


def test_services_lock_check_holds_and_emit_only_through_the_gate() -> None:
    """``session_lock(...)``, ``refuse_if_held(...)`` and ``events.emit(...)`` are the gate's:
    a service that took them itself would be a second copy of the gate's steps."""
    gate_only = {"session_lock", "refuse_if_held", "emit"}
    found = []
    for relative, tree in _modules():
        if not relative.startswith("services/") or relative == "services/gate.py":
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id in gate_only:
                found.append(f"{relative}:{node.lineno}: {func.id}(...)")
            elif (
                isinstance(func, ast.Attribute)
                and func.attr in gate_only
                and ast.unparse(func.value) in ("events", "holds", "locks")
            ):
                found.append(f"{relative}:{node.lineno}: {ast.unparse(func)}(...)")
    assert not found, "go through services.gate.change instead:\n" + "\n".join(found)


# Public service functions that write without the gate, each with why. Anything else in
# services/ that writes (itself or through the module's private helpers) must enter the gate.
NOT_GATED = {
    "access.api_key_create": "API keys are credentials, not content",
    "access.api_key_check": "refreshes last_used_at of a credential",
    "access.api_key_revoke": "API keys are credentials, not content",
    "background.job_embed": "a missing vector (derived), written under the fact's row lock",
    "episodes.messages_index_pending": "episodic index rows (derived), under each session's lock",
    "episodes.messages_reindex": "episodic index rows (derived): maintenance",
    "episodes.index_delete_archived_upto": "index rows of archived turns, inside summarise's gate",
    "facts.facts_touch_recalled": "recall statistics, not content",
    "idempotency.idempotent_call": "an Idempotency-Key's replay record around the service call",
    "idempotency.idempotency_prune": "expired replay records",
    "learnjobs.learn_job_create": "learning-job bookkeeping",
    "learnjobs.learn_job_run": "learning-job bookkeeping (the learning itself is gated)",
    "ledger.ledger_record": "the cost ledger",
    "ledger.ledger_record_many": "the cost ledger",
    "ledger.ledger_record_embedding": "the cost ledger",
    "ledger.llm_rate_take": "the rate limiter's bucket",
    "reembed.facts_reembed": "vectors (derived): maintenance, leaves held facts alone",
    "reindex.facts_reindex": "keyword index (derived): maintenance, leaves held facts alone",
    "rotation.rebind_checkpoint": "the rebind command's progress row",
    "rotation.rebind_finish": "the rebind command's progress row",
    "rows.insert_messages": "the row SQL beneath the gate (called inside a gate)",
    "rows.append_rows": "the row SQL beneath the gate (called inside a gate)",
}


def _gated(node: ast.AST) -> bool:
    return any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "change"
        for call in ast.walk(node)
    )


def _writes(
    functions: dict[str, ast.FunctionDef], name: str, seen: frozenset[str] = frozenset()
) -> bool:
    """Whether ``name`` writes rows, itself or through the ungated functions it calls."""
    node = functions[name]
    if _orm_writes(node):
        return True
    called = {
        c.func.id
        for c in ast.walk(node)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
    }
    return any(
        callee in functions
        and callee not in seen
        and not _gated(functions[callee])
        and _writes(functions, callee, seen | {name})
        for callee in called
    )


def test_every_service_that_writes_enters_the_gate() -> None:
    """A public function of ``services/`` that writes rows, in its body or through the
    module's helpers it calls, opens ``change(...)`` itself (or takes the ``gate`` of the change
    it runs in, or ends in ``_locked``: called holding a gate's lock)."""
    ungated = set()
    for relative, tree in _modules():
        if not relative.startswith("services/") or relative in (
            "services/gate.py",
            "services/audit.py",
        ):
            continue
        functions = {n.name: n for n in getattr(tree, "body", []) if isinstance(n, ast.FunctionDef)}

        for name, node in functions.items():
            if name.startswith("_") or name.endswith("_locked"):
                continue
            takes_gate = any(arg.arg == "gate" for arg in node.args.kwonlyargs + node.args.args)
            if _writes(functions, name) and not _gated(node) and not takes_gate:
                ungated.add(f"{Path(relative).stem}.{name}")
    assert ungated - set(NOT_GATED) == set(), "write through services.gate.change"
    assert set(NOT_GATED) - ungated == set(), "listed as not gated, but no longer writes so"


def test_a_service_writing_around_the_gate_is_found() -> None:
    tree = ast.parse(
        "def memory_wipe(*, namespace):\n"
        "    _wipe(namespace)\n"
        "def _wipe(namespace):\n"
        "    Fact.objects.filter(namespace=namespace).delete()\n"
        "def memory_wipe_gated(*, namespace):\n"
        "    with change('wipe', namespace=namespace) as gate:\n"
        "        _wipe(gate.namespace)\n"
    )
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert _writes(functions, "memory_wipe") and not _gated(functions["memory_wipe"])
    assert _gated(functions["memory_wipe_gated"])


def test_admins_that_may_write_call_services() -> None:
    """An admin of a ttmemory model that may add, change or delete replaces Django's own
    writes (``save_model``, ``delete_model``, ``delete_queryset``; or its add view)."""
    request = RequestFactory().get("/admin/")
    request.user = User(username="root", is_staff=True, is_superuser=True, is_active=True)
    base = admin.ModelAdmin
    missing = []
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label != "ttmemory":
            continue
        cls = type(model_admin)
        label = f"{cls.__name__} ({model.__name__})"
        adds = model_admin.has_add_permission(request)
        changes = model_admin.has_change_permission(request)
        if adds and base.save_model is cls.save_model and base.add_view is cls.add_view:
            missing.append(f"{label}: adds rows with Django's save_model")
        if changes and base.save_model is cls.save_model:
            missing.append(f"{label}: changes rows with Django's save_model")
        if model_admin.has_delete_permission(request):
            for name in ("delete_model", "delete_queryset"):
                if getattr(base, name) is getattr(cls, name):
                    missing.append(f"{label}: deletes rows with Django's {name}")
    assert not missing, missing
