"""Every path that can change stored content, found from the code, called on a held namespace.

The paths are enumerated, not listed by hand: the public mutators of ``ttmemory.memory`` (the
names re-exported from ``ttmemory.services``, with their async twins), every unsafe route the
URL resolver serves under the API, every admin action and admin view of the admin registry
(bulk actions, custom views, the delete view), the methods of the integrations that add,
delete or rewrite, every MCP tool the server lists, and every management command. Each is
called on a namespace under legal hold; afterwards every protected row (the watched columns of
every protected table, ``ttmemory.models.holds.PROTECTED``) must be exactly as before: rows
may be added (a held conversation goes on), none removed or rewritten. A path found but with
no call written here fails the test, naming it: a new mutator must be covered.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib import admin
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection, connections
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import PutOp
from mcp import Client as MCPClient
from rest_framework.test import APIClient

from tests.security.holds import filled_namespace, hold
from tests.security.holds import protected_rows as rows_of
from ttmemory import memory
from ttmemory.admin.history import state_token
from ttmemory.integrations.langgraph import TTMemorySaver, TTMemoryStore
from ttmemory.integrations.mcp import Credentials, create_server
from ttmemory.integrations.openai_agents import TTMemorySession
from ttmemory.models import ApiKey, Fact, LegalHold, MemorySession, Snapshot
from ttmemory.services.access import api_key_create

pytestmark = pytest.mark.django_db(transaction=True)

NS = "held/paths"
UNSAFE = {"post", "put", "patch", "delete"}
COMMANDS = Path(__file__).resolve().parents[2] / "ttmemory" / "management" / "commands"
INTEGRATION_VERBS = re.compile(r"(add|put|pop|delete|clear|prune|copy|batch|sweep)")


# What the code offers --------------------------------------------------------------------------


def public_mutators() -> list[str]:
    """Names of ``ttmemory.memory`` defined by a service, and their async twins."""
    names = []
    for name in memory.__all__:
        value = getattr(memory, name)
        if inspect.isclass(value) or not callable(value):
            continue
        if str(getattr(value, "__module__", "")).startswith("ttmemory.services"):
            names.append(name)
    return sorted(names)


def unsafe_routes() -> list[tuple[str, str, str]]:
    """(route, method, "ViewSet.action") of every unsafe API route the resolver serves."""

    def walk(patterns: list[Any], prefix: str) -> Iterator[tuple[str, URLPattern]]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern), pattern

    found = []
    for route, pattern in walk(get_resolver().url_patterns, ""):
        actions = getattr(pattern.callback, "actions", None)
        cls = getattr(pattern.callback, "cls", None)
        if not route.startswith("api/memory/") or not actions or cls is None:
            continue
        for method, action in actions.items():
            if method in UNSAFE:
                found.append((route, method, f"{cls.__name__}.{action}"))
    return found


def admin_paths(superuser: User) -> list[tuple[str, str, str]]:
    """(model, "action"|"view"|"delete", name) of every admin action, custom view and delete
    view of ttmemory's registered models."""
    request = RequestFactory().get("/admin/")
    request.user = superuser
    found = []
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label != "ttmemory":
            continue
        label = model._meta.model_name
        for name in model_admin.get_actions(request):
            found.append((label, "action", name))
        standard = ("changelist", "add", "history", "delete", "change", "autocomplete")
        for url in model_admin.get_urls():
            if url.name and not url.name.endswith(tuple(f"_{s}" for s in standard)):
                found.append((label, "view", url.name))
        found.append((label, "delete", f"ttmemory_{label}_delete"))
    return found


def integration_methods() -> list[str]:
    found = []
    for cls in (TTMemorySession, TTMemorySaver, TTMemoryStore):
        for name in dir(cls):
            wanted = not name.startswith("_") and INTEGRATION_VERBS.search(name)
            if wanted and callable(getattr(cls, name)):
                found.append(f"{cls.__name__}.{name}")
    return sorted(found)


