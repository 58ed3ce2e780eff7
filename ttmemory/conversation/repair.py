"""Request repair (DESIGN rule 5): drop orphan tool results, answer unanswered calls."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ttmemory.conversation.groups import tool_call_ids

__all__ = ["INTERRUPTED", "repair"]

INTERRUPTED = "Tool call interrupted: no result was recorded."
"""The content of the synthetic result ``repair`` gives a call that has none."""


def repair(
    messages: Sequence[Mapping[str, Any]],
    *,
    interrupted_content: str = INTERRUPTED,
) -> list[dict[str, Any]]:
    """Return a copy of ``messages`` that a model accepts (DESIGN rule 5; never for storage).

    A tool result is kept only if it answers a call of an earlier assistant message (the
    latest one making that call id) that has no result yet: orphans (their assistant fell out
    of the window) and duplicates are dropped. Kept results are placed right after their
    assistant message, in their original order, so a late result (one stored after a later
    user turn) moves up to where the API expects it. A call with no result gets a synthetic
    ``{"role": "tool", "tool_call_id": id, "content": interrupted_content}`` after the
    existing results, in call order. The input is not mutated; messages are deep copies.
    """
    owner: dict[str, int] = {}
    answers: dict[int, dict[str, int]] = {}
    for index, message in enumerate(messages):
        ids = tool_call_ids(message)
        if ids:
            owner.update(dict.fromkeys(ids, index))
            answers[index] = {}
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str) and call_id in owner:
                answers[owner[call_id]].setdefault(call_id, index)

    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            continue  # emitted right after the assistant message it answers, or dropped
        out.append(copy.deepcopy(dict(message)))
        if index not in answers:
            continue
        found = answers[index]
        out.extend(copy.deepcopy(dict(messages[j])) for j in sorted(found.values()))
        out.extend(
            {"role": "tool", "tool_call_id": call_id, "content": interrupted_content}
            for call_id in tool_call_ids(message)
            if call_id not in found
        )
    return out
