"""ttmemory models, one module per entity."""

from ttmemory.models.lease import SessionLease
from ttmemory.models.message import Message, Role
from ttmemory.models.session import MemorySession
from ttmemory.models.snapshot import Snapshot, SnapshotKind

__all__ = ["MemorySession", "Message", "Role", "SessionLease", "Snapshot", "SnapshotKind"]
