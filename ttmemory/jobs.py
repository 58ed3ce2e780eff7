"""Background jobs, run by Celery tasks (``ttmemory.tasks``) or inline: they take ids only."""

from __future__ import annotations

from typing import Any

from ttmemory.exceptions import EmbeddingError


def job_learn(session_id: int, upto_seq: int) -> dict[str, Any]:
    from ttmemory.services.learning import session_learn

    changes = session_learn(session_id=session_id, upto_seq=upto_seq)
    return {"changes": [change.action for change in changes]}


def job_learn_job(job_id: str) -> dict[str, Any]:
    from ttmemory.services.learnjobs import learn_job_run

    job = learn_job_run(job_id=job_id)
    return {"status": job.status if job is not None else "gone"}


def job_summarise(session_id: int) -> dict[str, Any]:
    from ttmemory.services.learning import session_summarise

    return {"summarised": session_summarise(session_id=session_id)}


def job_embed(fact_id: int) -> dict[str, Any]:
    """Embed one fact stored without a vector (the embedder was down when it was remembered)."""
    from ttmemory.backends.embedders import get_embedder
    from ttmemory.embedding import embed_texts
    from ttmemory.models import Fact

    fact = Fact.objects.filter(pk=fact_id).first()
    if fact is None:
        return {"embedded": False}
    embedder = get_embedder()
    if fact.embedding is not None and fact.embedding_model == embedder.model:
        return {"embedded": False}
    vectors, reason = embed_texts([fact.text])
    if vectors is None:
        raise EmbeddingError(reason)
    Fact.objects.filter(pk=fact.pk).update(
        embedding=vectors[0], embedding_model=embedder.model, embedding_dim=len(vectors[0])
    )
    return {"embedded": True}


def job_prune_expired() -> dict[str, Any]:
    """Expired facts, and Idempotency-Key records older than ``API_IDEMPOTENCY_SECONDS``."""
    from ttmemory.services.facts import facts_prune_expired
    from ttmemory.services.idempotency import idempotency_prune

    return {"pruned": facts_prune_expired(), "idempotency_records": idempotency_prune()}


def job_learn_idle(limit: int = 500) -> dict[str, Any]:
    """Queue learning for sessions idle for ``LEARN_IDLE_SECONDS`` with unlearned messages."""
    from datetime import timedelta

    from django.db.models import F
    from django.utils import timezone

    from ttmemory import scheduling
    from ttmemory.conf import app_settings
    from ttmemory.models import MemorySession

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
        scheduling.schedule("learn", session_id, last_seq)
    return {"queued": len(due)}
