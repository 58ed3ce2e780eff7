"""Plain result types returned by services and selectors."""

from __future__ import annotations

from dataclasses import dataclass
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
