"""Learning from conversations: fact extraction (LLM or offline rules) and rolling summaries."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from django.db.models import F, Q
from django.utils import timezone

from ttmemory import conversation, events
from ttmemory.backends.llm import LLMResponse, get_llm
from ttmemory.backends.locks import session_lock
from ttmemory.conf import app_settings
from ttmemory.exceptions import LLMError, MemoryValidationError
from ttmemory.fields import seal
from ttmemory.longterm import extraction
from ttmemory.models import Fact, LedgerStatus, MemorySession, Message
from ttmemory.results import FactChange
from ttmemory.selectors.facts import fact_list, fact_recall
from ttmemory.services.episodes import index_delete_archived_upto
from ttmemory.services.facts import fact_remember, fact_supersede
from ttmemory.services.ledger import budget_left, ledger_record
from ttmemory.services.sessions import session_trim
from ttmemory.validation import clean_identifier

logger = logging.getLogger(__name__)
# Existing facts shown to the LLM extractor: the closest by recall, then the newest.
CLOSEST_FACTS = 10
RULES_MODEL = "rules"


def facts_learn(
    *,
    namespace: str,
    messages: Sequence[dict[str, Any]],
    source: tuple[MemorySession, list[int]] | None = None,
) -> list[FactChange]:
    """Extract facts from ``messages`` and apply ADD / UPDATE / SUPERSEDE / NOOP decisions.

    With ``TTMEMORY["LLM"]`` one LLM call sees the messages and the closest existing facts;
    without it, offline rules catch explicit statements ("I'm allergic to ...", "my name is
    ...", "I prefer ...", "remember that ..."). Running it twice on the same messages changes
    nothing the second time (facts are upserted by normalised text). Skipped, and the skip
    recorded in the ledger, when the namespace's daily token budget is spent. Raises LLMError
    when the LLM fails (tasks retry).
    """
    namespace = clean_identifier(namespace, field="namespace")
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise MemoryValidationError("messages", "must be a list of message objects")
    messages = [dict(m) for m in messages if isinstance(m, dict)]
    llm = get_llm()
    if llm is None:
        candidates = extraction.rule_candidates(messages)
    else:
        left = budget_left(namespace=namespace)
        if left is not None and left <= 0:
            ledger_record(
                namespace=namespace, purpose="extract", model=llm.model, status=LedgerStatus.SKIPPED
            )
            logger.info("fact extraction skipped: daily token budget of %s is spent", namespace)
            return []
        existing = _closest_facts(namespace, messages)
        request = extraction.extraction_messages(messages, existing)
        response = _call(
            llm.complete, request, namespace=namespace, purpose="extract", model=llm.model
        )
        try:
            candidates = extraction.parse_extraction(
                response.text, known_ids={fact_id for fact_id, _ in existing}
            )
        except ValueError as exc:
            raise LLMError(f"the extraction answer was not usable JSON: {exc}") from exc
    return _apply(namespace, candidates, source)


def _call(
    complete: Any, request: list[dict[str, Any]], *, namespace: str, purpose: str, model: str
) -> LLMResponse:
    started = time.perf_counter()
    try:
        response: LLMResponse = complete(request, json_object=purpose == "extract")
    except Exception as exc:
        ledger_record(
            namespace=namespace,
            purpose=purpose,
            model=model,
            latency_ms=(time.perf_counter() - started) * 1000,
            status=LedgerStatus.ERROR,
        )
        if isinstance(exc, LLMError):
            raise
        raise LLMError(f"{purpose} call failed: {type(exc).__name__}: {exc}") from exc
    ledger_record(
        namespace=namespace,
        purpose=purpose,
        model=response.model,
        prompt_tokens=response.prompt_tokens,
        completion_tokens=response.completion_tokens,
        latency_ms=response.latency_ms,
    )
    return response


def _closest_facts(namespace: str, messages: list[dict[str, Any]]) -> list[tuple[int, str]]:

    text = " ".join(
        m["content"]
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), str)
    )[:2000]
    if not text.strip():
        return []
    try:
        hits = fact_recall(namespace=namespace, query=text, k=CLOSEST_FACTS).facts
    except MemoryValidationError:
        return []
    # Recall leaves out facts sharing nothing with the messages; the extractor still needs the
    # newest ones to see a contradiction worded differently ("nurse" -> "doctor").
    shown = {fact.pk for fact in hits}
    for fact in fact_list(namespace=namespace, limit=2 * CLOSEST_FACTS):
        if len(hits) >= CLOSEST_FACTS:
            break
        if fact.pk not in shown:
            hits.append(fact)
    return [(fact.pk, fact.text) for fact in hits]


def _apply(
    namespace: str,
    candidates: list[extraction.Candidate],
    source: tuple[MemorySession, list[int]] | None,
) -> list[FactChange]:
    changes: list[FactChange] = []
    for candidate in candidates:
        if source is not None and candidate.message_index is not None:
            # Provenance as precise as the extractor knows it: the one message that said it.
            session, seqs = source
            fact_source: tuple[MemorySession, list[int]] | None = (
                session,
                [seqs[candidate.message_index]],
            )
        else:
            fact_source = source
        if candidate.action == "NOOP":
            target = (
                Fact.objects.filter(namespace=namespace, pk=candidate.target_id).first()
                if candidate.target_id is not None
                else None
            )
            changes.append(FactChange("NOOP", target))
            continue
        target_id = candidate.target_id
        if target_id is None and candidate.slot:
            slotted = (
                Fact.objects.current()
                .filter(namespace=namespace, metadata__slot=candidate.slot)
                .order_by("-pk")
                .first()
            )
            target_id = slotted.pk if slotted else None
        metadata = {"slot": candidate.slot} if candidate.slot else None
        if target_id is not None:
            previous = Fact.objects.filter(namespace=namespace, pk=target_id).first()
            if previous is not None and previous.text == candidate.text:
                changes.append(FactChange("NOOP", previous))
                continue
            fact = fact_supersede(
                namespace=namespace,
                fact_id=target_id,
                text=candidate.text,
                kind=candidate.kind,
                metadata=metadata,
                source=fact_source,
            )
            action = "UPDATE" if candidate.action == "UPDATE" else "SUPERSEDE"
            changes.append(FactChange(action, fact, previous))
            continue
        existed = Fact.objects.current().filter(namespace=namespace).count()
        fact = fact_remember(
            namespace=namespace, text=candidate.text, kind=candidate.kind, metadata=metadata,
            source=fact_source,
        )  # fmt: skip
        now_current = Fact.objects.current().filter(namespace=namespace).count()
        changes.append(FactChange("ADD" if now_current > existed else "NOOP", fact))
    return changes


def session_learn(*, session_id: int, upto_seq: int) -> list[FactChange]:
    """Extract facts from the session's messages after ``learned_upto_seq`` up to ``upto_seq``.

    Idempotent: a range already learned (or a session erased meanwhile) does nothing, and the
    learned-up-to mark only moves forward.
    """
    session = MemorySession.objects.filter(pk=session_id).first()
    if session is None or upto_seq <= session.learned_upto_seq:
        return []
    rows = list(
        Message.objects.filter(session=session, seq__gt=session.learned_upto_seq, seq__lte=upto_seq)
        .order_by("seq")
        .values_list("seq", "data")
    )
    changes: list[FactChange] = []
    if rows:
        seqs = [seq for seq, _ in rows]
        changes = facts_learn(
            namespace=session.namespace,
            messages=[data for _, data in rows],
            source=(session, seqs),
        )
    MemorySession.objects.filter(pk=session.pk, learned_upto_seq__lt=upto_seq).update(
        learned_upto_seq=upto_seq
    )
    events.emit(
        "session.learned",
        namespace=session.namespace,
        session_id=session.pk,
        counts={
            "messages": len(rows),
            **{a.lower(): sum(c.action == a for c in changes) for a in extraction.ACTIONS},
        },
        ids={"upto_seq": upto_seq},
    )
    return changes


def session_summarise(*, session_id: int) -> bool:
    """Trim the session to ``SUMMARY_KEEP_TOKENS`` and merge what is uncovered into its summary.

    Only messages after ``summary_upto_seq`` are summarised (never re-summarising what is
    covered); the summary stays within ``SUMMARY_MAX_TOKENS``. Trimming happens even if the
    LLM then fails (LLMError is raised for a retry; nothing half-done is stored). With
    ``TRIM_MODE = "delete"`` covered archived messages are deleted once summarised. The LLM
    runs outside the session lock; the summary is stored only if the session's
    ``history_version`` has not moved meanwhile (a trim, clear, rollback or another summary
    voids it: nothing is stored and False is returned; the next run summarises afresh).
    Returns True when the summary changed.
    """

    session = MemorySession.objects.filter(pk=session_id).first()
    if session is None:
        return False
    keep = app_settings.SUMMARY_KEEP_TOKENS
    if session.token_count > keep:
        session_trim(session=session, max_tokens=keep, archive=True)
    session.refresh_from_db()
    covered = session.summary_upto_seq
    version = session.history_version
    rows = list(
        Message.objects.filter(session=session, archived_at__isnull=False, seq__gt=covered)
        .order_by("seq")
        .values_list("seq", "data")
    )
    if not rows:
        return False
    previous = session.summary or ""
    new_messages = [data for _, data in rows]
    summary = _summarise(session.namespace, previous, new_messages)
    upto = rows[-1][0]
    with session_lock(session):
        # Stored only if no trim, clear, rollback or other summary changed the archive or the
        # summary while the LLM ran (a rollback may restore an equal summary_upto_seq).
        updated = MemorySession.objects.filter(
            pk=session.pk, summary_upto_seq=covered, history_version=version
        ).update(
            summary=seal(session, "summary", summary),
            summary_upto_seq=upto,
            history_version=F("history_version") + 1,
            updated_at=timezone.now(),
        )
        if not updated:
            logger.info(
                "session %s changed while it was summarised; the summary was not stored",
                session.pk,
            )
        if updated and app_settings.TRIM_MODE == "delete":
            index_delete_archived_upto(session, upto)
            Message.objects.filter(
                Q(session=session) & Q(archived_at__isnull=False) & Q(seq__lte=upto)
            ).delete()
        if updated:
            events.emit(
                "session.summarised",
                namespace=session.namespace,
                session_id=session.pk,
                counts={"messages": len(rows)},
                ids={"upto_seq": upto},
            )
    return bool(updated)


def _summarise(namespace: str, previous: str, new_messages: list[dict[str, Any]]) -> str:
    limit = app_settings.SUMMARY_MAX_TOKENS
    encoding = app_settings.TOKENIZER
    llm = get_llm()
    if llm is None:
        text = extraction.extractive_summary(previous, new_messages)
    else:
        request = extraction.summary_messages(previous, new_messages, max_words=int(limit * 0.7))
        text = _call(
            llm.complete, request, namespace=namespace, purpose="summarise", model=llm.model
        ).text.strip()
        if not text:
            raise LLMError("the summariser answered an empty summary")
    # Keep within budget: drop the oldest lines first, then cut.
    lines = text.splitlines()
    while (
        len(lines) > 1
        and conversation.count_text_tokens("\n".join(lines), encoding=encoding) > limit
    ):
        lines.pop(0)
    text = "\n".join(lines)
    while text and conversation.count_text_tokens(text, encoding=encoding) > limit:
        text = text[: int(len(text) * 0.9)]
    return text
