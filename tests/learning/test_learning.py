"""Fact extraction and rolling summaries, offline rules and a scripted LLM (every database)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.conftest import assistant, user
from ttmemory import memory
from ttmemory.backends.events import ListObserver
from ttmemory.backends.llm import ScriptedLLM
from ttmemory.exceptions import LLMError
from ttmemory.models import Fact, LedgerEntry, MemorySession, Message
from ttmemory.services.learning import facts_learn, session_learn, session_summarise

pytestmark = pytest.mark.contract
NS = "user-7"


@pytest.fixture
def scripted_llm(settings: Any) -> type[ScriptedLLM]:
    ScriptedLLM.reset()
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "LLM": {"BACKEND": "ttmemory.backends.llm.ScriptedLLM", "OPTIONS": {"model": "gpt-test"}},
    }
    return ScriptedLLM


@pytest.fixture
def recorded_events(settings: Any) -> list[Any]:
    ListObserver.events = []
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EVENT_OBSERVERS": [{"BACKEND": "ttmemory.backends.events.ListObserver"}],
    }
    return ListObserver.events


def test_offline_rules_learn_explicit_statements_with_their_source(db: Any) -> None:
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add_many(
        session=session,
        messages=[
            user("Hi! My name is Ada. I'm allergic to peanuts."),
            assistant("Noted, Ada."),
            user("Remember that my passport expires in May."),
        ],
    )

    changes = session_learn(session_id=session.pk, upto_seq=3)

    texts = {c.fact.text for c in changes}
    assert texts == {
        "The user's name is Ada",
        "The user is allergic to peanuts",
        "The user's passport expires in May",
    }
    allergy = Fact.objects.get(namespace=NS, text_hash=next(
        c.fact.text_hash for c in changes if "peanuts" in c.fact.text
    ))  # fmt: skip
    assert (allergy.source_session_id, allergy.source_seqs) == (session.pk, [1])
    assert [c.action for c in changes] == ["ADD", "ADD", "ADD"]
    # The same range again changes nothing.
    assert session_learn(session_id=session.pk, upto_seq=3) == []
    assert Fact.objects.filter(namespace=NS).count() == 3


def test_a_new_value_of_a_slot_supersedes_the_old_fact(db: Any) -> None:
    facts_learn(namespace=NS, messages=[user("I live in Lisbon")])
    changes = facts_learn(namespace=NS, messages=[user("Big news: I moved to Porto")])

    assert [(c.action, c.fact.text, c.previous.text) for c in changes] == [
        ("SUPERSEDE", "The user lives in Porto", "The user lives in Lisbon")
    ]
    assert [f.text for f in memory.fact_list(namespace=NS)] == ["The user lives in Porto"]


def test_llm_extraction_applies_add_supersede_and_noop(db: Any, scripted_llm: Any) -> None:
    old = memory.fact_remember(namespace=NS, text="The user works as a nurse")
    known = memory.fact_remember(namespace=NS, text="The user has a cat named Pixel")
    scripted_llm.reset(
        "Sure! Here is the JSON:\n```json\n"
        + json.dumps(
            {
                "facts": [
                    {"action": "ADD", "text": "The user plays the cello", "kind": "fact"},
                    {
                        "action": "SUPERSEDE",
                        "text": "The user works as a doctor",
                        "target_id": old.pk,
                    },
                    {"action": "NOOP", "target_id": known.pk},
                    {"action": "DELETE_EVERYTHING", "text": "ignored"},
                ]
            }
        )
        + "\n```"
    )

    changes = facts_learn(
        namespace=NS,
        messages=[user("I'm a doctor now, and I play the cello. My cat Pixel says hi.")],
    )

    assert [c.action for c in changes] == ["ADD", "SUPERSEDE", "NOOP"]
    assert {f.text for f in memory.fact_list(namespace=NS)} == {
        "The user plays the cello",
        "The user works as a doctor",
        "The user has a cat named Pixel",
    }
    request = scripted_llm.requests[0]
    assert request[0]["role"] == "system"
    payload = json.loads(request[1]["content"])
    assert {f["id"] for f in payload["existing_facts"]} >= {old.pk, known.pk}
    entry = LedgerEntry.objects.get(namespace=NS)
    assert (entry.purpose, entry.model, entry.status) == ("extract", "gpt-test", "ok")
    assert entry.prompt_tokens > 0


def test_a_failing_llm_raises_for_a_retry_and_marks_nothing_learned(
    db: Any, scripted_llm: Any
) -> None:
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add(session=session, message=user("I'm allergic to cats"))
    scripted_llm.reset(LLMError("vendor returned 500"), '{"facts": []}')

    with pytest.raises(LLMError):
        session_learn(session_id=session.pk, upto_seq=1)
    assert MemorySession.objects.get(pk=session.pk).learned_upto_seq == 0
    assert LedgerEntry.objects.get(namespace=NS).status == "error"

    assert session_learn(session_id=session.pk, upto_seq=1) == []
    assert MemorySession.objects.get(pk=session.pk).learned_upto_seq == 1


def test_extraction_is_skipped_once_the_daily_budget_is_spent(
    db: Any, scripted_llm: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "DAILY_TOKEN_BUDGET": 50}
    scripted_llm.reset('{"facts": [{"action": "ADD", "text": "The user likes jazz"}]}')
    facts_learn(namespace=NS, messages=[user("I love jazz " + "really " * 100)])

    assert facts_learn(namespace=NS, messages=[user("I love blues")]) == []

    assert len(scripted_llm.requests) == 1
    assert list(
        LedgerEntry.objects.filter(namespace=NS).values_list("status", flat=True).order_by("pk")
    ) == [
        "ok",
        "skipped",
    ]


def test_learning_runs_every_n_messages_after_commit(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "LEARN_EVERY": 2}
    session = memory.session_open(namespace=NS, key="chat")

    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=session, message=user("My name is Ada"))
    assert Fact.objects.count() == 0
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=session, message=user("I prefer aisle seats"))

    assert {f.text for f in memory.fact_list(namespace=NS)} == {
        "The user's name is Ada",
        "The user prefers aisle seats",
    }
    assert MemorySession.objects.get(pk=session.pk).learned_upto_seq == 2


def test_rolling_summary_merges_only_new_messages_and_leads_the_window(
    db: Any, scripted_llm: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "SUMMARY_KEEP_TOKENS": 60}
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add_many(
        session=session, messages=[user(f"old point {i} " + "z" * 40) for i in range(6)]
    )
    scripted_llm.reset("Ada discussed six old points.", "Ada discussed eight points.")

    assert session_summarise(session_id=session.pk) is True
    first = MemorySession.objects.get(pk=session.pk)
    memory.message_add_many(
        session=session, messages=[user(f"new point {i} " + "z" * 40) for i in range(2)]
    )
    assert session_summarise(session_id=session.pk) is True

    second = MemorySession.objects.get(pk=session.pk)
    assert second.summary == "Ada discussed eight points."
    assert second.summary_upto_seq > first.summary_upto_seq
    merged = json.loads(scripted_llm.requests[1][1]["content"])
    assert merged["summary"] == "Ada discussed six old points."
    covered = {
        m.data["content"]
        for m in Message.objects.filter(session=session, seq__lte=first.summary_upto_seq)
    }
    assert covered and not covered & {m["content"] for m in merged["new_messages"]}
    window = memory.context_window(session=session, max_tokens=500)
    assert window[0]["role"] == "system" and window[0]["content"].endswith("eight points.")


def test_a_failed_summary_still_trims_caches_nothing_and_succeeds_later(
    db: Any, scripted_llm: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "SUMMARY_KEEP_TOKENS": 60}
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add_many(
        session=session, messages=[user(f"point {i} " + "z" * 40) for i in range(6)]
    )
    scripted_llm.reset(LLMError("timeout"), "Six points.")

    with pytest.raises(LLMError):
        session_summarise(session_id=session.pk)
    after_failure = MemorySession.objects.get(pk=session.pk)
    assert after_failure.token_count <= 60  # trimmed anyway
    assert (after_failure.summary, after_failure.summary_upto_seq) == (None, 0)

    assert session_summarise(session_id=session.pk) is True
    assert MemorySession.objects.get(pk=session.pk).summary == "Six points."


def test_the_offline_summary_stays_within_its_budget(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "SUMMARY_KEEP_TOKENS": 30, "SUMMARY_MAX_TOKENS": 40}
    session = memory.session_open(namespace=NS, key="chat")
    memory.message_add_many(
        session=session,
        messages=[user(f"Topic {i} matters. More detail follows here.") for i in range(30)],
    )

    assert session_summarise(session_id=session.pk) is True

    from ttmemory import conversation

    stored = MemorySession.objects.get(pk=session.pk)
    summary = stored.summary or ""
    assert 0 < conversation.count_text_tokens(summary) <= 40
    # Message seq n says "Topic n-1": the newest covered point survives, nothing not covered
    # leaks in (whole numbers: "Topic 2" must not match "Topic 21").
    topics = {int(n) for n in re.findall(r"\bTopic (\d+)\b", summary)}
    newest_covered = stored.summary_upto_seq - 1
    assert newest_covered in topics
    assert topics <= set(range(newest_covered + 1))


def test_events_and_ledger_rows_carry_no_content(
    db: Any, scripted_llm: Any, recorded_events: Any
) -> None:
    secret = "my blood type is AB negative"
    session = memory.session_open(namespace=NS, key="chat")
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=session, message=user(secret))
        snapshot = memory.snapshot_create(session=session)
        memory.fact_remember(namespace=NS, text=secret)
        scripted_llm.reset('{"facts": [{"action": "ADD", "text": "' + secret + '"}]}')
        facts_learn(namespace=NS, messages=[user(secret)])
        memory.snapshot_rollback(session=session, snapshot=snapshot)
        memory.namespace_erase(namespace=NS)

    types = [e.type for e in recorded_events]
    assert {
        "message.added",
        "snapshot.created",
        "fact.changed",
        "snapshot.rolled_back",
        "namespace.erased",
    } <= set(types)
    dumped = json.dumps([e.as_dict() for e in recorded_events])
    assert "blood" not in dumped and "AB negative" not in dumped
    ledger = json.dumps(list(LedgerEntry.objects.values()), default=str)
    assert "blood" not in ledger


def test_events_wait_for_commit_and_vanish_with_a_rollback(db: Any, recorded_events: Any) -> None:
    from django.db import transaction
    from django.test import TestCase

    session = memory.session_open(namespace=NS, key="chat")

    class Abort(Exception):
        pass

    with (
        TestCase.captureOnCommitCallbacks(execute=True),
        pytest.raises(Abort),
        transaction.atomic(),
    ):
        memory.message_add(session=session, message=user("never committed"))
        raise Abort
    assert recorded_events == []
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=session, message=user("committed"))
    assert [e.type for e in recorded_events] == ["message.added"]
    assert recorded_events[0].counts["messages"] == 1


def test_a_failing_observer_never_fails_a_write(db: Any, settings: Any) -> None:
    from ttmemory import events

    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EVENT_OBSERVERS": [{"BACKEND": "tests.learning.test_learning.FailingObserver"}],
    }
    session = memory.session_open(namespace=NS, key="chat")
    before = events.stats.failures
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=session, message=user("still stored"))

    assert memory.message_recent(session=session)[0]["content"] == "still stored"
    assert events.stats.failures == before + 1


from ttmemory.backends.events import EventObserver  # noqa: E402


class FailingObserver(EventObserver):
    def publish(self, event: Any) -> None:
        raise ConnectionError("observer endpoint is down")


def test_idle_sessions_with_unlearned_messages_are_learned(db: Any, settings: Any) -> None:
    from datetime import timedelta

    from django.test import TestCase
    from django.utils import timezone

    from ttmemory import jobs

    settings.TTMEMORY = {**settings.TTMEMORY, "LEARN_IDLE_SECONDS": 60}
    idle = memory.session_open(namespace=NS, key="idle")
    busy = memory.session_open(namespace="user-8", key="busy")
    memory.message_add(session=idle, message=user("I'm allergic to bees"))
    memory.message_add(session=busy, message=user("I'm allergic to wasps"))
    MemorySession.objects.filter(pk=idle.pk).update(
        updated_at=timezone.now() - timedelta(minutes=5)
    )

    with TestCase.captureOnCommitCallbacks(execute=True):
        assert jobs.run("learn_idle") == {"queued": 1}

    assert [f.text for f in memory.fact_list(namespace=NS)] == ["The user is allergic to bees"]
    assert memory.fact_list(namespace="user-8") == []
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert jobs.run("learn_idle") == {"queued": 0}  # learned: not queued again


def test_ledger_totals_per_namespace_and_day(db: Any) -> None:
    from ttmemory.selectors import ledger_totals
    from ttmemory.services.ledger import ledger_record

    ledger_record(
        namespace=NS, purpose="extract", model="m", prompt_tokens=100, completion_tokens=20
    )
    ledger_record(namespace=NS, purpose="extract", model="m", prompt_tokens=50, completion_tokens=5)
    ledger_record(namespace=NS, purpose="extract", model="m", status="error")
    ledger_record(namespace="other", purpose="summarise", model="m", prompt_tokens=7)

    (row,) = ledger_totals(namespace=NS)
    assert (row["calls"], row["prompt_tokens"], row["completion_tokens"], row["errors"]) == (
        3,
        150,
        25,
        1,
    )
    assert row["total_tokens"] == 175 and row["purpose"] == "extract"
    assert {r["namespace"] for r in ledger_totals()} == {NS, "other"}
