"""The episodic index off the append path: message_search is complete and correct before the
message_index job has run, the job catches up without racing deletes, and both agree."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import TestCase

from tests.conftest import tool_call, user
from tests.longterm.test_message_search import CHAT
from ttmemory import memory
from ttmemory.models import MemorySession, MessageEntry, MessageTerm
from ttmemory.selectors import episodes as selector_episodes
from ttmemory.services import episodes as episodes_service
from ttmemory.services.episodes import messages_index_pending
from ttmemory.services.sessions import message_pop

pytestmark = pytest.mark.contract


def entries(session: MemorySession) -> list[int]:
    return sorted(MessageEntry.objects.filter(session_id=session.pk).values_list("seq", flat=True))


def search(query: str, **kwargs: Any) -> list[tuple[str, int, float]]:
    hits = memory.message_search(namespace="user-1", query=query, **kwargs)
    return [(hit.session.key, hit.seq, round(hit.score, 9)) for hit in hits]


def test_an_appended_message_is_found_before_it_is_indexed(db: Any) -> None:
    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(session=session, messages=CHAT)  # in the test's transaction:
    memory.message_add(session=session, message=user("The spare key is under the blue pot."))
    assert entries(session) == []  # ... the job queued at commit has not run
    hits = memory.message_search(namespace="user-1", query="where is the spare key", k=1)
    assert hits[0].seq == 11 and hits[0].message["content"].startswith("The spare key")
    assert [seq for seq, _ in hits[0].context] == [9, 10]


def test_results_are_the_same_before_and_after_the_job(db: Any) -> None:
    one = memory.session_open(namespace="user-1", key="one")
    two = memory.session_open(namespace="user-1", key="two")
    with TestCase.captureOnCommitCallbacks(execute=True):  # indexed by the job
        memory.message_add_many(session=one, messages=CHAT)
    memory.message_add_many(session=two, messages=CHAT[:6])  # pending
    memory.message_add(session=two, message=user("Maria called about the contract."))
    memory.message_add_many(session=one, messages=[user("Pimenta and Maria met at the vet.")])
    assert entries(one) == list(range(1, 11)) and entries(two) == []
    queries = ["Maria contract", "Pimenta vet", "sunny day", "landlord March Porto flat"]
    before = {q: search(q, k=8) for q in queries}
    before_alone = {q: search(q, k=8, window=0, sessions=["one"]) for q in queries}
    assert any(key == "one" and seq == 11 for key, seq, _ in before["Pimenta vet"])
    assert messages_index_pending(session_id=two.pk) == 8  # and the rest of the namespace
    assert messages_index_pending(namespace="user-1") == 0  # idempotent
    assert entries(one) == list(range(1, 12)) and entries(two) == list(range(1, 8))
    assert {q: search(q, k=8) for q in queries} == before
    assert {q: search(q, k=8, window=0, sessions=["one"]) for q in queries} == before_alone


def test_the_first_append_and_every_nth_queue_the_job(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_INDEX_EVERY": 4}
    session = memory.session_open(namespace="user-1", key="c")
    for n, expected in [(1, [1]), (2, [1]), (3, [1]), (4, [1, 2, 3, 4]), (5, [1, 2, 3, 4])]:
        with TestCase.captureOnCommitCallbacks(execute=True):
            memory.message_add(session=session, message=user(f"note number {n} about otters"))
        assert entries(session) == expected
    assert [seq for _, seq, _ in search("otters", k=10, window=0)] == [1, 2, 3, 4, 5]


def test_a_rollback_hides_and_restores_unindexed_messages(db: Any) -> None:
    session = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=CHAT)
    snapshot = memory.snapshot_create(session=session)
    memory.message_add(session=session, message=user("My passport is in the drawer."))
    assert [seq for _, seq, _ in search("passport drawer", window=0)] == [11]
    memory.snapshot_rollback(session=session, snapshot=snapshot)
    assert search("passport drawer") == []
    safety = memory.snapshot_list(session=session)[0]
    with TestCase.captureOnCommitCallbacks(execute=True) as queued:  # the undo
        memory.snapshot_rollback(session=session, snapshot=safety)
    assert queued  # the restore queued the catch-up, which indexed the restored message
    assert entries(session) == list(range(1, 12))
    assert [seq for _, seq, _ in search("passport drawer", window=0)] == [11]


def test_the_job_never_indexes_what_was_deleted_before_it_ran(db: Any) -> None:
    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(session=session, messages=[user("walrus tusk"), user("zebra mane")])
    message_pop(session=session)
    assert search("zebra mane") == []
    assert messages_index_pending(session_id=session.pk) == 1
    assert entries(session) == [1]
    assert not MessageTerm.objects.filter(session_id=session.pk, seq=2).exists()

    other = memory.session_open(namespace="user-1", key="gone")
    memory.message_add(session=other, message=user("narwhal horn"))
    memory.namespace_erase(namespace="user-1")
    assert messages_index_pending(session_id=other.pk) == 0
    assert memory.message_search(namespace="user-1", query="narwhal horn") == []
    assert not MessageEntry.objects.filter(namespace="user-1").exists()


def while_the_job_hashes(monkeypatch: Any, action: Any) -> None:
    """Run ``action`` once, after the job read and hashed a batch outside the session's lock
    and before it takes the lock to write it (what another writer may do meanwhile)."""
    real = episodes_service._index_rows
    pending = [action]

    def hashed(session: MemorySession, messages: Any, **options: Any) -> Any:
        rows = real(session, messages, **options)
        while pending:
            pending.pop()()
        return rows

    monkeypatch.setattr(episodes_service, "_index_rows", hashed)


def test_a_message_deleted_while_the_job_hashes_is_not_indexed(db: Any, monkeypatch: Any) -> None:
    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(session=session, messages=[user("walrus tusk"), user("zebra mane")])
    while_the_job_hashes(monkeypatch, lambda: message_pop(session=session))
    assert messages_index_pending(session_id=session.pk) == 1
    assert entries(session) == [1]
    assert not MessageTerm.objects.filter(session_id=session.pk, seq=2).exists()
    assert search("zebra mane") == []


def test_a_message_restored_while_the_job_hashes_is_indexed(db: Any, monkeypatch: Any) -> None:
    session = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=CHAT)
    snapshot = memory.snapshot_create(session=session)
    memory.message_add(session=session, message=user("My passport is in the drawer."))
    memory.snapshot_rollback(session=session, snapshot=snapshot)  # #11 gone, not indexed
    safety = memory.snapshot_list(session=session)[0]
    # The job reads nothing past #10; the undo restores #11 before it writes.
    while_the_job_hashes(
        monkeypatch, lambda: memory.snapshot_rollback(session=session, snapshot=safety)
    )
    messages_index_pending(session_id=session.pk)
    assert entries(session) == list(range(1, 12))
    assert MessageTerm.objects.filter(session_id=session.pk, seq=11).exists()
    assert messages_index_pending(session_id=session.pk) == 0


def test_a_restore_behind_the_mark_while_the_job_hashes_is_indexed(
    db: Any, monkeypatch: Any
) -> None:
    session = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=session, messages=CHAT)
    snapshot = memory.snapshot_create(session=session)
    message_pop(session=session)  # #10 and its index rows go; the mark stays at 10
    memory.message_add(session=session, message=user("My passport is in the drawer."))
    # The job reads #11; the rollback deletes it and restores #10, moving the mark back to 9.
    while_the_job_hashes(
        monkeypatch, lambda: memory.snapshot_rollback(session=session, snapshot=snapshot)
    )
    messages_index_pending(session_id=session.pk)
    assert entries(session) == list(range(1, 11))
    assert not MessageTerm.objects.filter(session_id=session.pk, seq=11).exists()
    assert [seq for _, seq, _ in search("passport drawer", window=0)] == []


def test_messages_without_text_count_as_indexed(db: Any) -> None:
    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(
        session=session,
        messages=[
            user("look up the weather in Oslo"),
            tool_call(["call_1"]),
            {"role": "tool", "tool_call_id": "call_1", "content": "rain, 4 degrees"},
        ],
    )
    assert sorted(seq for _, seq, _ in search("Oslo rain", window=0)) == [1, 3]
    assert messages_index_pending(namespace="user-1") == 3  # read; two had text
    assert entries(session) == [1, 3]
    session.refresh_from_db()
    assert session.indexed_upto_seq == 3
    assert sorted(seq for _, seq, _ in search("Oslo rain", window=0)) == [1, 3]


def test_with_the_index_off_nothing_new_is_searchable(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_INDEX": False}
    session = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=session, message=user("the otter holds hands"))
    assert search("otter") == [] and entries(session) == []
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_INDEX": True}
    assert [seq for _, seq, _ in search("otter", window=0)] == [1]


def test_a_search_scores_the_newest_unindexed_up_to_the_limit_and_queues_the_job(
    db: Any, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_PENDING_LIMIT": 3}
    selector_episodes._catch_up_at.clear()  # the per-process throttle of earlier tests
    old = memory.session_open(namespace="user-1", key="old")
    new = memory.session_open(namespace="user-1", key="new")
    memory.message_add_many(
        session=old, messages=[user(f"otters note {n} from the first chat") for n in range(4)]
    )
    memory.message_add_many(
        session=new, messages=[user(f"otters note {n} from the second chat") for n in range(2)]
    )
    assert entries(old) == [] and entries(new) == []  # the jobs queued at commit never ran
    with TestCase.captureOnCommitCallbacks() as queued:
        found = search("otters note", k=10, window=0)
    # The newest session's two, then the newest one of the other: three scored, three waiting.
    assert sorted((key, seq) for key, seq, _ in found) == [("new", 1), ("new", 2), ("old", 4)]
    assert len(queued) == 1  # the catch-up
    with TestCase.captureOnCommitCallbacks() as again:
        search("otters note", k=10, window=0)
    assert again == []  # queued once per namespace for a while, not on every search
    for callback in queued:
        callback()
    assert entries(old) == [1, 2, 3, 4] and entries(new) == [1, 2]
    assert len(search("otters note", k=10, window=0)) == 6


def test_within_the_limit_a_lagging_index_gives_the_same_results(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_PENDING_LIMIT": len(CHAT)}
    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(session=session, messages=CHAT)
    with TestCase.captureOnCommitCallbacks() as queued:
        before = search("Maria contract landlord", k=5)
    assert queued == []  # every unindexed message was scored: nothing to catch up
    messages_index_pending(namespace="user-1")
    assert search("Maria contract landlord", k=5) == before


def test_a_term_in_more_messages_than_the_limit_still_finds_its_oldest_message(
    db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``MESSAGE_SEARCH_TERM_LIMIT`` the messages scored are the best by every posting of
    the query's words (``FREQUENT_CANDIDATES`` of them), not the newest: the oldest message,
    the one holding both words, is found first even when only one message is picked."""
    from ttmemory.longterm import episodes

    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_TERM_LIMIT": 3}
    session = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(
            session=session,
            messages=[user("the zebra and the otters")]
            + [user(f"otters again, note {n}") for n in range(5)],
        )
    assert entries(session) == [1, 2, 3, 4, 5, 6]
    assert sorted(seq for _, seq, _ in search("otters", k=10, window=0)) == [1, 2, 3, 4, 5, 6]
    found = search("zebra otters", k=10, window=0)
    assert found[0][1] == 1 and {seq for _, seq, _ in found} == {1, 2, 3, 4, 5, 6}
    monkeypatch.setattr(episodes, "FREQUENT_CANDIDATES", 1)
    assert [seq for _, seq, _ in search("zebra otters", k=10, window=0)] == [1]


