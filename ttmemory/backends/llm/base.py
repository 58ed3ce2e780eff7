"""The LLM contract: chat messages in, text out, with token usage and latency for the ledger."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """One completion: its text and what it cost."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float


class LLM(ABC):
    """A chat model. ``complete`` returns an ``LLMResponse`` or raises ``LLMError``."""

    model: str

    @abstractmethod
    def complete(self, messages: list[dict[str, Any]], *, json_object: bool = False) -> LLMResponse:
        """Complete ``messages`` (Chat Completions dicts); ``json_object`` asks for JSON."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release clients; called when settings change."""
