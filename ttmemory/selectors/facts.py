"""Long-term memory reads: hybrid recall, fact lists, profiles. Recall counts go to a job."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings
from ttmemory.exceptions import MemoryValidationError
from ttmemory.jobs import recall_counts
from ttmemory.jobs.ledger_calls import record_later
from ttmemory.longterm import asking, blind, candidates, fusion, recall
from ttmemory.longterm.embedding import embed_for
from ttmemory.models import Fact, MemorySession, Profile
from ttmemory.models.compiled import CompiledQuery
from ttmemory.models.fact import fetch_usage_together
from ttmemory.results import RecallResult
from ttmemory.text import namespace_language
from ttmemory.validation import clean_count, clean_identifier, clean_kind, clean_metadata


def facts_orphaned_by(*, session: MemorySession, removed_seqs: Sequence[int]) -> list[Fact]:
    """Current facts whose only source messages are ``removed_seqs`` of ``session``.

    What a rollback that removes those messages ends (``facts_supersede_sources``); previews
    show it without changing anything.
    """
    removed = set(removed_seqs)
    if not removed:
        return []
    candidates = list(Fact.objects.current().filter(source_session=session))
    return [f for f in candidates if f.source_seqs and set(f.source_seqs) <= removed]


def fact_recall(
    *,
    namespace: str,
    query: str,
    k: int = 5,
    kinds: Iterable[str] | None = None,
    metadata: dict[str, Any] | None = None,
    min_score: float | None = None,
    context: bool = True,
) -> RecallResult:
    """The ``k`` current facts of ``namespace`` best matching ``query``, best first.

    Hits scoring at or below ``min_score`` (default ``RECALL_MIN_SCORE``, 0: hits that matched
    nothing) are left out, so a query about nothing stored returns no hits.

    With ``context`` (the default), a fact also scores part of the scores of the facts
    remembered just before and after it (``RECALL_CONTEXT_WINDOW`` / ``RECALL_CONTEXT_WEIGHT``,
    ``ttmemory.longterm.fusion``): a turn that answers "which one?" is found by the question
    it answers. Pass ``context=False`` where the order of remembering means nothing
    (documents stored by key). With ``RECALL_FEEDBACK_WEIGHT`` (by default 0.75 for sentence
    embedders, off for HashEmbedder and WordLlama; hybrid mode only), the words of the two
    best facts that the query did not use are asked again, so the second turn of a two-turn
    answer is found by what the first names; the best ``fusion.FEEDBACK_PROTECTED`` (5) keep
    their places, so ``k`` <= 5 skips it. Hits below
    ``RECALL_MIN_RELATIVE`` x the best are left out; no hits at all when
    ``RECALL_MIN_SIMILARITY`` is set and no fact's cosine similarity to the query reaches it
    (not applied in keyword-only mode). The hits end with the last fact that matches the query
    by itself (a keyword in common or a cosine similarity of at least
    ``RECALL_EVIDENCE_SIMILARITY``, reported as ``evidence_similarity``): neighbour context
    never pads the list, which holds fewer than ``k`` hits instead (``unpadded`` counts the
    facts left out that way).

    Hybrid (vector + BM25 keyword, blended) when the embedder answers; keyword-only, saying so
    in ``mode`` and ``fallback_reason``, when it fails or its breaker is open. ``kinds`` and
    ``metadata`` (key equality) filter; superseded, ended and expired facts never come back.
    Each hit's ``recall_count`` and ``last_recalled_at`` are counted and written in the
    background (``ttmemory.jobs.recall_counts``): this function itself writes nothing.
    """
    namespace = clean_identifier(namespace, field="namespace")
    if not isinstance(query, str) or not query.strip():
        raise MemoryValidationError("query", "must be a non-empty string")
    k = clean_count(k, field="k", minimum=1)
    kinds = [clean_kind(kind, field="kinds") for kind in kinds] if kinds else None
    metadata = clean_metadata(metadata) if metadata else None
    pool = max(50, k * 10)
    # The keyword terms also hold the words of the slots the question names in other words and
    # the synonyms of its words (longterm/asking.py): only facts of those slots gain.
    asked = asking.expanded(query, language=namespace_language(namespace))
    terms = blind.query_hashes(asked, namespace=namespace)
    embedded = embed_for([query], namespace=namespace, purpose="embed_query")
    record_later(embedded.call)  # written by a background job: a read writes nothing
    vectors, reason = embedded.vectors, embedded.reason
    model = get_embedder().model if vectors is not None else ""
    window, neighbour_weight = fusion.context_settings()
    with_context = context and window > 0 and neighbour_weight > 0
    runs: dict[int, list[int]] | None = None
    around = None  # the runs of any seeds from memory (the candidates' matrix), if it answered
    if metadata is None:
        # Both candidate lists, and the neighbour runs of the best, in one statement on
        # PostgreSQL (longterm/candidates.py).
        found = candidates.candidates(
            namespace,
            terms=terms,
            vector=vectors[0] if vectors is not None else None,
            model=model,
            limit=pool,
            kinds=kinds,
            context=candidates.Context(
                seeds=fusion.seed_count(k) + fusion.SPARE_SEEDS,
                reach=2 * window,
                vector_weight=recall.vector_weight() if vectors is not None else 0.0,
            )
            if with_context
            else None,
        )
        keyword, vector, runs, around = found.keyword, found.vector, found.runs, found.around
    else:  # JSON lookups: the ORM's per-database translation
        keyword, vector = _scores_with_metadata(
            namespace, terms, vectors[0] if vectors is not None else None, model, pool,
            kinds=kinds, metadata=metadata,
        )  # fmt: skip
    if vectors is None:
        mode = "keyword"
    elif not keyword and not terms:
        mode, keyword = "vector", {}
    else:
        mode = "hybrid"
    if mode != "keyword" and not fusion.relevant(vector, floor=app_settings.RECALL_MIN_SIMILARITY):
        # Nothing stored is close enough to the question: no memory (RECALL_MIN_SIMILARITY).
        return RecallResult(hits=[], mode=mode, fallback_reason=reason)
    weight = recall.vector_weight() if mode == "hybrid" else 0.0
    scores = blended = fusion.fuse(keyword, vector, vector_weight=weight)
    if with_context and scores:
        # Neighbour context (longterm/fusion.py): eligible facts remembered around the best.
        wanted = fusion.seeds(scores, k=k)
        fetched = runs or {}
        missing = [seed for seed in wanted if seed not in fetched]
        if missing and around is not None:
            fetched = {**fetched, **around(missing)}
        elif missing:  # not among the statement's seeds (or no statement did it): fetch them
            fetched = {
                **fetched,
                **fusion.fact_runs(
                    namespace, missing, reach=2 * window, kinds=kinds, metadata=metadata
                ),
            }
        runs = {seed: fetched[seed] for seed in wanted if seed in fetched}
        scores = fusion.expand(scores, runs, window=window, weight=neighbour_weight)
    feedback_weight = fusion.feedback_weight() if mode == "hybrid" else 0.0
    if feedback_weight > 0 and blended and k > fusion.FEEDBACK_PROTECTED:
        # Feedback (longterm/fusion.py): the best facts' other words, asked again; the related
        # facts fill the ranks after the best FEEDBACK_PROTECTED (the same ranks for k <= that).
        related = fusion.fact_related(
            namespace, fusion.feedback_seeds(blended), exclude=terms, among=blended
        )
        before = scores
        scores = fusion.feedback(scores, blended, related, weight=feedback_weight)
        scores = fusion.protect(scores, before, top=fusion.FEEDBACK_PROTECTED)
    floor = app_settings.RECALL_MIN_SCORE if min_score is None else _min_score(min_score)
    ranked = fusion.cut(scores, floor=floor, relative=app_settings.RECALL_MIN_RELATIVE)
    similarity = fusion.evidence_similarity()
    best = fusion.unpadded(
        ranked, keyword, vector, runs if with_context else None, window=window,
        similarity=similarity, limit=k,
    )  # fmt: skip
    padding = len({key for key, _ in ranked[:k]} - {key for key, _ in best})
    by_id = _hits_by_id([fact_id for fact_id, _ in best])
    hits = [(by_id[fact_id], score) for fact_id, score in best if fact_id in by_id]
    fetch_usage_together([fact for fact, _ in hits])
    recall_counts.count_recalled(fact.pk for fact, _ in hits)
    return RecallResult(
        hits=hits,
        mode=mode,
        fallback_reason=reason,
        evidence_similarity=similarity,
        unpadded=padding,
    )


def _hits_by_id(ids: list[int]) -> dict[int, Fact]:
    """The hits by id, without their vectors (their text decrypted on first use).

    Compiled once per number of hits and connection (``CompiledQuery``): the same rows and
    fields as ``defer("embedding")``, without compiling a query or resolving a raw query's
    columns and converters per recall (a ``RawQuerySet`` spent more Python on that than the
    database took to answer).
    """
    if not ids:
        return {}
    values = {f"id{i}": pk for i, pk in enumerate(ids)}
    return {fact.pk: fact for fact in _HITS.objects(len(ids), **values)}


def _hits(_: Hashable, **ids: int) -> QuerySet[Fact]:
    return Fact.objects.defer("embedding").filter(pk__in=list(ids.values()))


_HITS = CompiledQuery(Fact, _hits)


def _scores_with_metadata(
    namespace: str,
    terms: dict[int, int],
    vector: list[float] | None,
    model: str,
    pool: int,
    *,
    kinds: list[str] | None,
    metadata: dict[str, Any],
) -> tuple[dict[int, float], dict[int, float]]:
    """Both candidate lists through the ORM (a metadata filter is Django's to translate)."""
    stats = recall.namespace_stats(namespace)
    keyword = recall.keyword_scores(
        namespace, "", pool, kinds=kinds, metadata=metadata, stats=stats, terms=terms
    )
    if vector is None:
        return keyword, {}
    facts = recall.filtered_facts(namespace, kinds=kinds, metadata=metadata)
    approximate = stats[0] > app_settings.RECALL_EXACT_LIMIT
    return keyword, recall.vector_scores(facts, vector, model, pool, approximate=approximate)


def fact_list(
    *,
    namespace: str,
    kinds: Iterable[str] | None = None,
    include_superseded: bool = False,
    limit: int | None = None,
) -> list[Fact]:
    """Facts of ``namespace``, newest first (at most ``limit``); current ones only unless
    ``include_superseded``."""
    namespace = clean_identifier(namespace, field="namespace")
    queryset = Fact.objects.filter(namespace=namespace)
    if not include_superseded:
        queryset = queryset.current()
    if kinds:
        queryset = queryset.filter(kind__in=list(kinds))
    queryset = queryset.order_by("-created_at", "-pk").defer("embedding")
    if limit is not None:
        queryset = queryset[: clean_count(limit, field="limit", minimum=1)]
    return list(queryset)


def profile_get(*, namespace: str, kind: str | None = None) -> dict[str, Any]:
    """One profile's data (``kind``), or ``{kind: data}`` of all unexpired profiles."""
    namespace = clean_identifier(namespace, field="namespace")
    queryset = Profile.objects.filter(namespace=namespace).exclude(expires_at__lte=timezone.now())
    if kind is not None:
        profile = queryset.filter(kind=kind).first()
        return dict(profile.data) if profile else {}
    return {p.kind: dict(p.data) for p in queryset.order_by("kind")}


def _min_score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise MemoryValidationError("min_score", "must be a number >= 0")
    return float(value)
