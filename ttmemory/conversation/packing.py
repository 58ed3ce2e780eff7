"""Budget packing of a context window (DESIGN rule 4, as changed by issue 14).

The rules, in one place for every backend:

1. System and developer messages are always kept, come first, and count against the budget.
2. A tool group (an assistant message with tool calls and every result answering them) is kept
   or dropped whole. Its cost is what the model will be sent after repair (rule 5): a call left
   without a result costs the synthetic "interrupted" result repair adds for it.
3. Groups are ordered by their newest member (a tool result that arrived late, after a later
   user message, brings its call along). A turn is a user message with the groups after it up
   to the next user message (groups before the first user message form a turn without a
   question). Whole turns are taken
   newest first while they fit; packing stops at the first that does not.
4. When the newest turn does not fit whole, its question and its newest group are kept, then
   its other groups newest first while they fit (stopping at the first that does not). So the
   window never starts with an answer whose question was cut: it starts with a user message,
   with a turn that has no question in the history, or with a tool call whose result arrived
   after a later user message (the call travels with its result, which is newer than that
   question; the call's own question may then be cut).
5. What must be kept (the system messages, the newest group and the question of its turn) may
   alone exceed the budget: the result says so (``overflow``); callers raise or report it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ttmemory.conversation.repair import INTERRUPTED
from ttmemory.conversation.tokens import count_message_tokens
from ttmemory.conversation.validation import SYSTEM_ROLES
from ttmemory.exceptions import MemoryValidationError

__all__ = ["PackItem", "Packing", "pack", "pack_detailed"]


@dataclass(frozen=True, slots=True)
class PackItem:
    """What packing needs to know about one stored message (no content).

    ``call_ids`` are the tool call ids an assistant message makes; ``tool_call_id`` is the call a
    tool result answers. Both are optional: without them no synthetic result is counted.
    """

    seq: int
    role: str
    tokens: int
    group: int
    call_ids: tuple[str, ...] = ()
    tool_call_id: str = ""


@dataclass(frozen=True, slots=True)
class Packing:
    """The outcome of packing: the chosen seqs and what they cost.

    ``seqs``: system seqs first, then the others in seq order. ``tokens``: what the chosen
    messages cost after repair (an upper bound when repair drops a stray tool result).
    ``required``: the cost of what must be kept whatever the budget. ``overflow``: tokens over
    ``max_tokens`` (0 when the window fits; else ``tokens == required > max_tokens``).
    ``start``: the oldest non-system seq chosen (None when none is). ``question``: the seq of
    the newest turn's question when it is kept apart from the rest of its turn (rule 4), else
    None.
    """

    seqs: list[int]
    tokens: int
    required: int
    max_tokens: int
    start: int | None
    question: int | None = None

    @property
    def overflow(self) -> int:
        return max(0, self.tokens - self.max_tokens)


def _interrupted_tokens(call_id: str, encoding: str) -> int:
    message = {"role": "tool", "tool_call_id": call_id, "content": INTERRUPTED}
    return count_message_tokens(message, encoding=encoding)


def pack_detailed(
    items: Sequence[PackItem], *, max_tokens: int, encoding: str = "o200k_base"
) -> Packing:
    """Choose the seqs of a context window within ``max_tokens`` (the module's rules 1-5).

    Items may come in any order. Groups are ordered by their newest member, so a tool result
    that arrived late brings its call into the window with it.
    ``encoding`` sizes the synthetic results of unanswered calls. O(n log n). Raises
    ``MemoryValidationError`` for a negative ``max_tokens`` or token count; never raises for a
    budget that is too small (see ``Packing.overflow``).
    """
    if max_tokens < 0:
        raise MemoryValidationError("max_tokens", f"must be zero or more, got {max_tokens}.")
    system: list[int] = []
    system_tokens = 0
    members: dict[int, list[PackItem]] = {}
    for index, item in enumerate(items):
        if item.tokens < 0:
            raise MemoryValidationError(
                f"items[{index}].tokens", f"must be zero or more, got {item.tokens}."
            )
        if item.role in SYSTEM_ROLES:
            system.append(item.seq)
            system_tokens += item.tokens
        else:
            members.setdefault(item.group, []).append(item)

    cost: dict[int, int] = {}
    for group, group_items in members.items():
        total = sum(item.tokens for item in group_items)
        head = next((item for item in group_items if item.seq == group and item.call_ids), None)
        if head is not None:
            answered = {item.tool_call_id for item in group_items if item.role == "tool"}
            total += sum(
                _interrupted_tokens(call_id, encoding)
                for call_id in dict.fromkeys(head.call_ids)
                if call_id not in answered
            )
        cost[group] = total
    # Newest first by their newest member (a late tool result makes its call recent: the model
    # sees the result it waits for); a group headed by a user message opens a turn.
    asks = {
        g for g, group in members.items() if any(i.seq == g and i.role == "user" for i in group)
    }
    newest = {g: max(i.seq for i in group) for g, group in members.items()}
    turns: list[list[int]] = []  # each newest group first, its question (if any) last
    current: list[int] = []
    for group in sorted(members, key=newest.__getitem__, reverse=True):
        current.append(group)
        if group in asks:
            turns.append(current)
            current = []
    if current:
        turns.append(current)

    budget = max_tokens - system_tokens
    chosen: list[int] = []
    required = system_tokens
    apart: int | None = None
    if turns:
        newest_turn = turns[0]
        question = newest_turn[-1] if len(newest_turn) > 1 and newest_turn[-1] in asks else None
        must = [newest_turn[0]] + ([question] if question is not None else [])
        required += sum(cost[g] for g in must)
        if sum(cost[g] for g in newest_turn) <= budget:
            for turn in turns:
                size = sum(cost[g] for g in turn)
                if size > budget:
                    break
                budget -= size
                chosen.extend(turn)
        else:
            chosen.extend(must)
            budget -= sum(cost[g] for g in must)
            apart = question
            middle = newest_turn[1:-1] if question is not None else newest_turn[1:]
            for group in middle:
                if cost[group] > budget:
                    break
                budget -= cost[group]
                chosen.append(group)
    seqs = sorted(item.seq for group in chosen for item in members[group])
    return Packing(
        seqs=sorted(system) + seqs,
        tokens=system_tokens + sum(cost[g] for g in chosen),
        required=required,
        max_tokens=max_tokens,
        start=seqs[0] if seqs else None,
        question=apart,
    )


def pack(items: Sequence[PackItem], *, max_tokens: int, encoding: str = "o200k_base") -> list[int]:
    """The seqs ``pack_detailed`` chooses (what must be kept even when it exceeds the budget)."""
    return pack_detailed(items, max_tokens=max_tokens, encoding=encoding).seqs