def test_a_word_in_most_messages_scores_the_messages_picked_but_picks_none(
    db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rarest words pick the messages scored (``FREQUENT_CANDIDATE_POSTINGS``): past that
    budget a common word adds to the score of the messages picked, and no message holding only
    it is read; when no word is rare enough, a frequent word's newest messages are scored."""
    from ttmemory.longterm import episodes

    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_TERM_LIMIT": 2}
    session = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(
            session=session,
            messages=[user(f"otters again, note {n}") for n in range(4)]
            + [user("the zebra and the otters"), user("a zebra alone")],
        )
    both = {seq: score for _, seq, score in search("zebra otters", k=10, window=0)}
    assert sorted(both) == [1, 2, 3, 4, 5, 6]
    monkeypatch.setattr(episodes, "FREQUENT_CANDIDATE_POSTINGS", 2)
    picked = {seq: score for _, seq, score in search("zebra otters", k=10, window=0)}
    assert picked == {5: both[5], 6: both[6]}  # zebra's messages, otters' weight included
    # No word rare enough to pick: a frequent word's newest messages are scored.
    monkeypatch.setattr(episodes, "FREQUENT_CANDIDATE_POSTINGS", 1)
    assert sorted(seq for _, seq, _ in search("otters", k=10, window=0)) == [4, 5]


def test_an_append_indexes_its_own_session_and_leaves_other_tails_to_the_search(db: Any) -> None:
    # Session "idle" stops short of its next trigger: its tail stays unindexed. Another
    # session's append then runs the job for that session only, so an append never pays for
    # the namespace's other tails; a search still finds the tail (scored from the message).
    idle = memory.session_open(namespace="user-1", key="idle")
    busy = memory.session_open(namespace="user-1", key="busy")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=idle, message=user("hello"))  # first message: indexed
    memory.message_add(session=idle, message=user("The boat is moored at pier nine."))
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(session=busy, messages=CHAT)
    assert entries(busy) == list(range(1, 11))
    assert entries(idle) == [1]  # not swept by busy's job
    hits = memory.message_search(namespace="user-1", query="where is the boat moored", k=1)
    assert (hits[0].session.key, hits[0].seq) == ("idle", 2)
    assert messages_index_pending(session_id=busy.pk) == 1  # the catch-up sweep reaches it
    assert entries(idle) == [1, 2]


