"""Agents SDK items to stored Chat Completions messages and back, exactly.

Each stored message is what ``from_responses_items`` makes of a group of items (so the
history reads as Chat Completions everywhere: ``context_window``, the REST API, the admin
transcript) and carries the items it was made from under ``ITEMS_KEY``, so the SDK gets back
exactly what it stored: ids, statuses, reasoning and hosted-tool items included.

A group is one ``message``, ``function_call`` or ``function_call_output`` item; the
``function_call`` items right after an assistant message (or after each other) join it, as
parallel calls of one assistant turn do. Items with no Chat Completions form (``reasoning``,
hosted tool calls such as ``web_search_call``, ``computer_call`` ...) ride with the next group,
so a reasoning item stays with the call or answer it led to; trailing ones ride with the
previous group of the same batch, or alone on an empty assistant message. The token count of
a message is that of its chat form (the carried items are not counted twice).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ttmemory.exceptions import MemoryValidationError
from ttmemory.integrations.formats import from_responses_items, to_responses_items
from ttmemory.integrations.formats._common import require_mapping

__all__ = ["ITEMS_KEY", "grouped_messages", "items_from_messages", "messages_from_items", "renamed"]

ITEMS_KEY = "openai_agents_items"
CHAT_KINDS = frozenset({"message", "function_call", "function_call_output"})


def _kind(item: Mapping[str, Any]) -> Any:
    return item.get("type", "message" if "role" in item else None)


def _takes_calls(group: list[Mapping[str, Any]]) -> bool:
    """True when the group's chat form is an assistant message, so a call can join it."""
    chat = [item for item in group if _kind(item) in CHAT_KINDS]
    if not chat:
        return False
    last = chat[-1]
    return _kind(last) == "function_call" or (
        _kind(last) == "message" and last.get("role") == "assistant"
    )


def messages_from_items(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Group ``items`` and convert each group to one Chat Completions message carrying it.

    Raises ``MemoryValidationError`` naming the offending item (``items[3].call_id``).
    """
    return [message for message, _ in grouped_messages(items)]


def grouped_messages(items: Sequence[Mapping[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """``messages_from_items`` with the index in ``items`` of each message's first item."""
    groups: list[list[tuple[int, Mapping[str, Any]]]] = []
    riders: list[tuple[int, Mapping[str, Any]]] = []
    for index, raw in enumerate(items):
        item = require_mapping(raw, f"items[{index}]")
        kind = _kind(item)
        if kind not in CHAT_KINDS:
            riders.append((index, item))
            continue
        if kind == "function_call" and groups and _takes_calls([i for _, i in groups[-1]]):
            groups[-1].extend([*riders, (index, item)])
        else:
            groups.append([*riders, (index, item)])
        riders = []
    if riders:
        if groups:
            groups[-1].extend(riders)
        else:
            groups.append(riders)
    out = []
    for group in groups:
        chat_items = [(index, item) for index, item in group if _kind(item) in CHAT_KINDS]
        try:
            chat = from_responses_items([item for _, item in chat_items])
        except MemoryValidationError as error:
            raise renamed(error, "items", [index for index, _ in chat_items]) from None
        message: dict[str, Any] = chat[0] if chat else {"role": "assistant", "content": ""}
        message[ITEMS_KEY] = copy.deepcopy([dict(item) for _, item in group])
        out.append((message, group[0][0]))
    return out


def renamed(error: MemoryValidationError, name: str, indexes: Sequence[int]) -> Exception:
    """``error`` with its leading ``xxx[k]`` renamed to ``name[indexes[k]]``."""
    match = re.match(r"^\w+\[(\d+)\]", error.field)
    if match is None or int(match.group(1)) >= len(indexes):
        return error
    field = f"{name}[{indexes[int(match.group(1))]}]{error.field[match.end() :]}"
    return MemoryValidationError(field, error.message)


def items_from_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The SDK items of stored messages: the carried items, or the Responses form of a
    message stored without them (written through the Python or REST API, a summary, a
    repaired result). The carried items are returned as they are, not copied: pass messages
    fresh from a read."""
    items: list[dict[str, Any]] = []
    for message in messages:
        carried = message.get(ITEMS_KEY)
        if isinstance(carried, list):
            items.extend(carried)  # a fresh decryption per read: nothing shared to copy
        else:
            items.extend(to_responses_items([message]))
    return items
