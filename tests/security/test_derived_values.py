"""Derived values stored in clear reveal nothing without a key (issue 12, finding 2).

Each attack is the one reported: someone who can read the database (a leaked backup, a curious
operator) hashes guesses and compares them with what the tables hold. Each test first shows
the attack working on what the previous release stored, then failing on what is stored now.
An "old database" is written the way the previous release wrote it: one global blind-index
key, keyless BLAKE2b word vectors, no index marker.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import itertools
import json
import math
import os
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.conftest import raw_rows, user
from ttmemory import memory
from ttmemory.admin.selectors import fact_ids_matching
from ttmemory.checks import check_derived_values
from ttmemory.conf import app_settings
from ttmemory.crypto import decode_key_material
from ttmemory.fields import seal
from ttmemory.longterm import blind
from ttmemory.models import Fact, FactTerm, MemorySession
from ttmemory.services import reindex
from ttmemory.text import normalise_terms, normalise_text

pytestmark = pytest.mark.contract

DIMENSIONS = 384
SECRET = "Ada keeps her savings at Nordea and her card PIN is 4711"
# The attacker's 20-word dictionary: the secret's words (normalised, as any indexer would)
# among likely others.
FILLERS = ["bank", "dnb", "1234", "0000", "password", "loan", "mortgage", "cash", "oslo", "debt"]
DICTIONARY = sorted(set(normalise_terms(SECRET)) | {*FILLERS, "salary", "visa"})


# -- what the previous release did (copied here, so the attack does not depend on our code) --


def keyless_feature(feature: str) -> tuple[int, float]:
    """Bucket and sign of a word in the previous release's HashEmbedder (keyless BLAKE2b)."""
    value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return value % DIMENSIONS, 1.0 if (value >> 63) & 1 else -1.0


