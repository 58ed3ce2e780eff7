"""`ttmemory.memory` exports every name DESIGN section 4 fixes, and only public ones."""

from __future__ import annotations

import inspect

from ttmemory import memory, selectors, services

# DESIGN.md section 4: the names a user's code may rely on.
FIXED = {
    "session_open",
    "message_add",
    "message_add_many",
    "message_recent",
    "context_window",
    "session_trim",
    "session_clear",
    "snapshot_create",
    "snapshot_list",
    "snapshot_rollback",
    "fact_remember",
    "fact_recall",
    "fact_forget",
    "facts_learn",
    "profile_update",
    "profile_get",
    "prompt_build",
    "namespace_export",
    "namespace_erase",
}


def test_every_fixed_name_is_exported_and_nothing_private() -> None:
    assert set(memory.__all__) >= FIXED | {f"a{name}" for name in FIXED}  # with async twins
    assert not [name for name in memory.__all__ if name.startswith("_")]
    assert all(hasattr(memory, name) for name in memory.__all__)


def test_exported_functions_are_keyword_only_and_come_from_services_or_selectors() -> None:
    for name in memory.__all__:
        value = getattr(memory, name)
        if not inspect.isfunction(value):
            continue
        if inspect.iscoroutinefunction(value):  # an async twin: wraps the sync function
            value = value.__wrapped__
            name = name.removeprefix("a")
        assert value in (getattr(services, name, None), getattr(selectors, name, None)), name
        kinds = {p.kind for p in inspect.signature(value).parameters.values()}
        assert kinds <= {inspect.Parameter.KEYWORD_ONLY}, f"{name} takes positional arguments"
