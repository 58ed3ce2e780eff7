"""ttmemory models, one module per entity."""

from ttmemory.models.fact import Fact, FactTerm, Profile
from ttmemory.models.lease import SessionLease
from ttmemory.models.ledger import LedgerEntry, LedgerStatus
from ttmemory.models.message import Message, Role
from ttmemory.models.session import MemorySession
from ttmemory.models.snapshot import Snapshot, SnapshotKind

__all__ = [
    "Fact",
    "FactTerm",
    "LedgerEntry",
    "LedgerStatus",
    "MemorySession",
    "Message",
    "Profile",
    "Role",
    "SessionLease",
    "Snapshot",
    "SnapshotKind",
]
