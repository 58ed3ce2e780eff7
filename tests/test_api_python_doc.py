"""docs/api-python.md documents every public name of ``ttmemory.memory`` as the code has it.

Each function appears as one line `` `name(*, a, b=1) -> Result` `` rendered from
``inspect.signature`` (parameters with their defaults, the return annotation as written), each
result dataclass as `` `Result(field: type, ...)` `` from ``dataclasses.fields``; the page's
Python blocks are run in order against the test database, so the examples work as written; every
sync function has its async twin ``a<name>`` with the same parameters.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from ttmemory import memory

DOC = Path(__file__).resolve().parent.parent / "docs" / "api-python.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _default(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def _annotation(value: Any) -> str:
    return value if isinstance(value, str) else inspect.formatannotation(value)


def render_function(name: str, func: Any) -> str:
    """`name(*, a, b=1) -> Ret`: parameters without their types, the return type as written."""
    signature = inspect.signature(func)
    parts: list[str] = []
    star = False
    for param in signature.parameters.values():
        if param.kind is param.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if param.kind is param.VAR_POSITIONAL:
            star = True
            parts.append(f"*{param.name}")
        elif param.kind is param.VAR_KEYWORD:
            parts.append(f"**{param.name}")
        elif param.default is param.empty:
            parts.append(param.name)
        else:
            parts.append(f"{param.name}={_default(param.default)}")
    returns = signature.return_annotation
    arrow = "" if returns is signature.empty else f" -> {_annotation(returns)}"
    return f"{name}({', '.join(parts)}){arrow}"


def render_result(name: str, cls: Any) -> str:
    """`Result(field: type, other: type = default)` from the dataclass's fields, in order."""
    parts = []
    for field in dataclasses.fields(cls):
        text = f"{field.name}: {_annotation(field.type)}"
        if field.default is not dataclasses.MISSING:
            text += f" = {_default(field.default)}"
        elif field.default_factory is not dataclasses.MISSING:
            text += f" = {_default(field.default_factory())}"
        parts.append(text)
    return f"{name}({', '.join(parts)})"


def documented_lines() -> dict[str, str]:
    """Every public function and result type, rendered as the doc must hold it."""
    lines = {}
    for name in memory.__all__:
        obj = getattr(memory, name)
        if inspect.isfunction(obj):
            lines[name] = render_function(name, obj)
        elif dataclasses.is_dataclass(obj):
            lines[name] = render_result(name, obj)
    return lines


def test_every_public_function_and_result_type_is_documented_with_its_signature() -> None:
    doc = DOC.read_text()
    lines = documented_lines()
    assert len(lines) >= 35  # the functions and result types, not only the errors
    wrong = {}
    for name, line in lines.items():
        if f"`{line}`" not in doc:
            found = re.findall(rf"`{name}\(.*?`", doc)
            wrong[name] = {"code": line, "doc": found}
    assert wrong == {}, "docs/api-python.md differs from the code; rewrite these lines"


def test_every_exported_name_is_documented_and_every_function_has_an_example() -> None:
    doc = DOC.read_text()
    code = "\n".join(BLOCK.findall(doc))
    missing = [name for name in memory.__all__ if f"`{name}" not in doc]
    assert missing == []
    functions = [name for name in memory.__all__ if inspect.isfunction(getattr(memory, name))]
    sync = [name for name in functions if not inspect.iscoroutinefunction(getattr(memory, name))]
    without_example = [name for name in sync if f"memory.{name}(" not in code]
    assert without_example == []
    assert any(f"await memory.a{name}(" in code for name in sync)  # the twins have one


def test_every_sync_function_has_an_async_twin_with_its_parameters() -> None:
    functions = [name for name in memory.__all__ if inspect.isfunction(getattr(memory, name))]
    sync = [name for name in functions if not inspect.iscoroutinefunction(getattr(memory, name))]
    twins = [name for name in functions if inspect.iscoroutinefunction(getattr(memory, name))]
    assert len(sync) >= 30
    missing = [name for name in sync if f"a{name}" not in twins]
    assert missing == [], "add `a<name> = twin(<name>)` and its name to __all__ in memory.py"
    assert len(twins) == len(sync)
    for name in sync:
        assert inspect.signature(getattr(memory, f"a{name}")) == inspect.signature(
            getattr(memory, name)
        )


def test_render_sees_a_changed_signature() -> None:
    def fact_recall(*, namespace: str, query: str, k: int = 7) -> Any:
        raise NotImplementedError

    assert render_function("fact_recall", fact_recall) == (
        "fact_recall(*, namespace, query, k=7) -> Any"
    )
    assert f"`{render_function('fact_recall', fact_recall)}`" not in DOC.read_text()


@pytest.mark.django_db(transaction=True)
def test_the_examples_run_as_written() -> None:
    scope: dict[str, Any] = {}
    for number, block in enumerate(BLOCK.findall(DOC.read_text()), start=1):
        try:
            exec(compile(block, f"docs/api-python.md block {number}", "exec"), scope)
        except Exception as error:
            raise AssertionError(f"block {number} failed:\n{block}") from error
    # The async example's twins ran in Django's thread-sensitive executor, on its own
    # connection: closed so the test database can be flushed.
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())
