"""ScriptedLLM: an in-process LLM for tests and demos, answering from a queue."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from ttmemory.backends.llm.base import LLM, LLMResponse
from ttmemory.exceptions import LLMError


class ScriptedLLM(LLM):
    """Answers with queued texts (``ScriptedLLM.queue``), or raises queued exceptions.

    ``requests`` records every request's messages. Class-level state, so tests can script the
    instance the settings create. An empty queue is an error: nothing is invented.
    """

    queue: deque[str | BaseException] = deque()
    requests: list[list[dict[str, Any]]] = []
    _lock = threading.Lock()

    def __init__(self, *, model: str = "scripted-1") -> None:
        self.model = model

    @classmethod
    def reset(cls, *answers: str | BaseException) -> None:
        with cls._lock:
            cls.queue = deque(answers)
            cls.requests = []

    def complete(self, messages: list[dict[str, Any]], *, json_object: bool = False) -> LLMResponse:
        with self._lock:
            ScriptedLLM.requests.append([dict(m) for m in messages])
            if not ScriptedLLM.queue:
                raise LLMError("ScriptedLLM has no scripted answer left")
            answer = ScriptedLLM.queue.popleft()
        if isinstance(answer, BaseException):
            raise answer
        prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4
        return LLMResponse(
            text=answer,
            model=self.model,
            prompt_tokens=prompt,
            completion_tokens=len(answer) // 4,
            latency_ms=0.1,
        )
