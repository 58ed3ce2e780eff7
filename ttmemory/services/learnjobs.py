"""Learning requested through the API: a LearnJob row the caller polls, run in the background."""

from __future__ import annotations

import logging
from collections import Counter

from django.db import transaction
from django.utils import timezone

from ttmemory import jobs
from ttmemory.exceptions import RateLimitedError
from ttmemory.models import LearnJob, LearnJobStatus, MemorySession
from ttmemory.services.learning import session_learn

logger = logging.getLogger(__name__)


def learn_job_create(*, session: MemorySession) -> LearnJob:
    """Queue fact extraction for ``session`` up to its newest message; returns the job to poll.

    The job runs after commit (a Celery task, or inline without a broker). Messages already
    learned are skipped, so asking twice learns once. The job is returned as stored after the
    commit: run inline, it is already done.
    """
    with transaction.atomic():
        last_seq = MemorySession.objects.filter(pk=session.pk).values_list("last_seq", flat=True)
        job = LearnJob.objects.create(
            namespace=session.namespace, session=session, upto_seq=last_seq.get()
        )
        jobs.schedule("learn_job", str(job.pk))
    return LearnJob.objects.filter(pk=job.pk).first() or job


def learn_job_run(*, job_id: str) -> LearnJob | None:
    """Run one job: mark it running, learn, store counts and fact ids (never content).

    Returns None when the job is gone (its namespace was erased). Errors mark the job failed
    and are raised again so the task can retry (a retry marks it running again).
    """

    job = LearnJob.objects.filter(pk=job_id).first()
    if job is None or job.status == LearnJobStatus.DONE:
        return job
    LearnJob.objects.filter(pk=job.pk).update(status=LearnJobStatus.RUNNING, error="")
    try:
        changes = (
            session_learn(session_id=job.session_id, upto_seq=job.upto_seq)
            if job.session_id is not None
            else []
        )
    except RateLimitedError:
        # Not a failure: the task puts the job back on its queue for when there is room.
        LearnJob.objects.filter(pk=job.pk).update(status=LearnJobStatus.QUEUED)
        raise
    except Exception as exc:
        LearnJob.objects.filter(pk=job.pk).update(
            status=LearnJobStatus.FAILED,
            error=f"{type(exc).__name__}"[:300],
            finished_at=timezone.now(),
        )
        raise
    counts = Counter(change.action for change in changes)
    fact_ids = sorted({change.fact.pk for change in changes if change.fact is not None})
    LearnJob.objects.filter(pk=job.pk).update(
        status=LearnJobStatus.DONE,
        changes=dict(counts),
        fact_ids=fact_ids,
        finished_at=timezone.now(),
    )
    job.refresh_from_db()
    return job
