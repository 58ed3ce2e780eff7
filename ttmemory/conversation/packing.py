"""Budget packing of a context window (DESIGN rule 4): system first, whole groups, newest first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ttmemory.conversation.validation import SYSTEM_ROLES
from ttmemory.exceptions import MemoryValidationError

__all__ = ["PackItem", "pack"]


@dataclass(frozen=True, slots=True)
class PackItem:
    """What packing needs to know about one stored message."""

    seq: int
    role: str
    tokens: int
    group: int


def pack(items: Sequence[PackItem], *, max_tokens: int) -> list[int]:
    """Choose the seqs of a context window within ``max_tokens`` (DESIGN rule 4).

    System and developer messages are always kept, come first in seq order, and count
    against the budget. The other messages form groups (items sharing ``group``, so an
    assistant's tool calls and their results go together), ordered by their newest member.
    Groups are taken newest first while they fit and packing stops at the first that does
    not, so the window is a recent suffix of the groups. If none fits, the newest group is
    kept anyway: the only way the result exceeds the budget. Items may come in any order;
    the other selected seqs follow the system ones in seq order. O(n log n).
    Raises ``MemoryValidationError`` for a negative ``max_tokens`` or token count.
    """
    if max_tokens < 0:
        raise MemoryValidationError("max_tokens", f"must be zero or more, got {max_tokens}.")
    system: list[int] = []
    remaining = max_tokens
    members: dict[int, list[int]] = {}
    sizes: dict[int, int] = {}
    newest: dict[int, int] = {}
    for index, item in enumerate(items):
        if item.tokens < 0:
            raise MemoryValidationError(
                f"items[{index}].tokens", f"must be zero or more, got {item.tokens}."
            )
        if item.role in SYSTEM_ROLES:
            system.append(item.seq)
            remaining -= item.tokens
            continue
        members.setdefault(item.group, []).append(item.seq)
        sizes[item.group] = sizes.get(item.group, 0) + item.tokens
        if item.seq > newest.get(item.group, item.seq - 1):
            newest[item.group] = item.seq

    chosen: list[int] = []
    for rank, group in enumerate(sorted(newest, key=newest.__getitem__, reverse=True)):
        if sizes[group] > remaining and rank > 0:
            break
        # After an overflowing newest group ``remaining`` is negative and nothing else fits.
        remaining -= sizes[group]
        chosen.extend(members[group])
    return sorted(system) + sorted(chosen)
