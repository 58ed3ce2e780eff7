"""Contains all the data models used in inputs/outputs"""

from .blank_enum import BlankEnum
from .clear import Clear
from .context import Context
from .context_message import ContextMessage
from .context_messages_item import ContextMessagesItem
from .edit_request import EditRequest
from .edit_request_message import EditRequestMessage
from .erase_request import EraseRequest
from .fact import Fact
from .fact_create_request import FactCreateRequest
from .fact_create_request_metadata import FactCreateRequestMetadata
from .fact_source import FactSource
from .fact_supersede_request import FactSupersedeRequest
from .fact_supersede_request_metadata import FactSupersedeRequestMetadata
from .fork_request import ForkRequest
from .kind_enum import KindEnum
from .learn_job import LearnJob
from .learn_request import LearnRequest
from .ledger_row import LedgerRow
from .legal_hold import LegalHold
from .legal_hold_request import LegalHoldRequest
from .message import Message
from .message_append_request import MessageAppendRequest
from .message_append_request_message import MessageAppendRequestMessage
from .message_append_request_messages_item import MessageAppendRequestMessagesItem
from .message_hit import MessageHit
from .message_page import MessagePage
from .message_search import MessageSearch
from .message_search_request import MessageSearchRequest
from .messages_added import MessagesAdded
from .mode_enum import ModeEnum
from .namespace import Namespace
from .namespace_export_response_200 import NamespaceExportResponse200
from .paginated_fact_list import PaginatedFactList
from .paginated_session_list import PaginatedSessionList
from .patched_profile_update_request import PatchedProfileUpdateRequest
from .patched_profile_update_request_data import PatchedProfileUpdateRequestData
from .patched_retention_policy_request import PatchedRetentionPolicyRequest
from .patched_session_update_request import PatchedSessionUpdateRequest
from .patched_session_update_request_state import PatchedSessionUpdateRequestState
from .problem import Problem
from .problem_errors import ProblemErrors
from .profiles_get_response_200 import ProfilesGetResponse200
from .profiles_list_response_200 import ProfilesListResponse200
from .profiles_update_response_200 import ProfilesUpdateResponse200
from .prompt import Prompt
from .prompt_empty import PromptEmpty
from .prompt_messages_item import PromptMessagesItem
from .prompt_request import PromptRequest
from .prompt_tokens import PromptTokens
from .recall import Recall
from .recall_hit import RecallHit
from .recall_request import RecallRequest
from .recall_request_metadata import RecallRequestMetadata
from .receipt import Receipt
from .receipt_counts import ReceiptCounts
from .receipt_kept import ReceiptKept
from .retention import Retention
from .retention_effective import RetentionEffective
from .retention_policy import RetentionPolicy
from .rewind_request import RewindRequest
from .role_enum import RoleEnum
from .rollback import Rollback
from .rollback_request import RollbackRequest
from .seq_message import SeqMessage
from .seq_message_message import SeqMessageMessage
from .session import Session
from .session_detail import SessionDetail
from .session_detail_state import SessionDetailState
from .session_expiry_enum import SessionExpiryEnum
from .session_open_request import SessionOpenRequest
from .session_open_request_metadata import SessionOpenRequestMetadata
from .snapshot import Snapshot
from .snapshot_create_request import SnapshotCreateRequest
from .snapshot_diff import SnapshotDiff
from .source_request import SourceRequest
from .status_enum import StatusEnum
from .trim import Trim
from .trim_request import TrimRequest

__all__ = (
    "BlankEnum",
    "Clear",
    "Context",
    "ContextMessage",
    "ContextMessagesItem",
    "EditRequest",
    "EditRequestMessage",
    "EraseRequest",
    "Fact",
    "FactCreateRequest",
    "FactCreateRequestMetadata",
    "FactSource",
    "FactSupersedeRequest",
    "FactSupersedeRequestMetadata",
    "ForkRequest",
    "KindEnum",
    "LearnJob",
    "LearnRequest",
    "LedgerRow",
    "LegalHold",
    "LegalHoldRequest",
    "Message",
    "MessageAppendRequest",
    "MessageAppendRequestMessage",
    "MessageAppendRequestMessagesItem",
    "MessageHit",
    "MessagePage",
    "MessagesAdded",
    "MessageSearch",
    "MessageSearchRequest",
    "ModeEnum",
    "Namespace",
    "NamespaceExportResponse200",
    "PaginatedFactList",
    "PaginatedSessionList",
    "PatchedProfileUpdateRequest",
    "PatchedProfileUpdateRequestData",
    "PatchedRetentionPolicyRequest",
    "PatchedSessionUpdateRequest",
    "PatchedSessionUpdateRequestState",
    "Problem",
    "ProblemErrors",
    "ProfilesGetResponse200",
    "ProfilesListResponse200",
    "ProfilesUpdateResponse200",
    "Prompt",
    "PromptEmpty",
    "PromptMessagesItem",
    "PromptRequest",
    "PromptTokens",
    "Recall",
    "RecallHit",
    "RecallRequest",
    "RecallRequestMetadata",
    "Receipt",
    "ReceiptCounts",
    "ReceiptKept",
    "Retention",
    "RetentionEffective",
    "RetentionPolicy",
    "RewindRequest",
    "RoleEnum",
    "Rollback",
    "RollbackRequest",
    "SeqMessage",
    "SeqMessageMessage",
    "Session",
    "SessionDetail",
    "SessionDetailState",
    "SessionExpiryEnum",
    "SessionOpenRequest",
    "SessionOpenRequestMetadata",
    "Snapshot",
    "SnapshotCreateRequest",
    "SnapshotDiff",
    "SourceRequest",
    "StatusEnum",
    "Trim",
    "TrimRequest",
)
