"""Bodies of the background jobs, registered by name in ``ttmemory.jobs``: they take ids only.

``ttmemory.tasks`` runs them in Celery; without Celery they run inline after commit. Each one
is idempotent (learned-up-to and summarised-up-to marks, fact upserts), so a re-run adds nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import F
from django.utils import timezone

from ttmemory import jobs
from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings
from ttmemory.exceptions import EmbeddingError
from ttmemory.longterm.embedding import embed_for
from ttmemory.models import Fact, LedgerStatus, MemorySession
from ttmemory.services.episodes import messages_embed, messages_index_pending
from ttmemory.services.facts import facts_touch_recalled
from ttmemory.services.learning import session_learn, session_summarise
from ttmemory.services.learnjobs import learn_job_run
from ttmemory.services.ledger import ledger_record_embedding, ledger_record_many
from ttmemory.services.prune import prune_expired


@jobs.job("learn")
def job_learn(session_id: int, upto_seq: int) -> dict[str, Any]:
    """Extract facts from a session's messages up to ``upto_seq``."""
    changes = session_learn(session_id=session_id, upto_seq=upto_seq)
    return {"changes": [change.action for change in changes]}


@jobs.job("learn_job")
def job_learn_job(job_id: str) -> dict[str, Any]:
    """Run a learn job queued through the API (``LearnJob``)."""
    job = learn_job_run(job_id=job_id)
    return {"status": job.status if job is not None else "gone"}


@jobs.job("summarise")
def job_summarise(session_id: int) -> dict[str, Any]:
    """Trim a session over ``SUMMARISE_AT_TOKENS`` and merge what left into its summary."""
    return {"summarised": session_summarise(session_id=session_id)}


@jobs.job("embed")
def job_embed(fact_id: int) -> dict[str, Any]:
    """Embed one fact stored without a vector (the embedder was down when it was remembered)."""
    fact = Fact.objects.filter(pk=fact_id).first()
    if fact is None:
        return {"embedded": False}
    embedder = get_embedder()
    if fact.embedding is not None and fact.embedding_model == embedder.model:
        return {"embedded": False}
    embedded = embed_for([fact.text], namespace=fact.namespace, purpose="embed")
    ledger_record_embedding(call=embedded.call)
    if embedded.call is not None and embedded.call.status == LedgerStatus.SKIPPED:
        return {"embedded": False, "reason": embedded.reason}  # a retry would skip again
    if embedded.vectors is None:
        raise EmbeddingError(embedded.reason)
    vector = embedded.vectors[0]
    Fact.objects.filter(pk=fact.pk).update(
        embedding=vector, embedding_model=embedder.model, embedding_dim=len(vector)
    )
    return {"embedded": True}


@jobs.job("ledger_record")
def job_ledger_record(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Write ledger rows of embedding calls made by reads (``ttmemory.jobs.ledger_calls``)."""
    return {"recorded": ledger_record_many(rows=rows)}


@jobs.job("recall_touch")
def job_recall_touch(counts: list[tuple[int, int]]) -> dict[str, Any]:
    """Write recall statistics counted by ``fact_recall`` (``ttmemory.jobs.recall_counts``)."""
    return {"updated": facts_touch_recalled(counts=counts)}


@jobs.job("prune_expired")
def job_prune_expired() -> dict[str, Any]:
    """Apply every lifetime (``prune_expired``): counts of rows deleted per kind."""
    report = prune_expired()
    return {"pruned": report.counts, "batches": report.batches, "seconds": report.seconds}


@jobs.job("learn_idle")
def job_learn_idle(limit: int = 500) -> dict[str, Any]:
    """Queue learning for sessions idle for ``LEARN_IDLE_SECONDS`` with unlearned messages."""
    idle = app_settings.LEARN_IDLE_SECONDS
    if idle <= 0:
        return {"queued": 0}
    cutoff = timezone.now() - timedelta(seconds=idle)
    due = list(
        MemorySession.objects.filter(updated_at__lte=cutoff, learned_upto_seq__lt=F("last_seq"))
        .order_by("updated_at")
        .values_list("pk", "last_seq")[:limit]
    )
    for session_id, last_seq in due:
        jobs.schedule("learn", session_id, last_seq)
    return {"queued": len(due)}


@jobs.job("message_embed")
def job_message_embed(session_id: int) -> dict[str, Any]:
    """Embed a session's newly indexed messages for ``message_search`` (after an append)."""
    return {"embedded": messages_embed(session_id=session_id)}


@jobs.job("message_index")
def job_message_index(session_id: int, sweep: bool = True) -> dict[str, Any]:
    """Index a session's messages not yet in the episodic index; with ``sweep``, also those of
    the other sessions of its namespace that are behind (the catch-up a search queues)."""
    return {"indexed": messages_index_pending(session_id=session_id, sweep=sweep)}
