"""OpenAI Agents SDK: ``TTMemorySession``, a ``Session`` kept in ttmemory (extra ``openai-agents``).

``Runner.run(agent, "hi", session=TTMemorySession("chat-1", namespace="user-42"))``.
"""

try:
    import agents  # noqa: F401  (the optional dependency, checked here with a clear hint)
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "ttmemory.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'ttmemory[openai-agents]'"
    ) from exc

from ttmemory.integrations.openai_agents.items import (
    ITEMS_KEY,
    items_from_messages,
    messages_from_items,
)
from ttmemory.integrations.openai_agents.session import TTMemorySession

__all__ = ["ITEMS_KEY", "TTMemorySession", "items_from_messages", "messages_from_items"]
