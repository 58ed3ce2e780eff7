"""What the learning tests say and read back: one user message per turn, each answered and
learned as it arrives (``JOBS`` inline), and the namespace's current facts."""

from __future__ import annotations

from tests.conftest import assistant, user
from ttmemory import memory


def chat(namespace: str, *said: str, key: str = "chat-1") -> None:
    """One turn per user message, each answered, learned as it arrives."""
    session = memory.session_open(namespace=namespace, key=key)
    for text in said:
        memory.turn_add(session=session, messages=[user(text), assistant("Noted.")])


def current(namespace: str) -> list[str]:
    """The namespace's current facts, sorted."""
    return sorted(f.text for f in memory.fact_list(namespace=namespace))