def test_kept_postings_of_unindexed_messages_follow_pops_and_appends(db: Any) -> None:
    """The postings of unindexed messages are kept between searches (by message id): a second
    search scores the same, a message popped since is no longer found by its words, and the
    one appended after it is found by its own."""
    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(session=session, messages=CHAT)  # pending: the job has not run
    memory.message_add(session=session, message=user("The spare key is under the blue pot."))
    first = memory.message_search(namespace="user-1", query="spare key blue pot", k=1)
    again = memory.message_search(namespace="user-1", query="spare key blue pot", k=1)
    assert [(h.seq, h.score) for h in first] == [(h.seq, h.score) for h in again]
    assert first[0].seq == 11
    message_pop(session=session)
    memory.message_add(session=session, message=user("The spare tyre is in the garage."))
    assert memory.message_search(namespace="user-1", query="blue pot", k=3, window=0) == []
    hits = memory.message_search(namespace="user-1", query="spare tyre garage", k=1)
    assert hits[0].seq == 12 and hits[0].message["content"].endswith("garage.")


class _Undone(Exception):
    pass


def test_a_message_id_given_again_after_a_rollback_is_searched_by_its_own_words(db: Any) -> None:
    """SQLite gives a rolled-back insert's id to the next message: postings kept for the first
    (searched inside the transaction) are never read for the second."""
    from django.db import transaction

    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(session=session, messages=CHAT)  # pending: the job has not run
    with pytest.raises(_Undone), transaction.atomic():
        memory.message_add(session=session, message=user("The spare key is under the blue pot."))
        assert memory.message_search(namespace="user-1", query="blue pot", k=1)[0].seq == 11
        raise _Undone
    memory.message_add(session=session, message=user("The spare tyre is in the garage."))
    assert memory.message_search(namespace="user-1", query="blue pot", k=3, window=0) == []
    hits = memory.message_search(namespace="user-1", query="tyre garage", k=1)
    assert hits[0].message["content"].endswith("garage.")


