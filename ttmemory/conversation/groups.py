"""Tool groups: an assistant message with tool calls and the tool results that answer it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["assign_groups", "tool_call_ids"]


def tool_call_ids(message: Mapping[str, Any]) -> list[str]:
    """Return the ids of the tool calls an assistant message makes, in call order, else []."""
    if message.get("role") != "assistant":
        return []
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    ids = (call.get("id") for call in calls if isinstance(call, Mapping))
    return list(dict.fromkeys(i for i in ids if isinstance(i, str) and i))


def assign_groups(
    messages: Sequence[Mapping[str, Any]],
    *,
    first_seq: int,
    open_calls: Mapping[str, int] | None = None,
) -> list[int]:
    """Return the tool group (a head ``seq``) of each message; message i has seq first_seq + i.

    An assistant message with tool calls heads its own group. A ``tool`` message answering a
    call made earlier, in this list or in ``open_calls`` (call id -> head seq, from storage),
    joins that head's group; when a call id was reused, the latest call wins. Every other
    message, an orphan tool result included, is a group of its own.
    """
    heads: dict[str, int] = dict(open_calls or {})
    groups: list[int] = []
    for index, message in enumerate(messages):
        seq = first_seq + index
        group = seq
        ids = tool_call_ids(message)
        if ids:
            heads.update(dict.fromkeys(ids, seq))
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str):
                group = heads.get(call_id, seq)
        groups.append(group)
    return groups
