"""LangGraph on ttmemory: a checkpointer (``TTMemorySaver``) and a store (``TTMemoryStore``).

Install with the ``langgraph`` extra. Nothing in ttmemory's core imports this package.
"""

from ttmemory.integrations.langgraph.checkpoint import TTMemorySaver
from ttmemory.integrations.langgraph.store import TTMemoryStore

__all__ = ["TTMemorySaver", "TTMemoryStore"]
