"""Rebuilding the blind keyword index: every stale fact's postings and upsert key, in batches."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, QuerySet

from ttmemory.longterm import blind
from ttmemory.models import Fact, FactTerm, LegalHold, MessageEntry


@dataclass
class ReindexStats:
    """One run: facts pending at the start, rebuilt, skipped (changed meanwhile), duplicates."""

    index_version: str
    pending: int = 0
    reindexed: int = 0
    skipped: int = 0
    duplicates: int = 0
    batches: int = 0
    held: int = 0  # stale facts under legal hold, left as they are until it is lifted


def stale_facts() -> QuerySet[Fact]:
    """Facts whose postings were written with another index (older scheme, key, tokenizer or
    their namespace's language)."""
    return blind.stale(Fact.objects.all(), marker=blind.fact_index_version)


def stale_message_entries() -> int:
    """How many entries of the episodic index (``message_search``) are stale."""
    return blind.stale(MessageEntry.objects.all()).count()


def _not_held(facts: QuerySet[Fact]) -> QuerySet[Fact]:
    """``facts`` outside every legal hold: rebuilding rewrites ``text_hash``, which the hold's
    triggers refuse (docs/security.md); those wait for the hold to be lifted."""
    held = LegalHold.objects.filter(namespace=OuterRef("namespace"))
    return facts.exclude(
        Exists(held.filter(session__isnull=True))
        | Exists(held.filter(session_id=OuterRef("source_session_id")))
    )


def index_groups() -> list[tuple[str, int, bool]]:
    """``(index_version, facts, current)`` per index the facts' postings were written with; an
    index current in some namespaces and stale in others (their language changed) gives two."""

    def counts(rows: QuerySet[Fact]) -> dict[str, int]:
        grouped = rows.values_list("index_version").annotate(count=Count("pk"))
        return dict(grouped.order_by().values_list("index_version", "count"))

    every, stale = counts(Fact.objects.all()), counts(stale_facts())
    groups = []
    for version in sorted(every):
        if every[version] > stale.get(version, 0):
            groups.append((version, every[version] - stale.get(version, 0), True))
        if stale.get(version):
            groups.append((version, stale[version], False))
    return groups


def facts_reindex(
    *, batch_size: int, on_batch: Callable[[int], None] | None = None
) -> ReindexStats:
    """Rebuild the postings, length and upsert key of every stale fact (see ``stale_facts``).

    Walks the primary key in batches of ``batch_size``, one transaction per batch: the batch's
    still-stale rows are locked, their text decrypted and re-tokenised, their ``FactTerm`` rows
    replaced and their ``text_hash`` and ``index_version`` set, so a fact is never half
    rebuilt. A fact rewritten meanwhile (``fact_remember`` rebuilds it itself) is counted in
    ``skipped``. Stopping at any point is safe and running again resumes. Recall finds every
    fact throughout: queries match the first release's postings until their fact is rebuilt.

    Two facts of a namespace whose texts now have the same upsert key (possible only after a
    key or tokenizer change) are both kept and stay findable; the later one gets a key of its
    own and is counted in ``duplicates``.
    """
    version = blind.fact_index_version()
    stats = ReindexStats(index_version=version, pending=stale_facts().count())
    last_pk = 0
    while True:
        pks = list(
            _not_held(stale_facts())
            .filter(pk__gt=last_pk)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch_size]
        )
        if not pks:
            break
        with transaction.atomic():
            facts = list(
                _not_held(stale_facts()).select_for_update().filter(pk__in=pks).order_by("pk")
            )
            _rebuild(facts, stats)
        stats.reindexed += len(facts)
        stats.skipped += len(pks) - len(facts)
        stats.batches += 1
        last_pk = pks[-1]
        if on_batch is not None:
            on_batch(len(pks))
    stats.held = stats.pending - stats.reindexed - stats.skipped
    return stats


def _rebuild(facts: list[Fact], stats: ReindexStats) -> None:
    hashes = {fact.pk: blind.text_hash(fact.text, namespace=fact.namespace) for fact in facts}
    # Who holds each new key now (a fact of this batch may still hold one under its old key).
    taken = {
        (namespace, text_hash): pk
        for pk, namespace, text_hash in Fact.objects.filter(
            text_hash__in=set(hashes.values())
        ).values_list("pk", "namespace", "text_hash")
    }
    FactTerm.objects.filter(fact_id__in=list(hashes)).delete()
    postings: list[FactTerm] = []
    for fact in facts:
        text_hash = hashes[fact.pk]
        if taken.get((fact.namespace, text_hash), fact.pk) != fact.pk:
            stats.duplicates += 1
            text_hash = _duplicate_hash(fact)
        taken[(fact.namespace, text_hash)] = fact.pk
        slot = (fact.metadata or {}).get("slot")
        counts, length = blind.fact_postings(
            fact.text, slot=slot if isinstance(slot, str) else "", namespace=fact.namespace
        )
        fact.text_hash = text_hash
        fact.term_count = length
        postings.extend(FactTerm.of(fact, counts))
        fact.index_version = blind.fact_index_version(fact.namespace)
        # The text is saved again too (same plaintext, fresh nonce), so a value whose
        # associated data names the row's upsert key stays readable.
        fact.save(update_fields=["text", "text_hash", "term_count", "index_version"])
    FactTerm.objects.bulk_create(postings)


def _duplicate_hash(fact: Fact) -> str:
    """A unique upsert key for the second of two facts with one text (kept, still findable)."""
    key = blind.namespace_key(fact.namespace)
    return hmac.new(key, b"d:" + str(fact.pk).encode(), hashlib.sha256).hexdigest()
