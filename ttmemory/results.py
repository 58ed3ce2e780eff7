"""Plain result types returned by services and selectors."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TrimResult:
    """What ``session_trim`` did: rows taken out of the live history and what stayed."""

    removed: int
    removed_tokens: int
    kept: int
    kept_tokens: int
    mode: str  # "archive" or "delete"
    removed_seqs: tuple[int, ...]
