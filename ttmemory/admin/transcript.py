"""A session's stored messages as a chat for the admin: tool calls with their results, markers.

Pure: rows in, display entries out; masking is applied here so templates never see content
they should not show.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ttmemory.admin.masking import mask, shown

KNOWN_KEYS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})
IMAGE_TYPES = frozenset({"image_url", "input_image", "image"})


@dataclass(frozen=True, slots=True)
class TranscriptRow:
    """One stored message: its seq, the decrypted message dict and what is kept in clear."""

    seq: int
    data: Mapping[str, Any]
    tokens: int | None = None
    archived: bool = False
    created_at: dt.datetime | None = None
    rewound: bool = False  # archived by a rewind, not by a trim


@dataclass(slots=True)
class ToolResultView:
    seq: int
    content: str
    tokens: int | None
    archived: bool


@dataclass(slots=True)
class ToolCallView:
    call_id: str
    name: str
    arguments: str
    results: list[ToolResultView] = field(default_factory=list)


@dataclass(slots=True)
class TranscriptEntry:
    """A chat bubble (``kind`` "message") or a marker ("gap", "summary", "hidden")."""

    kind: str
    seq: int = 0
    role: str = ""
    name: str = ""
    content: str = ""
    tokens: int | None = None
    archived: bool = False
    rewound: bool = False
    summarised: bool = False
    created_at: dt.datetime | None = None
    tool_calls: list[ToolCallView] = field(default_factory=list)
    tool_call_id: str = ""
    orphan: bool = False
    extra: str = ""
    first_seq: int = 0
    last_seq: int = 0
    count: int = 0
    # Set by the session page: where this bubble's "Rewind to here" and "Fork from here" go.
    rewind_url: str = ""
    fork_url: str = ""

    @property
    def group_end(self) -> int:
        """The last live seq of this bubble: its own, or its tool calls' last stored result."""
        results = [r.seq for call in self.tool_calls for r in call.results if not r.archived]
        return max([self.seq, *results])