def management_commands() -> list[str]:
    return sorted(p.stem for p in COMMANDS.glob("ttmemory_*.py"))


# The held namespace ----------------------------------------------------------------------------


@dataclass
class Held:
    session: MemorySession
    snapshot: Snapshot
    fact_id: int
    hold: LegalHold
    api: APIClient
    api_key: str
    staff: Client
    superuser: User
    outcomes: dict[str, str] = field(default_factory=dict)


def protected_rows() -> dict[str, set[tuple[Any, ...]]]:
    return rows_of(NS)


@pytest.fixture
def held() -> Iterator[Held]:
    session = filled_namespace(NS)
    filled_namespace(NS, key="second")
    superuser = User.objects.create_superuser("root", password="pw")
    staff = Client()
    staff.force_login(superuser)
    _, raw = api_key_create(name="paths", namespaces=[NS], can_rollback=True, can_erase=True)
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=raw)
    fact_id = Fact.objects.filter(namespace=NS).values_list("pk", flat=True)[0]
    snapshot = Snapshot.objects.filter(session=session).order_by("pk")[0]
    placed = hold(NS)
    yield Held(session, snapshot, fact_id, placed, api, raw, staff, superuser)
    LegalHold.objects.all().delete()  # before the tables are emptied for the next test
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())


# How to call each path -------------------------------------------------------------------------


def _turn() -> list[dict[str, Any]]:
    return [{"role": "user", "content": "One more"}, {"role": "assistant", "content": "Sure."}]


MUTATOR_CALLS: dict[str, Callable[[Held], dict[str, Any]]] = {
    "fact_forget": lambda h: {"namespace": NS, "fact_id": h.fact_id},
    "fact_remember": lambda h: {"namespace": NS, "text": "The user ships parcels to Lisbon"},
    "fact_supersede": lambda h: {"namespace": NS, "fact_id": h.fact_id, "text": "Porto now"},
    "facts_learn": lambda h: {"namespace": NS, "messages": _turn()},
    "facts_prune_expired": lambda h: {},
    "legal_hold_lift": lambda h: {"namespace": NS, "session": h.session},  # none there
    "legal_hold_place": lambda h: {"namespace": NS, "reason": "again"},
    "message_add": lambda h: {"session": h.session, "message": _turn()[0]},
    "message_add_many": lambda h: {"session": h.session, "messages": _turn()},
    "namespace_erase": lambda h: {"namespace": NS},
    "profile_update": lambda h: {"namespace": NS, "kind": "user", "data": {"tier": None}},
    "prune_expired": lambda h: {},
    "session_clear": lambda h: {"session": h.session},
    "session_delete": lambda h: {"session": h.session},
    "session_edit": lambda h: {"session": h.session, "seq": 1, "message": _turn()[0]},
    "session_fork": lambda h: {"session": h.session},
    "session_open": lambda h: {"namespace": NS, "key": "chat"},
    "session_rewind": lambda h: {"session": h.session, "to_seq": 4},
    "session_state_update": lambda h: {"session": h.session, "values": {"step": 2}},
    "session_trim": lambda h: {"session": h.session, "max_tokens": 10},
    "snapshot_create": lambda h: {"session": h.session},
    "snapshot_rollback": lambda h: {"session": h.session, "snapshot": h.snapshot, "safe": False},
    "snapshot_rollback_detailed": lambda h: {"session": h.session, "snapshot": h.snapshot},
    "turn_add": lambda h: {"session": h.session, "messages": _turn(), "learn": False},
}

