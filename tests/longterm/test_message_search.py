"""Episodic recall: message_search finds past turns, live and archived, with their context."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import TestCase

from tests.conftest import assistant, raw_rows, user
from tests.longterm.test_fusion import ConceptEmbedder
from ttmemory import memory
from ttmemory.models import MemorySession, MessageEntry, MessageTerm
from ttmemory.services.episodes import messages_index_pending

pytestmark = pytest.mark.contract

CHAT = [
    user("Hi there, how are you today?"),
    assistant("Doing well, thanks! What can I help with?"),
    user("I need to renew the contract with the landlord before March."),
    assistant("Noted. Who should I contact about it?"),
    user("Her name is Maria Santos, she handles the Porto flat."),
    assistant("Thanks, I will remember Maria."),
    user("Also, my cat Pimenta hates the vet."),
    assistant("Poor Pimenta! Vets can be stressful."),
    user("What a lovely sunny day it is."),
    assistant("Enjoy the sunshine!"),
]


def seed(namespace: str = "user-1", key: str = "chat-1") -> MemorySession:
    """A stored chat, indexed by the message_index job its append queues (run at commit)."""
    session = memory.session_open(namespace=namespace, key=key)
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=CHAT)
    return session


def index_rows(namespace: str) -> int:
    return (
        MessageEntry.objects.filter(namespace=namespace).count()
        + MessageTerm.objects.filter(namespace=namespace).count()
    )


def test_finds_the_right_turn_with_its_neighbours_as_context(db: Any) -> None:
    session = seed()
    hits = memory.message_search(namespace="user-1", query="the cat that hates the vet", k=3)
    assert hits[0].seq == 7 and hits[0].session == session
    assert hits[0].message == CHAT[6]
    assert [seq for seq, _ in hits[0].context] == [5, 6, 8, 9]
    assert hits[0].context[1] == (6, CHAT[5])
    assert [seq for seq, _ in hits[0].transcript] == [5, 6, 7, 8, 9]
    assert not hits[0].archived
    one = memory.message_search(namespace="user-1", query="cat vet", k=1, window=0)
    assert len(one) == 1 and one[0].seq == 7 and one[0].context == ()


def test_a_turn_is_found_by_the_words_of_the_turn_it_answers(db: Any) -> None:
    """The landlord's name is in turn 5; "contract" and "landlord" are only in turn 3."""
    seed()
    alone = memory.message_search(namespace="user-1", query="contract landlord", k=5, window=0)
    assert 5 not in [hit.seq for hit in alone]
    near = memory.message_search(namespace="user-1", query="contract landlord", k=5, window=2)
    assert 5 in [hit.seq for hit in near]
    assert near[0].seq == 3  # the turn that says it still ranks first


def test_nothing_matching_returns_nothing(db: Any) -> None:
    seed()
    assert memory.message_search(namespace="user-1", query="quantum chromodynamics") == []


def test_archived_messages_are_found_and_marked(db: Any) -> None:
    session = seed()
    result = memory.session_trim(session=session, max_tokens=30, archive=True)
    assert 3 in result.removed_seqs
    hits = memory.message_search(namespace="user-1", query="renew the contract", k=1)
    assert hits[0].seq == 3 and hits[0].archived
    assert memory.message_recent(session=session)[0] != CHAT[2]


def test_namespaces_are_isolated_and_sessions_filter(db: Any) -> None:
    seed("user-1")
    other = seed("user-2")
    seed("user-1", key="chat-2")
    hits = memory.message_search(namespace="user-1", query="Pimenta", k=10, window=0)
    assert {hit.session.namespace for hit in hits} == {"user-1"}
    assert {hit.session.key for hit in hits} == {"chat-1", "chat-2"}
    only = memory.message_search(namespace="user-1", query="Pimenta", sessions=["chat-2"])
    assert {hit.session.key for hit in only} == {"chat-2"}
    with pytest.raises(memory.MemoryValidationError) as error:
        memory.message_search(namespace="user-1", query="Pimenta", sessions=[other])
    assert error.value.field == "sessions[0]"
    # The same word has unrelated hashes in two namespaces (keyed per namespace).
    one = set(MessageTerm.objects.filter(namespace="user-1").values_list("term", flat=True))
    two = set(MessageTerm.objects.filter(namespace="user-2").values_list("term", flat=True))
    assert one and two and not one & two


def test_no_plaintext_term_is_stored(db: Any) -> None:
    seed()
    columns = raw_rows("SELECT * FROM ttmemory_messageterm")
    assert columns and not any("Pimenta" in str(value) for row in columns for value in row)


