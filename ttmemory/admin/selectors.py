"""Reads of the admin console: keyword search over encrypted facts, transcripts, chains, counts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.db.models import Count, Q, QuerySet

from ttmemory.longterm import blind
from ttmemory.models import AuditEntry, Fact, FactTerm, MemorySession, Message, Profile, Snapshot
from ttmemory.validation import clean_identifier

# The longest supersession chain walked in either direction (a guard, not a limit in practice).
MAX_CHAIN = 200


def fact_ids_matching(*, query: str, namespaces: Iterable[str]) -> QuerySet[Any, Any]:
    """Ids (``fact_id`` values) of facts of ``namespaces`` containing every keyword of ``query``.

    Runs on the blind index: the query's terms are hashed with each namespace's index key (and
    the first release's key, for facts ``ttmemory_reindex`` has not rebuilt yet) and matched
    against ``FactTerm`` rows, so fact text is never decrypted. Superseded and ended facts are
    found too. A query without an indexable term (only stop words) matches nothing. Use the
    result as a subquery: ``Fact.objects.filter(pk__in=fact_ids_matching(query=...))``.
    """
    namespaces = list(namespaces)
    hashes: set[int] = set()
    words = 0
    for namespace in namespaces:
        terms = blind.query_hashes(query, namespace=namespace)
        hashes.update(terms)
        words = len(set(terms.values()))
    postings = FactTerm.objects.filter(namespace__in=namespaces, term__in=sorted(hashes))
    if not words:
        return postings.none().values("fact_id")
    # A fact's postings carry one hash per word (its namespace's, or the first release's):
    # counting distinct hashes counts the words it contains.
    return (
        postings.values("fact_id")
        .annotate(matched=Count("term", distinct=True))
        .filter(matched=words)
        .values("fact_id")
    )


def fact_namespaces(*, limit: int) -> list[str]:
    """Up to ``limit`` distinct namespaces that have facts, in order (keyword search hashes
    the query once per namespace)."""
    return namespace_choices(queryset=Fact.objects.all(), limit=limit)


def fact_chain(*, fact: Fact) -> list[Fact]:
    """The supersession chain through ``fact``, oldest version first, ``fact`` included.

    Each fact's ``superseded_by`` points at the version that replaced it; a fact replaced by
    several (after a merge) shows its first predecessor's line only.
    """
    versions = Fact.objects.filter(namespace=fact.namespace).defer("embedding")

    def before(current: Fact) -> Fact | None:
        return versions.filter(superseded_by=current).order_by("valid_from", "pk").first()

    def after(current: Fact) -> Fact | None:
        if current.superseded_by_id is None:
            return None
        return versions.filter(pk=current.superseded_by_id).first()

    seen = {fact.pk}
    earlier = _walk(fact, before, seen)
    later = _walk(fact, after, seen)
    return [*reversed(earlier), fact, *later]


def _walk(fact: Fact, step: Callable[[Fact], Fact | None], seen: set[int]) -> list[Fact]:
    """The versions ``step`` leads to from ``fact``, one after another, at most ``MAX_CHAIN``,
    stopping at one already ``seen`` (a loop)."""
    found: list[Fact] = []
    current = fact
    while len(found) < MAX_CHAIN:
        following = step(current)
        if following is None or following.pk in seen:
            break
        seen.add(following.pk)
        found.append(following)
        current = following
    return found


def transcript_messages(
    *, session: MemorySession, limit: int | None = None
) -> tuple[list[Message], int]:
    """Every stored message of ``session`` (archived ones too), oldest first, decrypted.

    With ``limit``, only the newest ``limit`` rows; the second value is how many older rows
    were left out.
    """
    queryset = Message.objects.filter(session=session)
    total = queryset.count()
    rows = queryset.order_by("-seq")
    if limit is not None:
        rows = rows[:limit]
    messages = list(rows)
    messages.reverse()
    return messages, total - len(messages)


def namespace_overview(*, namespace: str) -> dict[str, int]:
    """Row counts of one namespace per kind of data (nothing is decrypted)."""
    namespace = clean_identifier(namespace, field="namespace")
    messages = Message.objects.filter(namespace=namespace).aggregate(
        total=Count("pk"), archived=Count("pk", filter=Q(archived_at__isnull=False))
    )
    return {
        "sessions": MemorySession.objects.filter(namespace=namespace).count(),
        "messages": messages["total"],
        "archived_messages": messages["archived"],
        "snapshots": Snapshot.objects.filter(namespace=namespace).count(),
        "facts": Fact.objects.filter(namespace=namespace).count(),
        "current_facts": Fact.objects.filter(namespace=namespace).current().count(),
        "profiles": Profile.objects.filter(namespace=namespace).count(),
        "audit_entries": AuditEntry.objects.filter(namespace=namespace).count(),
    }


def namespace_choices(*, queryset: QuerySet[Any], limit: int) -> list[str]:
    """Up to ``limit`` distinct namespaces of ``queryset``, in order (for list filters)."""
    values = queryset.order_by("namespace").values_list("namespace", flat=True).distinct()
    return list(values[:limit])