API_BODIES: dict[str, dict[str, Any]] = {
    "SessionViewSet.create": {"key": "chat"},
    "SessionViewSet.partial_update": {"metadata": {"step": 2}},
    "SessionViewSet.destroy": {},
    "SessionViewSet.clear": {},
    "SessionViewSet.edit": {"seq": 1, "message": {"role": "user", "content": "edited"}},
    "SessionViewSet.fork": {},
    "SessionViewSet.prompt": {"max_tokens": 500},
    "SessionViewSet.rewind": {"to_seq": 4},
    "SessionViewSet.trim": {"max_tokens": 10},
    "SessionViewSet.undo": {},
    "MessageViewSet.create": {"messages": _turn()},
    "SnapshotViewSet.create": {"label": "more"},
    "SnapshotViewSet.rollback": {"safe": False},
    "FactViewSet.create": {"text": "The user ships parcels to Lisbon"},
    "FactViewSet.learn": {"messages": _turn()},
    "FactViewSet.recall": {"query": "Lisbon"},
    "FactViewSet.destroy": {},
    "FactViewSet.supersede": {"text": "Porto now"},
    "ProfileViewSet.partial_update": {"data": {"tier": None}},
    "NamespaceViewSet.erase": {"confirm": NS},
    "RetentionViewSet.partial_update": {"snapshot_ttl": "1"},
    "RetentionViewSet.destroy": {},
    "RetentionViewSet.place": {"reason": "again"},
    "RetentionViewSet.lift": {},  # the key may not lift: 403
    "MessageSearchViewSet.search": {"query": "Lisbon"},
}


def _api_url(route: str, h: Held) -> str:
    values = {
        "session_id": h.session.pk,
        "snapshot_id": h.snapshot.pk,
        "fact_id": h.fact_id,
        "kind": "user",
        "hold_id": h.hold.pk,
        "seq": 1,
        "job_id": uuid.uuid4(),
    }
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), route)


def _admin_call(h: Held, model: str, kind: str, name: str) -> int:
    model_admin = next(ma for m, ma in admin.site._registry.items() if m._meta.model_name == model)
    rows = model_admin.model._default_manager.all()
    if any(f.name == "namespace" for f in model_admin.model._meta.fields):
        rows = rows.filter(namespace=NS)
    pks = [str(pk) for pk in rows.values_list("pk", flat=True)]
    form = {"post": "yes", "confirm": NS, "namespace": NS, "text": "edited", "reason": "x"}
    form["state"] = state_token(MemorySession.objects.get(pk=h.session.pk))
    if kind == "action":
        url = reverse(f"admin:ttmemory_{model}_changelist")
        data = {**form, "action": name, "_selected_action": pks}
        return h.staff.post(url, data).status_code
    own = {"memorysession": h.session.pk, "fact": h.fact_id}.get(model, pks[0] if pks else 1)
    url_pattern = next(
        u for u in [*model_admin.get_urls()] if u.name == name and u.name is not None
    )
    kwargs = {
        key: value
        for key, value in {
            "object_id": own,
            "snapshot_id": h.snapshot.pk,
            "seq": 4,
        }.items()
        if f"<int:{key}>" in str(url_pattern.pattern) or f"<path:{key}>" in str(url_pattern.pattern)
    }
    url = reverse(f"admin:{name}", kwargs=kwargs)
    if "namespace" in name:
        url += f"?namespace={NS}"
    return h.staff.post(url, form).status_code


