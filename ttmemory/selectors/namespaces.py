"""Namespace reads: the full export and the cost ledger's totals."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from ttmemory.models import (
    Fact,
    GraphStoreItem,
    LedgerEntry,
    MemorySession,
    Message,
    Profile,
    Snapshot,
)
from ttmemory.validation import clean_count, clean_identifier


def namespace_export(*, namespace: str) -> dict[str, Any]:
    """Everything ``namespace`` owns, decrypted, as JSON-ready data (sessions with all their
    messages, archived included; snapshots; facts with their chains; profiles)."""
    namespace = clean_identifier(namespace, field="namespace")
    sessions = []
    sessions_of = MemorySession.objects.filter(namespace=namespace).select_related("parent")
    for session in sessions_of.order_by("pk"):
        messages = Message.objects.filter(session=session).order_by("seq")
        sessions.append(
            {
                "key": session.key,
                "metadata": session.metadata,
                "state": session.state,
                "summary": session.summary,
                "created_at": session.created_at.isoformat(),
                # A branch (session_fork, session_edit): the parent's key and the fork point.
                "forked_from": {"key": session.parent.key, "seq": session.forked_at_seq}
                if session.parent is not None
                else None,
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
    store_items = [
        {
            "path": item.path,
            "key": item.key,
            "value": item.value,
            "fact": item.fact_id,
            "expires_at": item.expires_at.isoformat() if item.expires_at else None,
            "updated_at": item.updated_at.isoformat(),
        }
        for item in GraphStoreItem.objects.filter(namespace=namespace).order_by("pk")
    ]
    return {
        "namespace": namespace,
        "sessions": sessions,
        "facts": facts,
        "profiles": profiles,
        "store_items": store_items,
    }


def ledger_totals(*, namespace: str | None = None, days: int = 30) -> list[dict[str, Any]]:
    """Token and call totals per namespace, UTC day, purpose and model, newest day first.

    ``namespace`` limits it to one namespace; ``days`` looks back that many days.
    """
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
