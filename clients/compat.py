"""Breaking changes between two OpenAPI documents (the snapshot and what the code serves now).

A change is breaking for a client generated from the old document when it removes an
operation, a parameter, a field or an enum value, renames an operation id (generated function
names follow it), or adds a required request field or parameter. Each is one line of text
(``removed field Session.metadata``); a breaking change made on purpose is acknowledged by
copying its line into ``clients/breaking-changes.txt`` and naming it in CHANGELOG.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CLIENTS = Path(__file__).resolve().parent
SNAPSHOT = CLIENTS / "openapi.json"
ACKNOWLEDGED = CLIENTS / "breaking-changes.txt"
CHANGELOG = CLIENTS.parent / "CHANGELOG.md"
METHODS = ("get", "put", "post", "patch", "delete", "head", "options")


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Every change from ``old`` to ``new`` that can break a client generated from ``old``."""
    changes: list[str] = []
    old_ops, new_ops = dict(_operations(old)), dict(_operations(new))
    for key, operation in old_ops.items():
        if key not in new_ops:
            changes.append(f"removed operation {key}")
            continue
        renamed = new_ops[key].get("operationId")
        if operation.get("operationId") != renamed:
            changes.append(f"renamed operation {key}: {operation.get('operationId')} -> {renamed}")
        old_params, new_params = _parameters(operation), _parameters(new_ops[key])
        changes += [f"removed parameter {key} {name}" for name in old_params.keys() - new_params]
        changes += [
            f"new required parameter {key} {name}"
            for name, required in new_params.items()
            if required and not old_params.get(name, False)
        ]
    old_fields, new_fields = _fields(old), _fields(new)
    changes += [
        f"removed {'field' if '.' in name or '[' in name else 'schema'} {name}"
        for name in sorted(old_fields.keys() - new_fields)
    ]
    request = _request_schemas(new)
    for name, field in sorted(new_fields.items()):
        component = name.split(".")[0].split("[")[0]
        was_required = old_fields.get(name, {}).get("required", False)
        # A new schema is no change for an old client (a renamed one is a removed schema).
        if (
            field["required"]
            and not was_required
            and component in request
            and (component in old_fields)
        ):
            changes.append(f"new required field {name}")
        removed = sorted(set(old_fields.get(name, {}).get("enum", [])) - set(field["enum"]))
        changes += [f"removed enum value {name}: {json.dumps(value)}" for value in removed]
    return changes


def unacknowledged(changes: list[str]) -> list[str]:
    """The changes not listed in ``breaking-changes.txt``."""
    listed = set(acknowledged())
    return [change for change in changes if change not in listed]


def acknowledged() -> list[str]:
    if not ACKNOWLEDGED.exists():
        return []
    lines = (line.strip() for line in ACKNOWLEDGED.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def dump(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                yield f"{method.upper()} {path}", item[method]


def _parameters(operation: dict[str, Any]) -> dict[str, bool]:
    return {
        f"{p['in']}:{p['name']}": bool(p.get("required")) for p in operation.get("parameters", [])
    }


def _fields(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"Session.metadata": {"required": bool, "enum": [...]}}`` for every property of
    every component (nested objects and array items included), and ``{"RoleEnum": ...}``
    for the components that are enums themselves."""
    found: dict[str, dict[str, Any]] = {}
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        _walk(schema, name, False, found)
    return found


def _walk(schema: dict[str, Any], path: str, required: bool, found: dict[str, Any]) -> None:
    found[path] = {"required": required, "enum": list(schema.get("enum", []))}
    for part in schema.get("allOf", []) + schema.get("oneOf", []) + schema.get("anyOf", []):
        if "$ref" not in part:
            _walk(part, path, required, found)
    needed = set(schema.get("required", []))
    for prop, sub in schema.get("properties", {}).items():
        _walk(sub, f"{path}.{prop}", prop in needed, found)
    if isinstance(schema.get("items"), dict) and "$ref" not in schema["items"]:
        _walk(schema["items"], f"{path}[]", False, found)
    found[path]["required"] = required


def _request_schemas(document: dict[str, Any]) -> set[str]:
    """Components a client sends (request bodies and what they refer to)."""
    schemas = document.get("components", {}).get("schemas", {})
    todo = [
        media["schema"]
        for _, operation in _operations(document)
        for media in operation.get("requestBody", {}).get("content", {}).values()
    ]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/components/schemas/"):
                name = ref.rsplit("/", 1)[1]
                if name not in seen:
                    seen.add(name)
                    todo.append(schemas.get(name, {}))
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return seen