def test_erase_clear_trim_and_rollback_remove_index_rows(db: Any, settings: Any) -> None:
    session = seed()
    memory.namespace_erase(namespace="user-1")
    assert index_rows("user-1") == 0

    session = seed()
    memory.session_clear(session=session)
    assert index_rows("user-1") == 0
    assert memory.message_search(namespace="user-1", query="Pimenta") == []

    settings.TTMEMORY = {**settings.TTMEMORY, "TRIM_MODE": "delete"}
    memory.message_add_many(session=session, messages=CHAT)
    assert messages_index_pending(namespace="user-1") == len(CHAT)  # what the job does
    result = memory.session_trim(session=session, max_tokens=30)
    assert result.mode == "delete" and result.removed
    indexed = set(MessageEntry.objects.filter(session=session).values_list("seq", flat=True))
    assert indexed and not indexed & set(result.removed_seqs)

    snapshot = memory.snapshot_create(session=session)
    memory.message_add(session=session, message=user("My passport number is in the drawer."))
    assert memory.message_search(namespace="user-1", query="passport drawer")
    memory.snapshot_rollback(session=session, snapshot=snapshot)
    assert memory.message_search(namespace="user-1", query="passport drawer") == []
    memory.snapshot_rollback(session=session, snapshot=memory.snapshot_list(session=session)[0])
    assert memory.message_search(namespace="user-1", query="passport drawer")[0].seq == 21


def test_hash_embedder_searches_by_keyword_and_makes_no_message_vectors(db: Any) -> None:
    with TestCase.captureOnCommitCallbacks(execute=True):
        seed()
    assert not MessageEntry.objects.exclude(embedding=None).exists()
    assert memory.message_search(namespace="user-1", query="sunny sunshine", window=0)


def test_vectors_are_made_after_commit_and_used(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_VECTOR_WEIGHT": 0.5}
    with TestCase.captureOnCommitCallbacks(execute=True):
        seed()
    entries = list(MessageEntry.objects.filter(namespace="user-1"))
    assert len(entries) == len(CHAT) and all(e.embedding is not None for e in entries)
    hits = memory.message_search(namespace="user-1", query="sunny sunshine", k=2, window=0)
    assert {hit.seq for hit in hits} == {9, 10}


def test_reindex_and_reembed_cover_the_index(db: Any, settings: Any) -> None:
    from ttmemory.services.episodes import messages_reembed, messages_reindex

    assert messages_reembed().done == 0  # keyword only (HashEmbedder): no vectors to make
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_VECTOR_WEIGHT": 0.5}
    session = seed()
    MessageEntry.objects.filter(session=session, seq__lte=4).update(index_version="old")
    MessageTerm.objects.filter(session=session, seq=7).delete()
    MessageEntry.objects.filter(session=session, seq=7).delete()
    before = memory.message_search(namespace="user-1", query="Pimenta hates", window=0)
    assert 7 not in [hit.seq for hit in before]
    stats = messages_reindex(batch_size=3)
    assert stats.done == len(CHAT)  # a stale entry rebuilds its whole session
    assert memory.message_search(namespace="user-1", query="Pimenta hates", window=0)[0].seq == 7
    assert messages_reembed().done == len(CHAT)
    assert messages_reembed().done == 0


def test_bad_arguments_are_refused(db: Any) -> None:
    for kwargs, field in [
        ({"query": " "}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "window": -1}, "window"),
        ({"query": "x", "window": 99}, "window"),
        ({"query": "x", "sessions": [3]}, "sessions[0]"),
    ]:
        with pytest.raises(memory.MemoryValidationError) as error:
            memory.message_search(namespace="user-1", **kwargs)
        assert error.value.field == field


def test_prompt_build_adds_past_conversations_when_asked(db: Any) -> None:
    seed(key="last-month")
    now = memory.session_open(namespace="user-1", key="today")
    memory.message_add(session=now, message=user("What did I say about the contract?"))
    plain = memory.prompt_build(session=now, max_tokens=2000)
    assert "past_conversations" not in plain.system
    built = memory.prompt_build(session=now, max_tokens=2000, episodes=2)
    section = built.sections["episodes"]
    assert section.startswith("<past_conversations>") and "landlord before March" in section
    assert "last-month#3" in section and "today#" not in section
    tight = memory.prompt_build(session=now, max_tokens=12, episodes=2)
    assert "past_conversations" not in tight.system


class NamesEmbedder(ConceptEmbedder):
    """Meaning in miniature: a word counts towards the concept it means, so a question about a
    dentist's name is near "Dr. Alvarez" (deterministic, unlike HashEmbedder's keyed vectors)."""

    model = "names-3"
    dimensions = 3
    CONCEPTS = ({"dentist", "teeth", "clinic"}, {"name", "called", "dr", "alvarez"})
    OTHER = 0.05