def test_a_message_indexed_between_the_index_read_and_the_tail_read_is_still_found(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index job (another thread or process) may commit a message's postings and move its
    session's mark after a search read the index and before it read the unindexed tail: the
    message is then in neither read unless the tail takes it as still unindexed."""
    from ttmemory.longterm import episodes

    session = memory.session_open(namespace="user-1", key="c")
    memory.message_add_many(session=session, messages=CHAT)  # pending: the job has not run
    memory.message_add(session=session, message=user("The spare key is under the blue pot."))
    tail = episodes._pending

    def indexed_meanwhile(*args: Any, **kwargs: Any) -> Any:
        messages_index_pending(session_id=session.pk)  # commits between the two reads
        return tail(*args, **kwargs)

    monkeypatch.setattr(episodes, "_pending", indexed_meanwhile)
    hits = memory.message_search(namespace="user-1", query="spare key blue pot", k=1)
    assert [hit.seq for hit in hits] == [11]
    monkeypatch.setattr(episodes, "_pending", tail)
    indexed = memory.message_search(namespace="user-1", query="spare key blue pot", k=1)
    assert [(hit.seq, hit.score) for hit in hits] == [(hit.seq, hit.score) for hit in indexed]


def test_a_frequent_terms_weight_counts_every_message_though_its_postings_are_cut(
    db: Any, settings: Any
) -> None:
    """Past ``MESSAGE_SEARCH_TERM_LIMIT`` a term's postings are read for the messages picked
    (``FREQUENT_CANDIDATES``, all of them here), and its document frequency still counts every
    message: each message scores as it does when every posting is read in one go."""
    session = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(
            session=session,
            messages=[user("the zebra and the otters"), user("a quiet day")]
            + [user(f"otters again, note {n}") for n in range(6)]
            + [user("no animals here")],
        )
    every = {seq: score for _, seq, score in search("otters", k=10, window=0)}
    assert sorted(every) == [1, 3, 4, 5, 6, 7, 8]
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_TERM_LIMIT": 3}
    cut = {seq: score for _, seq, score in search("otters", k=10, window=0)}
    assert cut == every  # the oldest too, each scored as before


def test_a_large_namespace_keeps_a_frequent_terms_count_for_a_while(
    db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a large namespace a frequent term's count is kept as its N is (``bm25.KeptStats``):
    the second search makes no count statement; a message indexed meanwhile is still found."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ttmemory.longterm import episodes

    monkeypatch.setattr(episodes, "STATS_CACHE_MIN_MESSAGES", 1)
    settings.TTMEMORY = {**settings.TTMEMORY, "MESSAGE_SEARCH_TERM_LIMIT": 2}
    session = memory.session_open(namespace="user-1", key="c")
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add_many(
            session=session, messages=[user(f"otters again, note {n}") for n in range(5)]
        )

    def counts() -> int:
        with CaptureQueriesContext(connection) as seen:
            assert {seq for _, seq, _ in search("otters", k=10, window=0)} == {1, 2, 3, 4, 5}
        return sum("GROUP BY" in q["sql"] and "COUNT(*)" in q["sql"] for q in seen.captured_queries)

    assert counts() == 1
    assert counts() == 0  # kept
    with TestCase.captureOnCommitCallbacks(execute=True):
        memory.message_add(session=session, message=user("otters once more"))
    assert 6 in {seq for _, seq, _ in search("otters", k=10, window=0)}
