"""Selectors: every read ttmemory makes. Keyword-only, typed, no writes."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from ttmemory import conversation
from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import MemorySession, Message, Snapshot
from ttmemory.results import SnapshotDiff
from ttmemory.validation import clean_count, clean_identifier

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


def session_get(*, namespace: str, key: str) -> MemorySession | None:
    """The session ``(namespace, key)`` or None; never creates one."""
    namespace = clean_identifier(namespace, field="namespace")
    key = clean_identifier(key, field="key")
    return MemorySession.objects.filter(namespace=namespace, key=key).first()


def session_list(*, namespace: str) -> list[MemorySession]:
    """Sessions of one namespace, most recently active first."""
    namespace = clean_identifier(namespace, field="namespace")
    return list(MemorySession.objects.for_namespace(namespace).order_by("-updated_at", "-pk"))


def message_recent(*, session: MemorySession, limit: int | None = None) -> list[dict[str, Any]]:
    """The newest ``limit`` live messages (all when None), oldest first, decrypted."""
    queryset = Message.objects.live().filter(session=session).order_by("-seq")
    if limit is not None:
        queryset = queryset[: clean_count(limit, field="limit", minimum=1)]
    messages: list[dict[str, Any]] = list(queryset.values_list("data", flat=True))
    messages.reverse()
    return messages


def context_window(*, session: MemorySession, max_tokens: int) -> list[dict[str, Any]]:
    """The messages to send to a model within ``max_tokens`` (DESIGN rule 4), repaired (rule 5).

    The rolling summary, when there is one, comes first as a system message and counts against
    the budget; then system messages; then whole tool groups, newest first, in chronological
    order. Packing reads only clear metadata; only the chosen messages are decrypted.
    """
    max_tokens = clean_count(max_tokens, field="max_tokens")
    encoding = app_settings.TOKENIZER
    summary = MemorySession.objects.filter(pk=session.pk).values_list("summary", flat=True).first()
    window: list[dict[str, Any]] = []
    budget = max_tokens
    if summary:
        summary_message = {"role": "system", "content": SUMMARY_PREFIX + summary}
        window.append(summary_message)
        budget = max(
            0, budget - conversation.count_message_tokens(summary_message, encoding=encoding)
        )
    rows = list(
        Message.objects.live()
        .filter(session=session)
        .values_list("seq", "role", "token_count", "group_seq")
    )
    if not rows:
        return window
    items = [conversation.PackItem(seq, role, tokens, group) for seq, role, tokens, group in rows]
    chosen = conversation.pack(items, max_tokens=budget)
    chosen_set = set(chosen)
    oldest_other = min(
        (
            seq
            for seq, role, _, _ in rows
            if seq in chosen_set and role not in conversation.SYSTEM_ROLES
        ),
        default=None,
    )
    condition = Q(role__in=conversation.SYSTEM_ROLES)
    if oldest_other is not None:
        condition |= Q(seq__gte=oldest_other)
    data = dict(
        Message.objects.live().filter(session=session).filter(condition).values_list("seq", "data")
    )
    window.extend(data[seq] for seq in chosen if seq in data)
    return conversation.repair(window)


def snapshot_list(*, session: MemorySession) -> list[Snapshot]:
    """The session's snapshots, newest first (payloads are decrypted only when read)."""
    return list(Snapshot.objects.filter(session=session).newest_first().defer("payload"))


def snapshot_diff(*, session: MemorySession, snapshot: Snapshot) -> SnapshotDiff:
    """What ``snapshot_rollback`` to ``snapshot`` would remove and restore, without changing it."""
    if snapshot.session_id != session.pk:
        raise MemoryValidationError("snapshot", "belongs to another session")
    payload = Snapshot.objects.filter(pk=snapshot.pk).values_list("payload", flat=True).first()
    if payload is None:
        raise MemoryValidationError("snapshot", "no longer exists (removed by retention?)")
    live = {
        seq: (data, tokens)
        for seq, data, tokens in Message.objects.live()
        .filter(session=session)
        .values_list("seq", "data", "token_count")
    }
    snap = {m["seq"]: (m["data"], m["token_count"]) for m in payload["messages"]}
    remove = tuple((seq, live[seq][0]) for seq in sorted(set(live) - set(snap)))
    restore = tuple((seq, snap[seq][0]) for seq in sorted(set(snap) - set(live)))
    summary = MemorySession.objects.filter(pk=session.pk).values_list("summary", flat=True).get()
    return SnapshotDiff(
        remove=remove,
        restore=restore,
        tokens_removed=sum(live[seq][1] for seq, _ in remove),
        tokens_restored=sum(snap[seq][1] for seq, _ in restore),
        summary_changes=summary != payload["summary"],
    )
