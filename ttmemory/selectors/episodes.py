"""Episodic recall: a namespace's past messages, live and archived, by meaning and keyword."""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Iterable
from typing import Any

from django.db.models import QuerySet

from ttmemory import jobs
from ttmemory.backends.embedders import get_embedder
from ttmemory.exceptions import MemoryValidationError
from ttmemory.jobs.ledger_calls import record_later
from ttmemory.longterm import episodes, fusion
from ttmemory.longterm.embedding import embed_for
from ttmemory.models import MemorySession, MessageEntry
from ttmemory.models.compiled import CompiledQuery
from ttmemory.results import MessageHit
from ttmemory.validation import clean_count, clean_identifier

MAX_WINDOW = 20
#: A search that finds more unindexed messages than it scores queues the catch-up at most this
#: often per namespace and process (the job indexes the whole namespace; a backlog of queued
#: copies would only find nothing to do).
CATCH_UP_SECONDS = 30.0
_catch_up_lock = threading.Lock()
_catch_up_at: dict[str, float] = {}


def message_search(
    *,
    namespace: str,
    query: str,
    k: int = 10,
    window: int = 2,
    sessions: Iterable[MemorySession | str] | None = None,
    min_score: float = 0.0,
) -> list[MessageHit]:
    """The ``k`` past messages of ``namespace`` best matching ``query``, best first.

    Every message with text counts, live or archived, in every session of the namespace (or in
    ``sessions``: sessions or session keys of the namespace). BM25 over the blind index, where
    a message's neighbours (``window`` each side) add their terms at reduced weight, blended
    like ``fact_recall`` with the cosine similarity of the message's own vector at
    ``MESSAGE_SEARCH_VECTOR_WEIGHT`` (keyword only at weight 0, the HashEmbedder's default,
    while the embedder fails, or for a message awaiting its vector). Each hit carries
    up to ``window`` messages of its session on each side as context. A message that asks (it
    ends with a question mark) keeps a quarter of its keyword and of its vector score, and one
    holding every word of the query (the question asked again, or the live one) lends its
    words to no neighbour, so the message holding the answer ranks above the question and the
    reply to it (``episodes.QUESTION_WEIGHT``). Hits scoring at or below ``min_score`` are
    left out. Reads only; raises MemoryValidationError for bad arguments.

    Messages the ``message_index`` job has not indexed yet are scored from the stored messages,
    up to ``MESSAGE_SEARCH_PENDING_LIMIT`` of them (the newest); when more wait, the older ones
    are left out until that job has run, and the search queues it.
    """
    namespace = clean_identifier(namespace, field="namespace")
    if not isinstance(query, str) or not query.strip():
        raise MemoryValidationError("query", "must be a non-empty string")
    k = clean_count(k, field="k", minimum=1)
    window = clean_count(window, field="window")
    if window > MAX_WINDOW:
        raise MemoryValidationError("window", f"must be at most {MAX_WINDOW}")
    if isinstance(min_score, bool) or not isinstance(min_score, int | float) or min_score < 0:
        raise MemoryValidationError("min_score", "must be a number >= 0")
    session_ids = _session_ids(namespace, sessions)
    pool = max(50, k * 5)
    keyword = episodes.keyword_scores(
        namespace,
        query,
        window=window,
        limit=pool,
        session_ids=session_ids,
        on_pending_cut=lambda session_id: _catch_up(namespace, session_id),
    )
    vector: dict[tuple[int, int], float] = {}
    weight = episodes.vector_weight()
    vectors = None
    if weight > 0:
        embedded = embed_for([query], namespace=namespace, purpose="embed_query")
        record_later(embedded.call)  # written by a background job: a read writes nothing
        vectors = embedded.vectors
    if vectors is not None:
        entries = MessageEntry.objects.filter(namespace=namespace)
        if session_ids is not None:
            entries = entries.filter(session_id__in=session_ids)
        vector = episodes.vector_scores(entries, vectors[0], get_embedder().model, pool)
        vector = episodes.vector_questions_damped(namespace, vector)
    scores = fusion.fuse(keyword, vector, vector_weight=weight)
    ranked = sorted(
        ((key, s) for key, s in scores.items() if s > min_score), key=lambda i: (-i[1], i[0])
    )[:k]
    return _hits(namespace, ranked, window)


def _catch_up(namespace: str, session_id: int) -> None:
    """Queue the ``message_index`` job for ``namespace`` (through ``session_id``), throttled.

    Like the ledger rows of a search's query embedding, the write happens in that job: with a
    Celery worker elsewhere, inline (after this search) without one.
    """
    now = time.monotonic()
    with _catch_up_lock:
        if now - _catch_up_at.get(namespace, -CATCH_UP_SECONDS) < CATCH_UP_SECONDS:
            return
        _catch_up_at[namespace] = now
    jobs.schedule("message_index", session_id)


def _session_ids(
    namespace: str, sessions: Iterable[MemorySession | str] | None
) -> list[int] | None:
    if sessions is None:
        return None
    if isinstance(sessions, str | MemorySession):
        sessions = [sessions]
    keys: list[str] = []
    ids: list[int] = []
    for index, item in enumerate(sessions):
        if isinstance(item, MemorySession):
            if item.namespace != namespace:
                raise MemoryValidationError(f"sessions[{index}]", "belongs to another namespace")
            ids.append(item.pk)
        elif isinstance(item, str):
            keys.append(clean_identifier(item, field=f"sessions[{index}]"))
        else:
            raise MemoryValidationError(f"sessions[{index}]", "must be a session or a session key")
    if keys:
        ids.extend(
            MemorySession.objects.filter(namespace=namespace, key__in=keys).values_list(
                "pk", flat=True
            )
        )
    return ids


def _hits(
    namespace: str, ranked: list[tuple[tuple[int, int], float]], window: int
) -> list[MessageHit]:
    if not ranked:
        return []
    # Every hit's window in one statement (adjacent or overlapping windows merged).
    spans = episodes.spans((key for key, _ in ranked), window)
    by_key: dict[tuple[int, int], tuple[dict[str, Any], Any, Any]] = {
        (s, q): (data, archived, created)
        for s, q, archived, created, data in episodes.messages_at(namespace, spans)
    }
    sessions = _sessions_by_id(sorted({s for (s, _), _ in ranked}))
    hits: list[MessageHit] = []
    for (session_id, seq), score in ranked:
        found = by_key.get((session_id, seq))
        if found is None or session_id not in sessions:  # deleted since it was indexed
            continue
        data, archived, created = found
        context = tuple(
            (near, by_key[(session_id, near)][0])
            for near in range(seq - window, seq + window + 1)
            if near != seq and (session_id, near) in by_key
        )
        hits.append(
            MessageHit(
                session=sessions[session_id],
                seq=seq,
                score=score,
                message=data,
                archived=archived is not None,
                created_at=created,
                context=context,
            )
        )
    return hits


def _sessions_by_id(ids: list[int]) -> dict[int, MemorySession]:
    """``MemorySession.objects.in_bulk(ids)``, compiled once per number of ids and connection
    (``CompiledQuery``): compiling ``in_bulk``'s query was most of its cost per search."""
    values = {f"id{i}": pk for i, pk in enumerate(ids)}
    return {session.pk: session for session in _SESSIONS.objects(len(ids), **values)}


def _sessions(_: Hashable, **ids: int) -> QuerySet[MemorySession]:
    return MemorySession.objects.filter(pk__in=list(ids.values()))


_SESSIONS = CompiledQuery(MemorySession, _sessions)