def _parts(content: object) -> tuple[str, list[str]]:
    """The text of a message content and markers for its non-text parts ("[image]")."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if isinstance(content, list):
        texts: list[str] = []
        markers: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, Mapping) and part.get("type") in IMAGE_TYPES:
                markers.append("[image]")
            elif isinstance(part, Mapping):
                markers.append(f"[{part.get('type') or 'part'}]")
        return "\n".join(texts), markers
    return json.dumps(content, ensure_ascii=False), []


def content_display(content: object, *, revealed: bool) -> str:
    """What to show for a message content: the text, or its length when masked."""
    text, markers = _parts(content)
    shown_text = shown(text, revealed) if text else ""
    return " ".join(piece for piece in [shown_text, *markers] if piece)


def arguments_display(arguments: object, *, revealed: bool) -> str:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    if not revealed:
        return mask(text)
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return text


def _extra_display(data: Mapping[str, Any], *, revealed: bool) -> str:
    extra = {k: v for k, v in data.items() if k not in KNOWN_KEYS}
    if not extra:
        return ""
    if not revealed:
        return "other fields: " + ", ".join(sorted(extra))
    return json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str)


def _calls(data: Mapping[str, Any], *, revealed: bool) -> list[ToolCallView]:
    calls = data.get("tool_calls")
    views: list[ToolCallView] = []
    if data.get("role") != "assistant" or not isinstance(calls, list):
        return views
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
        assert isinstance(function, Mapping)
        views.append(
            ToolCallView(
                call_id=str(call.get("id") or ""),
                # A tool's name tells what was done (cancel_subscription): content, masked.
                name=shown(str(function.get("name") or call.get("type") or "tool"), revealed),
                arguments=arguments_display(function.get("arguments", ""), revealed=revealed),
            )
        )
    return views


def build_transcript(
    rows: Iterable[TranscriptRow],
    *,
    revealed: bool,
    summary: str | None = None,
    summary_upto_seq: int = 0,
    hidden_before: int = 0,
    show_gaps: bool = True,
    last_seq: int = 0,
) -> list[TranscriptEntry]:
    """Chat entries in seq order.

    An assistant message's tool calls carry their results (matched by call id, the latest call
    of an id winning, as ``conversation.repair`` does), so a tool result is shown inside the
    call it answers, even one stored after a later turn; a result whose call is not among the
    rows stands alone, marked as an orphan. With ``show_gaps``, missing seqs (deleted by a trim
    or removed by a rollback) become a "gap" marker, up to ``last_seq`` (the highest seq ever
    assigned, so removed newest messages show too); ``hidden_before`` older rows left out
    become a "hidden" marker. The summary, when given, is placed after the messages it covers.
    """
    entries: list[TranscriptEntry] = []
    by_call: dict[str, ToolCallView] = {}
    previous_seq: int | None = None
    summary_placed = not summary
    if hidden_before:
        entries.append(TranscriptEntry(kind="hidden", count=hidden_before))
    for row in rows:
        data = row.data
        if not summary_placed and row.seq > summary_upto_seq:
            entries.append(_summary_entry(summary or "", summary_upto_seq, revealed=revealed))
            summary_placed = True
        if show_gaps:
            expected = previous_seq + 1 if previous_seq is not None else 1
            if row.seq > expected and (previous_seq is not None or not hidden_before):
                entries.append(
                    TranscriptEntry(kind="gap", first_seq=expected, last_seq=row.seq - 1)
                )
        previous_seq = row.seq
        role = str(data.get("role") or "")
        call_id = data.get("tool_call_id")
        if role == "tool" and isinstance(call_id, str) and call_id in by_call:
            by_call[call_id].results.append(
                ToolResultView(
                    seq=row.seq,
                    content=content_display(data.get("content"), revealed=revealed),
                    tokens=row.tokens,
                    archived=row.archived,
                )
            )
            continue
        calls = _calls(data, revealed=revealed)
        for call in calls:
            by_call[call.call_id] = call
        name = data.get("name")
        entries.append(
            TranscriptEntry(
                kind="message",
                seq=row.seq,
                role=role,
                name=str(name) if isinstance(name, str) and (revealed or role != "user") else "",
                content=content_display(data.get("content"), revealed=revealed),
                tokens=row.tokens,
                archived=row.archived,
                rewound=row.rewound,
                summarised=row.archived and bool(summary) and row.seq <= summary_upto_seq,
                created_at=row.created_at,
                tool_calls=calls,
                tool_call_id=str(call_id) if isinstance(call_id, str) else "",
                orphan=role == "tool",
                extra=_extra_display(data, revealed=revealed),
            )
        )
    if not summary_placed:
        entries.append(_summary_entry(summary or "", summary_upto_seq, revealed=revealed))
    end = previous_seq if previous_seq is not None else 0
    if show_gaps and last_seq > end and (previous_seq is not None or not hidden_before):
        entries.append(TranscriptEntry(kind="gap", first_seq=end + 1, last_seq=last_seq))
    return entries


def _summary_entry(summary: str, upto_seq: int, *, revealed: bool) -> TranscriptEntry:
    return TranscriptEntry(kind="summary", content=shown(summary, revealed), last_seq=upto_seq)


def rows_from_messages(messages: Sequence[Any]) -> list[TranscriptRow]:
    """Rows of stored ``Message`` objects."""
    return [
        TranscriptRow(
            seq=m.seq,
            data=m.data,
            tokens=m.token_count,
            archived=m.archived_at is not None,
            created_at=m.created_at,
            rewound=m.rewound_at is not None,
        )
        for m in messages
    ]


def rows_from_pairs(pairs: Iterable[tuple[int, Mapping[str, Any]]]) -> list[TranscriptRow]:
    """Rows of ``(seq, message)`` pairs, as a ``SnapshotDiff`` lists them."""
    return [TranscriptRow(seq=seq, data=data) for seq, data in pairs]


def rows_from_payload(payload: Mapping[str, Any]) -> list[TranscriptRow]:
    """Rows of a snapshot payload's messages."""
    return [
        TranscriptRow(seq=m["seq"], data=m["data"], tokens=m.get("token_count"))
        for m in payload.get("messages", [])
    ]
