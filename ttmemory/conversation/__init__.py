"""Pure, storage-free rules on chat message lists: validation, tokens, groups, packing, repair."""

from ttmemory.conversation.groups import assign_groups, tool_call_ids
from ttmemory.conversation.packing import Packing, PackItem, pack, pack_detailed
from ttmemory.conversation.repair import INTERRUPTED, repair
from ttmemory.conversation.tokens import (
    HEURISTIC,
    count_message_tokens,
    count_messages_tokens,
    count_text_tokens,
    supported_encodings,
)
from ttmemory.conversation.validation import ROLES, SYSTEM_ROLES, validate_message

__all__ = [
    "HEURISTIC",
    "INTERRUPTED",
    "ROLES",
    "SYSTEM_ROLES",
    "PackItem",
    "Packing",
    "assign_groups",
    "count_message_tokens",
    "count_messages_tokens",
    "count_text_tokens",
    "pack",
    "pack_detailed",
    "repair",
    "supported_encodings",
    "tool_call_ids",
    "validate_message",
]