def _integration_call(h: Held, name: str) -> None:
    cls_name, method = name.split(".")
    config = {"configurable": {"thread_id": "thread-1", "checkpoint_ns": ""}}
    if cls_name == "TTMemorySession":
        agents = TTMemorySession("chat", namespace=NS)
        args: dict[str, tuple[Any, ...]] = {
            "add_items": ([{"role": "user", "content": "more"}],),
            "pop_item": (),
            "clear_session": (),
        }
        async_to_sync(getattr(agents, method))(*args[method])
        return
    if cls_name == "TTMemorySaver":
        saver = TTMemorySaver(namespace=NS)
        base = method[1:] if method.startswith("a") and hasattr(saver, method[1:]) else method
        args = {
            "put": (config, empty_checkpoint(), {}, {}),
            "put_writes": (
                {"configurable": {**config["configurable"], "checkpoint_id": "cp-1"}},
                [("channel", "value")],
                "task-1",
            ),
            "delete_thread": ("thread-1",),
            "delete_for_runs": (["run-1"],),
            "copy_thread": ("thread-2", "thread-1"),
            "prune": (["thread-1"],),
        }
        call = getattr(saver, method)
        if inspect.iscoroutinefunction(call):
            async_to_sync(call)(*args[base])
        else:
            call(*args[base])
        return
    store = TTMemoryStore(namespace=NS)
    base = method[1:] if method.startswith("a") and hasattr(store, method[1:]) else method
    store_args: dict[str, tuple[Any, ...]] = {
        "batch": ([PutOp(("memories",), "k", None)],),
        "put": (("memories",), "k", {"text": "x"}),
        "delete": (("memories",), "k"),
        "sweep_ttl": (),
    }
    call = getattr(store, method)
    if inspect.iscoroutinefunction(call):
        async_to_sync(call)(*store_args[base])
    else:
        call(*store_args[base])


async def _mcp_calls(h: Held) -> dict[str, str]:
    outcomes = {}
    arguments = {
        "remember": {"text": "The user ships parcels to Lisbon"},
        "recall": {"query": "Lisbon"},
        "forget": {"fact_id": h.fact_id},
        "list_memories": {},
        "get_context": {"session_key": "chat", "max_tokens": 500},
        "append_messages": {"session_key": "chat", "messages": _turn()},
    }
    async with MCPClient(create_server(credentials=Credentials(api_key=h.api_key))) as client:
        for tool in (await client.list_tools()).tools:
            if tool.name not in arguments:
                outcomes[f"mcp:{tool.name}"] = "uncovered"
                continue
            result = await client.call_tool(tool.name, arguments[tool.name])
            outcomes[f"mcp:{tool.name}"] = "error" if result.is_error else "ok"
    return outcomes


COMMAND_ARGS: dict[str, list[str] | None] = {
    "ttmemory_apikey": ["--name", "held-paths", "--namespace", NS],
    "ttmemory_doctor": [],  # reads and prints the configuration
    "ttmemory_genkey": [],
    "ttmemory_init": None,  # writes settings files, not rows: nothing to call on a namespace
    "ttmemory_jobs": [],
    "ttmemory_mcp": None,  # serves the MCP tools, each called above
    # Rebuilds the message table keeping every row; run here it would leave the shared test
    # database partitioned: test_legal_hold's partition test runs it inside a rolled-back test.
    "ttmemory_partition": None,
    "ttmemory_prune": [],
    "ttmemory_rebind": [],
    "ttmemory_reembed": [],
    "ttmemory_reindex": [],
    "ttmemory_rotate_keys": [],
}


# The test --------------------------------------------------------------------------------------


