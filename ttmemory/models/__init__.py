"""ttmemory models, one module per entity."""

from ttmemory.models.message import Message, Role
from ttmemory.models.session import MemorySession

__all__ = ["MemorySession", "Message", "Role"]
