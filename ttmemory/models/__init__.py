"""ttmemory models, one module per entity."""

from ttmemory.models.apikey import ApiKey
from ttmemory.models.audit import AuditAction, AuditEntry
from ttmemory.models.ciphertext import CiphertextUpgrade
from ttmemory.models.episode import MessageEntry, MessageTerm
from ttmemory.models.fact import Fact, FactTerm, FactUsage, Profile
from ttmemory.models.generation import FactGeneration
from ttmemory.models.graph import GraphCheckpoint, GraphCheckpointWrite, GraphStoreItem
from ttmemory.models.idempotency import IdempotencyRecord
from ttmemory.models.learnjob import LearnJob, LearnJobStatus
from ttmemory.models.lease import SessionLease
from ttmemory.models.ledger import LedgerEntry, LedgerStatus, RateBucket
from ttmemory.models.message import Message, Role
from ttmemory.models.retention import LegalHold, RetentionPolicy
from ttmemory.models.session import MemorySession
from ttmemory.models.snapshot import Snapshot, SnapshotKind

__all__ = [
    "ApiKey",
    "AuditAction",
    "AuditEntry",
    "CiphertextUpgrade",
    "Fact",
    "FactGeneration",
    "FactTerm",
    "FactUsage",
    "GraphCheckpoint",
    "GraphCheckpointWrite",
    "GraphStoreItem",
    "IdempotencyRecord",
    "LearnJob",
    "LearnJobStatus",
    "LedgerEntry",
    "LedgerStatus",
    "LegalHold",
    "MemorySession",
    "Message",
    "MessageEntry",
    "MessageTerm",
    "Profile",
    "RateBucket",
    "RetentionPolicy",
    "Role",
    "SessionLease",
    "Snapshot",
    "SnapshotKind",
]