def keyless_vector(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    words = normalise_terms(text)
    for feature in words + [f"{a} {b}" for a, b in itertools.pairwise(words)]:
        bucket, sign = keyless_feature(feature)
        vector[bucket] += sign
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def old_key() -> bytes:
    return decode_key_material(app_settings.BLIND_INDEX_KEY)


def old_term_hash(term: str) -> int:
    digest = hmac.new(old_key(), b"t:" + term.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def old_text_hash(text: str) -> str:
    normal = normalise_text(text).encode()
    return hmac.new(old_key(), b"x:" + normal, hashlib.sha256).hexdigest()


def make_old(fact: Fact) -> None:
    """Rewrite ``fact``'s derived values exactly as the previous release stored them."""
    text = Fact.objects.get(pk=fact.pk).text
    terms: dict[int, int] = {}
    for term in normalise_terms(text):
        terms[old_term_hash(term)] = terms.get(old_term_hash(term), 0) + 1
    FactTerm.objects.filter(fact=fact).delete()
    FactTerm.objects.bulk_create(
        FactTerm(fact_id=fact.pk, namespace=fact.namespace, term=term, tf=tf)
        for term, tf in terms.items()
    )
    old = Fact.objects.get(pk=fact.pk)
    old.text_hash = old_text_hash(text)
    Fact.objects.filter(pk=fact.pk).update(
        text_hash=old.text_hash,
        text=seal(old, "text", text),  # the text is bound to its row's text_hash
        index_version="",
        embedding=keyless_vector(text),
        embedding_model=f"hash-{DIMENSIONS}",
        embedding_dim=DIMENSIONS,
    )


# -- what an attacker reads --------------------------------------------------------------


def stored_vector(fact: Fact) -> list[float]:
    (raw,) = raw_rows("SELECT embedding FROM ttmemory_fact WHERE id = %s", [fact.pk])[0]
    parsed: list[float] = Fact._meta.get_field("embedding").from_db_value(raw, None, connection)
    return parsed


def words_read_back(vector: list[float]) -> set[str]:
    """The dictionary words whose keyless bucket holds their sign in ``vector``."""
    found = set()
    for word in DICTIONARY:
        bucket, sign = keyless_feature(word)
        if vector[bucket] * sign > 0:
            found.add(word)
    return found


def order_read_back(vector: list[float], words: set[str]) -> set[tuple[str, str]]:
    """Pairs of recovered words whose keyless bigram bucket holds its sign: word order."""
    pairs = set()
    for a, b in itertools.permutations(sorted(words), 2):
        bucket, sign = keyless_feature(f"{a} {b}")
        if vector[bucket] * sign > 0:
            pairs.add((a, b))
    return pairs


# How much of the dictionary a keyed vector hands back by chance depends on the key (about 1
# key in 2,500 lets three words through): the statistical bound below is checked with this
# pinned test-only key, and what must hold for every key is checked over 50 random keys.
PINNED_BLIND_KEY = base64.urlsafe_b64encode(
    hashlib.sha256(b"ttmemory tests: the dictionary attack's pinned blind-index key").digest()
).decode()


def test_a_dictionary_reads_nothing_back_from_stored_vectors(db: Any, settings: Any) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "BLIND_INDEX_KEY": PINNED_BLIND_KEY}
    truth = set(normalise_terms(SECRET))
    assert truth < set(DICTIONARY) and len(DICTIONARY) == 20 and len(truth) == 8
    fact = memory.fact_remember(namespace="user-1", text=SECRET)
    assert stored_vector(fact) != keyless_vector(SECRET)

    # The attack works on the previous release's row: every word and their order come back.
    make_old(fact)
    old = stored_vector(fact)
    assert words_read_back(old) >= truth
    words = normalise_terms(SECRET)
    assert set(itertools.pairwise(words)) <= order_read_back(old, truth)

    # ttmemory_reembed replaces it with a keyed vector: the same attack now reads back no more
    # than chance (a word lands on a used bucket with the right sign about 1 time in 70).
    call_command("ttmemory_reembed", stdout=io.StringIO())
    new = stored_vector(fact)
    recovered = words_read_back(new)
    assert recovered != truth and len(recovered & truth) <= 2
    assert not set(itertools.pairwise(words)) <= order_read_back(new, truth)
    assert Fact.objects.get(pk=fact.pk).embedding_model.startswith(f"hash-{DIMENSIONS}-keyed-")


def test_with_any_key_the_stored_vector_is_keyed_and_never_gives_the_secret_back(
    db: Any, settings: Any
) -> None:
    truth = set(normalise_terms(SECRET))
    for n in range(50):
        key = base64.urlsafe_b64encode(os.urandom(32)).decode()
        settings.TTMEMORY = {**settings.TTMEMORY, "BLIND_INDEX_KEY": key}
        fact = memory.fact_remember(namespace=f"user-{n}", text=SECRET)
        vector = stored_vector(fact)
        assert vector != keyless_vector(SECRET), key
        assert words_read_back(vector) != truth, key
        assert not set(itertools.pairwise(normalise_terms(SECRET))) <= order_read_back(
            vector, truth
        ), key


def test_hashing_guesses_of_a_pin_matches_nothing_stored_with_a_snapshot(
    session: MemorySession,
) -> None:
    memory.message_add(session=session, message=user("My card PIN is 4711, keep it safe"))
    snapshot = memory.snapshot_create(session=session)
    # The attacker knows the payload's shape and everything around the PIN (ids, seqs,
    # roles, token counts and timestamps are stored in clear); only the PIN is guessed.
    template = json.dumps(
        snapshot.payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert template.count("4711") == 1

    guesses = {}
    for pin in (f"{n:04d}" for n in range(10_000)):
        guesses[hashlib.sha256(template.replace("4711", pin).encode()).hexdigest()] = pin
    # The previous release stored exactly this digest beside the payload: found at once.
    previous_checksum = hashlib.sha256(template.encode()).hexdigest()
    assert guesses[previous_checksum] == "4711"

    # Now no value of the snapshot's row is a digest of any guess (in hex or raw bytes).
    columns = [
        c.name
        for c in connection.introspection.get_table_description(
            connection.cursor(), "ttmemory_snapshot"
        )
    ]
    assert "checksum" not in columns
    (row,) = raw_rows("SELECT * FROM ttmemory_snapshot WHERE id = %s", [snapshot.pk])
    stored: list[str] = []
    for value in row:
        if isinstance(value, bytes | memoryview):
            stored.append(bytes(value).hex())
        else:
            stored.append(str(value))
    for value in stored:
        assert not any(digest in value for digest in guesses)
    # And a rollback still verifies the payload (GCM and its counters) and restores it.
    memory.message_add(session=session, message=user("later"))
    memory.snapshot_rollback(session=session, snapshot=snapshot)
    assert [m["content"] for m in memory.message_recent(session=session)] == [
        "My card PIN is 4711, keep it safe"
    ]


def test_the_same_word_and_text_hash_differently_in_each_namespace(db: Any) -> None:
    text = "Bob is allergic to peanuts"
    first = memory.fact_remember(namespace="user-1", text=text)
    second = memory.fact_remember(namespace="user-2", text=text)

    def postings(fact: Fact) -> set[int]:
        rows = raw_rows("SELECT term FROM ttmemory_factterm WHERE fact_id = %s", [fact.pk])
        return {int(term) for (term,) in rows}

    said, added = blind.fact_terms(text, namespace="user-1")  # and its slot's, kinds' words
    assert len(postings(first)) == len(set(said)) + len(added)
    assert not postings(first) & postings(second)
    hashes = raw_rows(
        "SELECT text_hash FROM ttmemory_fact WHERE id IN (%s, %s)", [first.pk, second.pk]
    )
    assert len({h for (h,) in hashes}) == 2
    # The previous release's global key gave one hash for both: frequency analysis across
    # tenants. No stored posting carries it now.
    every_posting = {int(t) for (t,) in raw_rows("SELECT term FROM ttmemory_factterm")}
    assert not every_posting & {old_term_hash(term) for term in normalise_terms(text)}
    # Each namespace still finds its own fact by keyword.
    for fact in (first, second):
        hits = memory.fact_recall(namespace=fact.namespace, query="peanut allergy", k=1).hits
        assert [hit.pk for hit, _ in hits] == [fact.pk]


OLD_FACTS = {
    "user-1": [
        "Ada is allergic to peanuts",
        "Ada prefers window seats on flights",
        "Ada's cat is called Pixel",
        "Ada lives in Oslo near the harbour",
    ],
    "user-2": [
        "Bob drinks his coffee black",
        "Bob plays the cello on Sundays",
        "Bob works as a structural engineer",
    ],
}
QUERIES = {
    "Ada is allergic to peanuts": "peanut allergy",
    "Ada prefers window seats on flights": "window seat",
    "Ada's cat is called Pixel": "cat name pixel",
    "Ada lives in Oslo near the harbour": "where does she live oslo",
    "Bob drinks his coffee black": "coffee",
    "Bob plays the cello on Sundays": "cello sundays",
    "Bob works as a structural engineer": "engineer job",
}


@pytest.fixture
def old_database(db: Any) -> dict[str, Fact]:
    """Seven facts in two namespaces, stored the way the previous release stored them."""
    facts = {}
    for namespace, texts in OLD_FACTS.items():
        for text in texts:
            fact = memory.fact_remember(namespace=namespace, text=text)
            make_old(fact)
            facts[text] = fact
    return facts


def keyword_hits(namespace: str, query: str) -> list[int]:
    result = memory.fact_recall(namespace=namespace, query=query, k=3)
    return [fact.pk for fact, _ in result.hits]


def assert_every_fact_found(facts: dict[str, Fact]) -> None:
    """Recall (first hit) and the admin's keyword search find each fact by its words."""
    for text, query in QUERIES.items():
        fact = facts[text]
        assert keyword_hits(fact.namespace, query)[0] == fact.pk, text
        word = text.split()[-1]  # the admin's search box: every word must match
        ids = fact_ids_matching(query=word, namespaces=[fact.namespace])
        assert fact.pk in set(Fact.objects.filter(pk__in=ids).values_list("pk", flat=True))


def test_every_old_fact_is_found_before_during_and_after_reindexing(
    old_database: dict[str, Fact],
) -> None:
    current = blind.fact_index_version()
    assert reindex.stale_facts().count() == 7

    def all_found() -> None:
        assert_every_fact_found(old_database)

    all_found()  # old postings only (old vectors are of another model: never compared)

    # Interrupted after the first batch: half old, half new, and still every fact is found.
    class Interrupted(Exception):
        pass

    def stop(count: int) -> None:
        raise Interrupted

    with pytest.raises(Interrupted):
        reindex.facts_reindex(batch_size=3, on_batch=stop)
    assert reindex.stale_facts().count() == 4
    all_found()

    out = io.StringIO()
    call_command("ttmemory_reindex", "--batch-size", "2", stdout=out)
    assert "4/4" in out.getvalue() and "100%" in out.getvalue()
    assert "done: 4 facts reindexed in 2 batches" in out.getvalue()
    assert set(Fact.objects.values_list("index_version", flat=True)) == {current}
    old_hashes = {old_term_hash(t) for text in QUERIES for t in normalise_terms(text)}
    assert not set(FactTerm.objects.values_list("term", flat=True)) & old_hashes
    all_found()
    assert "done: 0 facts reindexed" in _reindex()

    call_command("ttmemory_reembed", stdout=io.StringIO())
    for text, query in QUERIES.items():
        fact = old_database[text]
        result = memory.fact_recall(namespace=fact.namespace, query=query, k=1)
        assert result.mode == "hybrid" and result.hits[0][0].pk == fact.pk
        assert result.hits[0][0].text == text


def _reindex(*args: str) -> str:
    out = io.StringIO()
    call_command("ttmemory_reindex", *args, stdout=out)
    return out.getvalue()


def test_remembering_an_old_fact_again_updates_it_instead_of_adding_one(
    old_database: dict[str, Fact],
) -> None:
    fact = old_database["Ada is allergic to peanuts"]
    again = memory.fact_remember(namespace="user-1", text="ada is ALLERGIC to peanuts")
    assert again.pk == fact.pk
    assert Fact.objects.filter(namespace="user-1").count() == 4
    stored = Fact.objects.get(pk=fact.pk)
    assert stored.index_version == blind.fact_index_version()
    assert stored.text_hash == blind.text_hash(stored.text, namespace="user-1")
    assert "done: 6 facts reindexed" in _reindex()


def test_dry_run_counts_facts_per_index_and_changes_nothing(
    old_database: dict[str, Fact],
) -> None:
    out = _reindex("--dry-run")
    assert "first release (one key for all namespaces): 7 facts, stale" in out
    assert "dry run: 7 facts would be reindexed" in out
    assert reindex.stale_facts().count() == 7


def test_a_new_blind_key_makes_facts_stale_and_reindexing_finds_them_again(
    db: Any, settings: Any
) -> None:
    facts = [memory.fact_remember(namespace="user-1", text=text) for text in OLD_FACTS["user-1"]]
    new_key = base64.urlsafe_b64encode(os.urandom(32)).decode()
    settings.TTMEMORY = {**settings.TTMEMORY, "BLIND_INDEX_KEY": new_key}
    assert reindex.stale_facts().count() == 4
    # Same text remembered under the new key before reindexing: a second row, kept findable.
    twin = memory.fact_remember(namespace="user-1", text=OLD_FACTS["user-1"][0])
    assert twin.pk != facts[0].pk

    out = _reindex()

    assert "done: 4 facts reindexed" in out and "1 facts have the same text" in out
    for text in OLD_FACTS["user-1"]:
        assert keyword_hits("user-1", QUERIES[text])  # found by keyword under the new key
    assert {facts[0].pk, twin.pk} <= set(keyword_hits("user-1", "peanut allergy"))


def test_the_checks_warn_until_the_upgrade_is_done(old_database: dict[str, Fact]) -> None:
    ids = {message.id for message in check_derived_values(databases=["default"])}
    assert ids == {"ttmemory.W040", "ttmemory.W041"}
    _reindex()
    call_command("ttmemory_reembed", stdout=io.StringIO())
    assert check_derived_values(databases=["default"]) == []


@pytest.mark.django_db(transaction=True)
def test_migrating_a_database_of_the_previous_release_loses_nothing() -> None:
    session = memory.session_open(namespace="user-1", key="chat")
    memory.message_add(session=session, message=user("My card PIN is 4711"))
    snapshot = memory.snapshot_create(session=session)
    memory.message_add(session=session, message=user("later"))
    facts = {
        text: memory.fact_remember(namespace=namespace, text=text)
        for namespace, texts in OLD_FACTS.items()
        for text in texts
    }
    canonical = json.dumps(
        snapshot.payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    before = [("ttmemory", "0007_ciphertext_row_binding")]  # the state before 0008
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(before)
        # Written as the previous release wrote it: checksum, global-key index, keyless vectors.
        old = executor.loader.project_state(before).apps
        old_snapshot = old.get_model("ttmemory", "Snapshot")
        old_fact = old.get_model("ttmemory", "Fact")
        old_term = old.get_model("ttmemory", "FactTerm")
        # Migrating back recomputed the checksum the previous release needs to restore it.
        checksum = hashlib.sha256(canonical.encode()).hexdigest()
        assert old_snapshot.objects.get(pk=snapshot.pk).checksum == checksum
        for text, fact in facts.items():
            old_term.objects.filter(fact_id=fact.pk).delete()
            counts: dict[int, int] = {}
            for term in normalise_terms(text):
                counts[old_term_hash(term)] = counts.get(old_term_hash(term), 0) + 1
            old_term.objects.bulk_create(
                old_term(fact_id=fact.pk, namespace=fact.namespace, term=term, tf=tf)
                for term, tf in counts.items()
            )
            stored = old_fact.objects.get(pk=fact.pk)
            stored.text_hash = old_text_hash(text)
            old_fact.objects.filter(pk=fact.pk).update(
                text_hash=stored.text_hash,
                text=seal(stored, "text", text),  # the text is bound to its row's text_hash
                embedding=keyless_vector(text),
                embedding_model=f"hash-{DIMENSIONS}",
            )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    assert reindex.stale_facts().count() == len(facts)
    assert_every_fact_found(facts)
    for text, fact in facts.items():
        assert Fact.objects.get(pk=fact.pk).text == text
    memory.snapshot_rollback(session=session, snapshot=snapshot)
    assert [m["content"] for m in memory.message_recent(session=session)] == ["My card PIN is 4711"]

    _reindex()
    call_command("ttmemory_reembed", stdout=io.StringIO())
    assert reindex.stale_facts().count() == 0
    assert_every_fact_found(facts)
    assert check_derived_values(databases=["default"]) == []