def test_no_path_deletes_or_rewrites_held_content(held: Held, capsys: Any) -> None:
    uncovered: list[str] = []
    changed: list[str] = []
    server_errors: list[str] = []

    def check(path: str, call: Callable[[], Any]) -> None:
        before = protected_rows()
        try:
            result = call()
            held.outcomes[path] = f"ok {result}" if isinstance(result, int) else "ok"
        except Exception as exc:  # a refusal is fine; what matters is the rows
            held.outcomes[path] = type(exc).__name__
        after = protected_rows()
        lost = {table: before[table] - after[table] for table in before}
        if any(lost.values()):
            changed.append(f"{path}: { ({t: len(r) for t, r in lost.items() if r}) }")
        if not LegalHold.objects.filter(namespace=NS, session__isnull=True).exists():
            held.outcomes[path] += " (lifted the hold: placed again)"
            held.hold = hold(NS)
        if not ApiKey.objects.active().filter(name="paths").exists():
            held.outcomes[path] += " (revoked the key: a new one)"
            held.api_key = api_key_create(
                name="paths", namespaces=[NS], can_rollback=True, can_erase=True
            )[1]
            held.api.credentials(HTTP_X_API_KEY=held.api_key)

    for name in public_mutators():
        base = name[1:] if name.startswith("a") and name[1:] in MUTATOR_CALLS else name
        if base not in MUTATOR_CALLS:
            uncovered.append(f"memory.{name}")
            continue
        function = getattr(memory, name)
        if inspect.iscoroutinefunction(function):
            check(
                f"memory.{name}",
                lambda f=function, b=base: async_to_sync(f)(**MUTATOR_CALLS[b](held)),
            )
        else:
            check(f"memory.{name}", lambda f=function, b=base: f(**MUTATOR_CALLS[b](held)))

    for route, method, action in unsafe_routes():
        if action not in API_BODIES:
            uncovered.append(f"api {method.upper()} {route} ({action})")
            continue

        def request(route: str = route, method: str = method, action: str = action) -> int:
            response = getattr(held.api, method)(
                _api_url(route, held), API_BODIES[action], format="json"
            )
            if response.status_code >= 500:
                server_errors.append(f"{method.upper()} {route}: {response.status_code}")
            return int(response.status_code)

        check(f"api {method.upper()} {route}", request)

    for model, kind, name in admin_paths(held.superuser):

        def admin_request(model: str = model, kind: str = kind, name: str = name) -> int:
            # A refusal is a page with a message for the support agent, never a server error.
            try:
                status = _admin_call(held, model, kind, name)
            except Exception as exc:
                server_errors.append(f"admin {model} {kind} {name}: {type(exc).__name__}")
                raise
            if status >= 500:
                server_errors.append(f"admin {model} {kind} {name}: {status}")
            return status

        check(f"admin {model} {kind} {name}", admin_request)

    for name in integration_methods():
        check(f"integration {name}", lambda n=name: _integration_call(held, n))

    before = protected_rows()
    mcp = async_to_sync(_mcp_calls)(held)
    after = protected_rows()
    uncovered.extend(path for path, outcome in mcp.items() if outcome == "uncovered")
    held.outcomes.update(mcp)
    if any(before[t] - after[t] for t in before):
        changed.append("mcp tools")

    for command in management_commands():
        if command not in COMMAND_ARGS:
            uncovered.append(f"command {command}")
            continue
        arguments = COMMAND_ARGS[command]
        if arguments is None:
            held.outcomes[f"command {command}"] = "exempt"
            continue
        if command == "ttmemory_partition" and connection.vendor != "postgresql":
            held.outcomes[f"command {command}"] = "PostgreSQL only"
            continue
        check(f"command {command}", lambda c=command, a=arguments: call_command(c, *a))

    covered = [p for p, o in held.outcomes.items() if o not in ("exempt", "PostgreSQL only")]
    with capsys.disabled():
        print(
            f"\nlegal hold: {len(covered)} paths called on a held namespace ({connection.vendor})"
        )
        for path, outcome in sorted(held.outcomes.items()):
            print(f"  {path}: {outcome}")
    assert not uncovered, f"paths with no call in this test: {uncovered}"
    assert not changed, f"held rows deleted or rewritten by: {changed}"
    assert not server_errors, server_errors
    assert len(covered) >= 100


def test_a_new_public_mutator_without_a_call_here_is_found(monkeypatch: Any) -> None:
    def memory_wipe(*, namespace: str) -> None:
        """A service someone might add tomorrow."""

    memory_wipe.__module__ = "ttmemory.services.wipe"
    monkeypatch.setattr(memory, "memory_wipe", memory_wipe, raising=False)
    monkeypatch.setattr(memory, "__all__", [*memory.__all__, "memory_wipe"])
    found = public_mutators()
    assert "memory_wipe" in found and "memory_wipe" not in MUTATOR_CALLS
    assert {"session_delete", "asession_delete", "snapshot_rollback"} <= set(found)
    assert "message_recent" not in found  # a selector reads
