"""Session reads: sessions, message pages, the newest messages, the token-budgeted window."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from ttmemory import conversation
from ttmemory.conf import app_settings
from ttmemory.models import MemorySession, Message
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


def message_page(
    *,
    session: MemorySession,
    limit: int = 50,
    before_seq: int | None = None,
    include_archived: bool = False,
) -> list[dict[str, Any]]:
    """The ``limit`` messages just before ``before_seq`` (the newest when None), oldest first.

    For paging back through a history: pass the first seq of a page as ``before_seq`` to get
    the page before it. Each item is ``{"seq", "role", "tokens", "archived", "created_at",
    "message"}``; archived (trimmed) messages only with ``include_archived``.
    """
    limit = clean_count(limit, field="limit", minimum=1)
    queryset = Message.objects.filter(session=session)
    if not include_archived:
        queryset = queryset.live()
    if before_seq is not None:
        queryset = queryset.filter(seq__lt=clean_count(before_seq, field="before", minimum=1))
    rows = list(
        queryset.order_by("-seq").values_list(
            "seq", "role", "token_count", "archived_at", "created_at", "data"
        )[:limit]
    )
    rows.reverse()
    return [
        {
            "seq": seq,
            "role": role,
            "tokens": tokens,
            "archived": archived_at is not None,
            "created_at": created_at,
            "message": data,
        }
        for seq, role, tokens, archived_at, created_at, data in rows
    ]


# Rows of packing metadata read per query, newest first, until the budget is exceeded.
WINDOW_CHUNK = 256
_PACK_FIELDS = ("seq", "role", "token_count", "group_seq")


def _window_rows(session: MemorySession, budget: int) -> list[tuple[int, str, int, int]]:
    """The metadata ``pack`` needs to choose a window: never less, often far less than all.

    System messages, then non-system rows newest first until their tokens exceed what the
    budget leaves; then the older members of every group seen (a tool call made long before its
    late result). Groups entirely older than that cannot be packed (packing stops at the first
    group that does not fit and never skips one), so the choice equals packing every row.
    """
    live = Message.objects.live().filter(session=session)
    system = list(live.filter(role__in=conversation.SYSTEM_ROLES).values_list(*_PACK_FIELDS))
    remaining = budget - sum(row[2] for row in system)
    others: list[tuple[int, str, int, int]] = []
    used = 0
    complete = False
    newest_first = live.exclude(role__in=conversation.SYSTEM_ROLES).order_by("-seq")
    while True:
        page = newest_first.filter(seq__lt=others[-1][0]) if others else newest_first
        chunk = list(page.values_list(*_PACK_FIELDS)[:WINDOW_CHUNK])
        others.extend(chunk)
        used += sum(row[2] for row in chunk)
        if len(chunk) < WINDOW_CHUNK:
            complete = True
            break
        if used > remaining:
            break
    if others and not complete:
        oldest = others[-1][0]
        heads = {row[3] for row in others if row[3] < oldest}
        if heads:
            others.extend(
                newest_first.filter(seq__lt=oldest)
                .filter(Q(group_seq__in=heads) | Q(seq__in=heads))
                .values_list(*_PACK_FIELDS)
            )
    return system + others


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
    rows = _window_rows(session, budget)
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
