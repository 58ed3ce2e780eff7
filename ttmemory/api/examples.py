"""Example bodies shown in the OpenAPI document (one per operation at least)."""

from __future__ import annotations

from typing import Any

CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "What's the weather in Lisbon?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Lisbon"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "21°C, sunny"},
]
SESSION_EXAMPLE = {
    "id": 7,
    "key": "support-chat-42",
    "metadata": {"channel": "web"},
    "message_count": 3,
    "token_count": 61,
    "last_seq": 3,
    "parent": None,
    "forked_at_seq": None,
    "created_at": "2026-11-30T09:00:00Z",
    "updated_at": "2026-11-30T09:01:12Z",
}
MESSAGE_EXAMPLE = {
    "seq": 1,
    "role": "user",
    "tokens": 14,
    "archived": False,
    "created_at": "2026-11-30T09:00:00Z",
    "message": CHAT[0],
}
SNAPSHOT_EXAMPLE = {
    "id": 12,
    "label": "before refund answer",
    "kind": "manual",
    "message_count": 3,
    "token_count": 61,
    "upto_seq": 3,
    "created_at": "2026-11-30T09:01:13Z",
}
DIFF_EXAMPLE = {
    "remove": [{"seq": 4, "message": {"role": "assistant", "content": "…"}}],
    "restore": [],
    "tokens_removed": 40,
    "tokens_restored": 0,
    "summary_changes": False,
    "facts_superseded": [],
}
ROLLBACK_EXAMPLE = {
    "safety_snapshot": {**SNAPSHOT_EXAMPLE, "id": 13, "label": "", "kind": "safety"},
    "removed_seqs": [4, 5],
    "restored_seqs": [],
    "facts_superseded": [31],
    "session": {"id": 7, "key": "support-chat-42", "message_count": 3, "last_seq": 5},
    "undo": "https://example.com/api/memory/sessions/7/snapshots/13/rollback/",
}
FACT_EXAMPLE = {
    "id": 31,
    "kind": "preference",
    "text": "Prefers a window seat",
    "metadata": {"source": "chat"},
    "source": {"session": 7, "seqs": [1]},
    "valid_from": "2026-11-30T09:00:00Z",
    "valid_to": None,
    "superseded_by": None,
    "expires_at": None,
    "recall_count": 2,
    "created_at": "2026-11-30T09:00:00Z",
    "updated_at": "2026-11-30T09:00:00Z",
}
JOB_EXAMPLE = {
    "id": "0f8c3c1e-3a52-4a8e-9d53-7f4c8f1d2a10",
    "status": "done",
    "session": 7,
    "upto_seq": 12,
    "changes": {"ADD": 2, "SUPERSEDE": 1},
    "fact_ids": [31, 32, 33],
    "error": "",
    "created_at": "2026-11-30T09:02:00Z",
    "finished_at": "2026-11-30T09:02:01Z",
}
