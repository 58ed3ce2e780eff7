"""What the learning tests say and read back: one user message per turn, each answered and
learned as it arrives (with the ``inline_learning`` fixture), and the namespace's current
facts."""

from __future__ import annotations

from dataclasses import dataclass

from tests.conftest import assistant, user
from ttmemory import memory
from ttmemory.models import Fact


def chat(namespace: str, *said: str, key: str = "chat-1", reply: str = "Noted.") -> None:
    """One turn per user message, each answered, learned as it arrives."""
    session = memory.session_open(namespace=namespace, key=key)
    for text in said:
        memory.turn_add(session=session, messages=[user(text), assistant(reply)])


def current(namespace: str) -> list[str]:
    """The namespace's current facts, sorted."""
    return sorted(f.text for f in memory.fact_list(namespace=namespace))


def served(namespace: str, query: str) -> str:
    """What a later session is told: the recalled facts and the prompt's memories, together."""
    later = memory.session_open(namespace=namespace, key="later")
    recalled = [f.text for f in memory.fact_recall(namespace=namespace, query=query, k=5).facts]
    prompt = memory.prompt_build(session=later, query=query, max_tokens=4000)
    return "\n".join([*recalled, prompt.sections["memories"]])


def chain(namespace: str, text: str) -> list[str]:
    """The fact ``text`` and the facts that superseded it, oldest first (its history)."""
    [fact] = [f for f in Fact.objects.filter(namespace=namespace) if f.text == text]
    found: list[str] = []
    step: Fact | None = fact
    while step is not None:
        found.append(step.text)
        step = step.superseded_by
    return found


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

    def served(self, query: str) -> str:
        return served(self.namespace, query)

    def chain(self, text: str) -> list[str]:
        return chain(self.namespace, text)
