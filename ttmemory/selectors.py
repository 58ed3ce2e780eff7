"""Selectors: every read ttmemory makes. Keyword-only, typed, no writes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from ttmemory import blind, conversation
from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import Fact, MemorySession, Message, Profile, Snapshot
from ttmemory.results import RecallResult, SnapshotDiff
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
    """Up to ``limit`` messages older than ``before_seq`` (newest when None), oldest first.

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
    from ttmemory.services.facts import facts_supersede_sources

    doomed = facts_supersede_sources(
        session=session, removed_seqs=[seq for seq, _ in remove], dry_run=True
    )
    return SnapshotDiff(
        remove=remove,
        restore=restore,
        tokens_removed=sum(live[seq][1] for seq, _ in remove),
        tokens_restored=sum(snap[seq][1] for seq, _ in restore),
        summary_changes=summary != payload["summary"],
        facts_superseded=tuple(doomed),
    )


def fact_recall(
    *,
    namespace: str,
    query: str,
    k: int = 5,
    kinds: Iterable[str] | None = None,
    metadata: dict[str, Any] | None = None,
) -> RecallResult:
    """The ``k`` current facts of ``namespace`` best matching ``query``, best first.

    Hybrid (vector + BM25 keyword, blended) when the embedder answers; keyword-only, saying so
    in ``mode`` and ``fallback_reason``, when it fails or its breaker is open. ``kinds`` and
    ``metadata`` (key equality) filter; superseded, ended and expired facts never come back.
    Each hit's ``recall_count`` and ``last_recalled_at`` are updated.
    """
    from ttmemory import recall
    from ttmemory.backends.embedders import get_embedder
    from ttmemory.embedding import embed_texts
    from ttmemory.services.facts import clean_kind, clean_metadata, facts_touch_recalled

    namespace = clean_identifier(namespace, field="namespace")
    if not isinstance(query, str) or not query.strip():
        raise MemoryValidationError("query", "must be a non-empty string")
    k = clean_count(k, field="k", minimum=1)
    kinds = [clean_kind(kind, field="kinds") for kind in kinds] if kinds else None
    metadata = clean_metadata(metadata) if metadata else None
    facts = recall.filtered_facts(namespace, kinds=kinds, metadata=metadata)
    pool = max(50, k * 10)
    stats = recall.namespace_stats(namespace)
    terms = blind.query_terms(query)
    keyword = recall.keyword_scores(
        namespace, query, pool, kinds=kinds, metadata=metadata, stats=stats, terms=terms
    )
    vectors, reason = embed_texts([query])
    vector: dict[int, float] = {}
    if vectors is not None:
        approximate = stats[0] > app_settings.RECALL_EXACT_LIMIT
        vector = recall.vector_scores(
            facts, vectors[0], get_embedder().model, pool, approximate=approximate
        )
    if vectors is None:
        mode, scores = "keyword", keyword
    elif not keyword and not terms:
        mode, scores = "vector", vector
    else:
        mode = "hybrid"
        weight = recall.vector_weight()
        scores = recall.blend(keyword, vector, vector_weight=weight)
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
    by_id = Fact.objects.in_bulk([fact_id for fact_id, _ in best])
    hits = [(by_id[fact_id], score) for fact_id, score in best if fact_id in by_id]
    facts_touch_recalled(fact_ids=[fact.pk for fact, _ in hits])
    return RecallResult(hits=hits, mode=mode, fallback_reason=reason)


def fact_list(
    *,
    namespace: str,
    kinds: Iterable[str] | None = None,
    include_superseded: bool = False,
) -> list[Fact]:
    """Facts of ``namespace``, newest first; current ones only unless ``include_superseded``."""
    namespace = clean_identifier(namespace, field="namespace")
    queryset = Fact.objects.filter(namespace=namespace)
    if not include_superseded:
        queryset = queryset.current()
    if kinds:
        queryset = queryset.filter(kind__in=list(kinds))
    return list(queryset.order_by("-created_at", "-pk").defer("embedding"))


