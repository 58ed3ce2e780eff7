"""One call for the common agent loop: store a turn's messages and learn from them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ttmemory import jobs
from ttmemory.models import MemorySession
from ttmemory.results import TurnResult
from ttmemory.services.learning import session_learn
from ttmemory.services.learnjobs import learn_job_create
from ttmemory.services.sessions import message_add_many


def turn_add(
    *, session: MemorySession, messages: Sequence[dict[str, Any]], learn: bool = True
) -> TurnResult:
    """Append a turn's ``messages`` (``message_add_many``) and learn facts from them.

    With ``learn=True`` facts are extracted from every message of the session not learned yet,
    up to the last one stored here: inline (this call waits for the extraction and returns its
    ``FactChange`` list in ``changes``) when background jobs run inline (``TTMEMORY["JOBS"]``),
    else queued as a learning job whose id is ``job_id`` (poll it through the REST API's
    ``facts/learn/<id>/``). ``learn=False`` only stores. The append is all-or-nothing
    (``MemoryValidationError`` names the bad message; nothing is stored or learned); an
    extraction failing inline raises ``LLMError`` after the messages were stored (learning them
    again later is safe: what was learned is skipped). An automatic learn queued by
    ``LEARN_EVERY`` may run first; its changes are not in ``changes``.
    """
    rows = message_add_many(session=session, messages=messages)
    if not learn or not rows:
        return TurnResult(messages=rows, learning="off")
    if jobs.queues():
        job = learn_job_create(session=session)
        return TurnResult(messages=rows, learning="queued", job_id=str(job.pk))
    changes = session_learn(session_id=session.pk, upto_seq=rows[-1].seq)
    return TurnResult(messages=rows, learning="inline", changes=changes)