@pytest.mark.parametrize("vector_weight", [None, 1.0])
def test_the_answer_outranks_the_question_asking_for_it_and_its_reply(
    db: Any, settings: Any, vector_weight: float | None
) -> None:
    # With vectors (1.0: vectors alone), the question asked again is the query's closest vector
    # (similarity 1): it keeps a quarter of its vector score, as of its keyword score.
    if vector_weight is not None:
        settings.TTMEMORY = {
            **settings.TTMEMORY,
            "EMBEDDER": {"BACKEND": "tests.longterm.test_message_search.NamesEmbedder"},
            "MESSAGE_SEARCH_VECTOR_WEIGHT": vector_weight,
        }
    earlier = memory.session_open(namespace="user-9", key="march")
    later = memory.session_open(namespace="user-9", key="june")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(
            session=earlier,
            messages=[
                user("I finally found a new dentist near the office."),
                assistant("Great, what is their name?"),
                user("My dentist is Dr. Alvarez, on Rua Augusta."),
                assistant("Noted, Dr. Alvarez on Rua Augusta."),
                user("The weather has been lovely all week."),
                assistant("Enjoy it while it lasts!"),
            ],
        )
        memory.message_add_many(
            session=later,
            messages=[
                user("Good morning!"),
                assistant("Morning! How can I help?"),
                user("What was the name of my dentist?"),
                assistant("Let me check."),
            ],
        )
    question = "What was the name of my dentist?"

    hits = memory.message_search(namespace="user-9", query=question, k=5)

    ranked = [(hit.session.key, hit.seq) for hit in hits]
    assert ranked[0] == ("march", 3), ranked  # "My dentist is Dr. Alvarez"
    asked = ranked.index(("june", 3)) if ("june", 3) in ranked else len(ranked)
    reply = ranked.index(("june", 4)) if ("june", 4) in ranked else len(ranked)
    assert asked > ranked.index(("march", 3)) and reply > ranked.index(("march", 3))
    assert reply > 0 and ("june", 4) not in ranked[:3]


def _searched(namespace: str, query: str) -> list[tuple[int, float, tuple[int, ...]]]:
    hits = memory.message_search(namespace=namespace, query=query, k=10)
    return [(hit.seq, hit.score, tuple(seq for seq, _ in hit.context)) for hit in hits]


def test_a_query_of_frequent_words_ranks_as_with_every_length_read(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``NEAR_LENGTHS_LIMIT`` postings the statement leaves the neighbours' lengths out
    and the best candidates' are read afterwards: the same hits, scores and context."""
    from ttmemory.longterm import episodes

    session = memory.session_open(namespace="user-1", key="busy")
    chat = []
    for n in range(90):  # "jacket" in 90 messages, of lengths that differ
        chat.append(user(f"My blue jacket {'is warm ' * (n % 7)}today, day {n}."))
        chat.append(assistant(f"Noted, day {n}{', the weather is fine' * (n % 3)}."))
    chat.append(user("The red jacket I lent to Ana came back from Lisbon."))
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=chat)
    monkeypatch.setattr(episodes, "NEAR_LENGTHS_LIMIT", 10**6)
    every_length = _searched("user-1", "jacket Lisbon Ana")
    calls: list[int] = []
    read = episodes.entry_lengths
    monkeypatch.setattr(
        episodes, "entry_lengths", lambda ns, keys: calls.append(1) or read(ns, keys)
    )
    monkeypatch.setattr(episodes, "NEAR_LENGTHS_LIMIT", 20)
    assert _searched("user-1", "jacket Lisbon Ana") == every_length
    assert calls == [1]  # the second statement ran: the path under test
    assert every_length[0][0] == len(chat)


def test_a_large_namespaces_statistics_kept_for_a_while_still_find_a_new_message(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BM25's N and mean length are kept for a while in large namespaces: a message indexed
    meanwhile is still found, its word's count never above the kept N."""
    from ttmemory.longterm import bm25, episodes

    monkeypatch.setattr(episodes, "STATS_CACHE_MIN_MESSAGES", 1)
    monkeypatch.setattr(episodes, "_stats", bm25.KeptStats())
    session = seed()
    assert _searched("user-1", "cat vet")[0][0] == 7
    kept_stats = episodes._stats.get("user-1")
    assert kept_stats is not None  # kept
    kept = kept_stats[0]
    later = [user(f"Zephyrine is a word in message {n}.") for n in range(kept + 5)]
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=later)
    hits = _searched("user-1", "zephyrine")
    assert len(hits) == 10 and all(score > 0 for _, score, _ in hits)
    assert episodes._stats.get("user-1") == kept_stats  # still the kept count