def profile_get(*, namespace: str, kind: str | None = None) -> dict[str, Any]:
    """One profile's data (``kind``), or ``{kind: data}`` of all unexpired profiles."""
    from django.utils import timezone

    namespace = clean_identifier(namespace, field="namespace")
    queryset = Profile.objects.filter(namespace=namespace).exclude(expires_at__lte=timezone.now())
    if kind is not None:
        profile = queryset.filter(kind=kind).first()
        return dict(profile.data) if profile else {}
    return {p.kind: dict(p.data) for p in queryset.order_by("kind")}


def namespace_export(*, namespace: str) -> dict[str, Any]:
    """Everything ``namespace`` owns, decrypted, as JSON-ready data (sessions with all their
    messages, archived included; snapshots; facts with their chains; profiles)."""
    namespace = clean_identifier(namespace, field="namespace")
    sessions = []
    for session in MemorySession.objects.filter(namespace=namespace).order_by("pk"):
        messages = Message.objects.filter(session=session).order_by("seq")
        sessions.append(
            {
                "key": session.key,
                "metadata": session.metadata,
                "state": session.state,
                "summary": session.summary,
                "created_at": session.created_at.isoformat(),
                "messages": [
                    {
                        "seq": m.seq,
                        "message": m.data,
                        "archived": m.archived_at is not None,
                        "created_at": m.created_at.isoformat(),
                    }
                    for m in messages
                ],
                "snapshots": [
                    {
                        "id": s.pk,
                        "label": s.label,
                        "kind": s.kind,
                        "created_at": s.created_at.isoformat(),
                        "payload": s.payload,
                    }
                    for s in Snapshot.objects.filter(session=session).order_by("pk")
                ],
            }
        )
    facts = [
        {
            "id": f.pk,
            "kind": f.kind,
            "text": f.text,
            "metadata": f.metadata,
            "source": {"session": f.source_session_id, "seqs": f.source_seqs},
            "valid_from": f.valid_from.isoformat(),
            "valid_to": f.valid_to.isoformat() if f.valid_to else None,
            "superseded_by": f.superseded_by_id,
            "expires_at": f.expires_at.isoformat() if f.expires_at else None,
        }
        for f in Fact.objects.filter(namespace=namespace).order_by("pk").defer("embedding")
    ]
    profiles = {p.kind: p.data for p in Profile.objects.filter(namespace=namespace)}
    return {
        "namespace": namespace,
        "sessions": sessions,
        "facts": facts,
        "profiles": profiles,
    }


def ledger_totals(*, namespace: str | None = None, days: int = 30) -> list[dict[str, Any]]:
    """Token and call totals per namespace, UTC day, purpose and model, newest day first.

    ``namespace`` limits it to one namespace; ``days`` looks back that many days.
    """
    import datetime as dt

    from django.db.models import Count, Sum
    from django.db.models.functions import TruncDate
    from django.utils import timezone

    from ttmemory.models import LedgerEntry

    days = clean_count(days, field="days", minimum=1)
    since = timezone.now() - dt.timedelta(days=days)
    queryset = LedgerEntry.objects.filter(created_at__gte=since)
    if namespace is not None:
        queryset = queryset.filter(namespace=clean_identifier(namespace, field="namespace"))
    rows = (
        queryset.annotate(day=TruncDate("created_at", tzinfo=dt.UTC))
        .values("namespace", "day", "purpose", "model")
        .annotate(
            calls=Count("pk"),
            prompt_tokens=Sum("prompt_tokens"),
            completion_tokens=Sum("completion_tokens"),
            errors=Count("pk", filter=Q(status="error")),
            skipped=Count("pk", filter=Q(status="skipped")),
        )
        .order_by("-day", "namespace", "purpose", "model")
    )
    return [
        {
            **row,
            "day": row["day"].isoformat(),
            "total_tokens": row["prompt_tokens"] + row["completion_tokens"],
        }
        for row in rows
    ]
