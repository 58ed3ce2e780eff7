"""Plain result types returned by services and selectors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class TrimResult:
    """What ``session_trim`` did: rows taken out of the live history and what stayed."""

    removed: int
    removed_tokens: int
    kept: int
    kept_tokens: int
    mode: str  # "archive" or "delete"
    removed_seqs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SnapshotDiff:
    """What rolling back to a snapshot would change in the live history.

    ``remove``: live messages the snapshot does not have (added after it), as ``(seq, message)``.
    ``restore``: messages of the snapshot no longer live (trimmed or cleared since), likewise.
    Seqs are never reused, so a seq present on both sides is the same message.
    """

    remove: tuple[tuple[int, dict[str, Any]], ...]
    restore: tuple[tuple[int, dict[str, Any]], ...]
    tokens_removed: int
    tokens_restored: int
    summary_changes: bool
    facts_superseded: tuple[Any, ...] = ()

    @property
    def remove_count(self) -> int:
        return len(self.remove)

    @property
    def restore_count(self) -> int:
        return len(self.restore)

    @property
    def remove_seq_range(self) -> tuple[int, int] | None:
        return (self.remove[0][0], self.remove[-1][0]) if self.remove else None

    @property
    def restore_seq_range(self) -> tuple[int, int] | None:
        return (self.restore[0][0], self.restore[-1][0]) if self.restore else None

    @property
    def is_empty(self) -> bool:
        return not self.remove and not self.restore and not self.summary_changes


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Facts recalled for a query, best first.

    ``mode`` says what ran: "hybrid" (vectors and keywords blended), "keyword" (no usable
    vector: the embedder failed or is skipped by its circuit breaker, see ``fallback_reason``)
    or "vector" (the query has no indexable keyword). ``evidence_similarity`` is the evidence
    floor in force: the hits end with the last fact sharing a keyword with the query or at
    least this similar to it, so neighbour context never pads them; ``unpadded`` counts the
    facts that would otherwise have filled the list (fewer than ``k`` hits rather than those).
    """

    hits: list[tuple[Any, float]]
    mode: str
    fallback_reason: str = ""
    evidence_similarity: float | None = None
    unpadded: int = 0

    @property
    def facts(self) -> list[Any]:
        return [fact for fact, _ in self.hits]


@dataclass(frozen=True, slots=True)
class FactChange:
    """One decision of fact extraction: ADD, UPDATE, SUPERSEDE, RETRACT or NOOP, and the facts
    involved (for RETRACT, ``fact`` is the fact that was ended)."""

    action: str
    fact: Any
    previous: Any = None


class FactChanges(list[FactChange]):
    """The decisions of one extraction run, in order (a list of ``FactChange``).

    ``rejected`` counts the candidates the quality gate refused (first person left in, a
    question, a hypothetical, a fragment, about the assistant): counted, never stored.
    """

    rejected: int = 0


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What ``turn_add`` did: the stored messages and how learning went.

    ``learning``: ``"inline"`` (``changes`` holds the fact changes), ``"queued"`` (``job_id`` is
    the learning job to poll) or ``"off"`` (``learn=False``, or nothing was appended); ``job_id`` is
    ``""`` unless queued.
    """

    messages: list[Any]
    learning: str
    changes: list[FactChange] = field(default_factory=list)
    job_id: str = ""


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """What ``namespace_erase`` removed: rows per table, Redis keys, and when.

    ``kept`` counts the rows of the namespace that outlive the erase by design: the audit log
    (``audit_entry``: who did what to the namespace, when and why, with ids and counts but no
    content), so the erasure itself stays on record.
    """

    namespace: str
    counts: dict[str, int]
    redis_keys: int
    erased_at: str
    kept: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A context window with its cost: what ``context_window_detailed`` returns.

    ``messages``: what to send, summary and system messages first. ``tokens``: their tokens
    (each message's count, as ``count_message_tokens``; an upper bound when repair dropped a
    stray tool result). ``required``: the tokens of what must be kept whatever the budget
    (system messages, summary, the newest group and its question). ``overflow``: tokens over
    ``max_tokens``, 0 when the window fits (only ever > 0 with ``strict=False``).
    """

    messages: list[dict[str, Any]]
    tokens: int
    required: int
    max_tokens: int

    @property
    def overflow(self) -> int:
        return max(0, self.tokens - self.max_tokens)


@dataclass(frozen=True, slots=True)
class PromptContext:
    """A prompt ready to send: one system message (profile, memories, state) and the window.

    ``tokens`` holds each section's tokens (profile, memories, state, window) and ``total`` is
    within the ``max_tokens`` asked for; only with ``strict=False`` may it exceed it, by
    ``overflow`` tokens (the sections are then empty and the window is what must be kept).
    """

    system: str
    window: list[dict[str, Any]]
    sections: dict[str, str]
    tokens: dict[str, int]
    total: int
    recall_mode: str
    overflow: int = 0  # tokens over max_tokens, only ever > 0 with strict=False
    #: Why each empty section is empty (section -> "not asked", "no query", "nothing stored",
    #: "nothing relevant", "all in window" or "over budget"); sections with lines are absent.
    empty: dict[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return ([{"role": "system", "content": self.system}] if self.system else []) + self.window


@dataclass(frozen=True, slots=True)
class RollbackResult:
    """A rollback's outcome: the safety snapshot (None when unsafe), seqs removed and restored,
    and the facts it superseded because their only source messages were removed."""

    safety: Any
    removed_seqs: tuple[int, ...]
    restored_seqs: tuple[int, ...]
    superseded_facts: list[Any]


@dataclass(slots=True)
class PruneReport:
    """What one run of ``prune_expired`` deleted (or archived): rows per kind, in total and per
    namespace (counts only), how long it took, and how many rows it left for the next run
    because their session's lock stayed busy. A second run right after finds nothing."""

    counts: dict[str, int] = field(default_factory=dict)
    by_namespace: dict[str, dict[str, int]] = field(default_factory=dict)
    batches: int = 0
    seconds: float = 0.0
    skipped: int = 0  # rows left for the next run: their session's lock stayed busy

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, namespace: str, kind: str, count: int) -> None:
        if count:
            self.counts[kind] = self.counts.get(kind, 0) + count
            per = self.by_namespace.setdefault(namespace, {})
            per[kind] = per.get(kind, 0) + count


@dataclass(frozen=True, slots=True)
class MessageHit:
    """One past message found by ``message_search``, with its neighbours as context.

    ``session`` is the ``MemorySession`` it belongs to, ``seq`` its place there, ``message``
    the Chat Completions dict, ``archived`` whether it has left the live history (trimmed or
    summarised). ``context`` holds up to ``window`` messages of the same session on each side,
    as ``(seq, message)`` in order, the hit itself excluded.
    """

    session: Any
    seq: int
    score: float
    message: dict[str, Any]
    archived: bool
    created_at: Any
    context: tuple[tuple[int, dict[str, Any]], ...] = ()

    @property
    def transcript(self) -> list[tuple[int, dict[str, Any]]]:
        """The hit and its context in session order."""
        return sorted([*self.context, (self.seq, self.message)], key=lambda item: item[0])
