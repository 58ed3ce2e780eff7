"""What the learning tests say and read back: one user message per turn, each answered and
learned as it arrives (with the ``inline_learning`` fixture), and the namespace's current
facts."""

from __future__ import annotations

from dataclasses import dataclass

from tests.conftest import assistant, user
from ttmemory import memory


def chat(namespace: str, *said: str, key: str = "chat-1", reply: str = "Noted.") -> None:
    """One turn per user message, each answered, learned as it arrives."""
    session = memory.session_open(namespace=namespace, key=key)
    for text in said:
        memory.turn_add(session=session, messages=[user(text), assistant(reply)])


def current(namespace: str) -> list[str]:
    """The namespace's current facts, sorted."""
    return sorted(f.text for f in memory.fact_list(namespace=namespace))


@dataclass(frozen=True)
class Talk:
    """``chat`` and ``current`` bound to one namespace (a test module's ``NS``)."""

    namespace: str
    key: str = "chat-1"
    reply: str = "Noted."

    def chat(self, *said: str, key: str | None = None) -> None:
        chat(self.namespace, *said, key=key or self.key, reply=self.reply)

    def current(self) -> list[str]:
        return current(self.namespace)
