"""TTMemoryStore, modelled on LangGraph's own store tests (libs/checkpoint-postgres/tests/
test_store.py: batch order, batch ops, basic ops, namespaces, search, numeric filters, search
by meaning with fields, TTL, non-ASCII), plus what ttmemory adds: isolation between ttmemory
namespaces, encryption at rest, the same memories through fact_recall, erasure."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    PutOp,
    SearchOp,
)

from tests.conftest import raw_rows
from ttmemory import memory
from ttmemory.exceptions import DecryptionError
from ttmemory.integrations.langgraph import TTMemoryStore
from ttmemory.models import Fact, GraphStoreItem

pytestmark = pytest.mark.contract


@pytest.fixture
def store(db: Any) -> TTMemoryStore:
    """A store bound to one ttmemory namespace: every LangGraph tuple is a path inside it."""
    return TTMemoryStore(namespace="user-1", ttl={"default_ttl": None, "refresh_on_read": True})


def test_batch_order(store: TTMemoryStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(namespace=("test", "foo"), key="key1"),
            PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
            SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(namespace=("test",), key="key3"),
        ]
    )
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"}
    assert results[0].key == "key1" and results[0].namespace == ("test", "foo")
    assert results[1] is None
    assert [item.key for item in results[2]] == ["key1"]
    assert set(results[3]) == {("test", "foo"), ("test", "bar")}
    assert results[4] is None

    reordered = store.batch(
        [
            SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
            GetOp(namespace=("test", "bar"), key="key2"),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
            PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
            GetOp(namespace=("test", "foo"), key="key1"),
        ]
    )
    assert len(reordered[0]) == 2
    assert reordered[1].value == {"data": "value2"}
    assert reordered[3] is None
    assert reordered[4].value == {"data": "value1"}
    assert store.get(("test",), "key3").value == {"data": "value3"}  # the put ran


def test_batch_put_ops_and_delete(store: TTMemoryStore) -> None:
    results = store.batch(
        [
            PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
            PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
            PutOp(namespace=("test",), key="key3", value=None),  # a delete of nothing
        ]
    )
    assert results == [None, None, None]
    assert store.get(("test",), "key1").value == {"data": "value1"}
    assert store.get(("test",), "key2").value == {"data": "value2"}
    assert store.get(("test",), "key3") is None


def test_batch_search_ops(store: TTMemoryStore) -> None:
    for namespace, key, value in [
        (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ]:
        store.put(namespace, key, value)
    tagged, first_two, foo = store.batch(
        [
            SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
            SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
            SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
        ]
    )
    assert sorted(item.key for item in tagged) == ["key1", "key2"]
    assert len(first_two) == 2
    assert [(item.namespace, item.key) for item in foo] == [(("test", "foo"), "key1")]


def test_basic_store_ops(store: TTMemoryStore) -> None:
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item.namespace == namespace and item.key == "doc1"
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}

    store.put(namespace, "doc1", {"title": "Updated Document", "content": "Hello, Updated!"})
    updated = store.get(namespace, "doc1")
    assert updated.value == {"title": "Updated Document", "content": "Hello, Updated!"}
    assert updated.updated_at > item.updated_at and updated.created_at == item.created_at

    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None


def test_list_namespaces(store: TTMemoryStore) -> None:
    namespaces = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]
    for namespace in namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})
    assert sorted(store.list_namespaces()) == sorted(namespaces)
    test_prefixed = store.list_namespaces(prefix=["test"])
    assert len(test_prefixed) == 4 and all(ns[0] == "test" for ns in test_prefixed)
    public = store.list_namespaces(suffix=["public"])
    assert sorted(public) == sorted(ns for ns in namespaces if ns[-1] == "public")
    assert sorted(store.list_namespaces(prefix=["test", "*", "public"])) == [
        ("test", "documents", "public"),
        ("test", "images", "public"),
    ]
    assert sorted(store.list_namespaces(max_depth=2)) == [
        ("prod", "documents"),
        ("test", "documents"),
        ("test", "images"),
    ]
    assert len(store.list_namespaces(limit=3)) == 3
    assert len(store.list_namespaces(limit=3, offset=4)) == 2
    for namespace in namespaces:
        store.delete(namespace, "dummy")
    assert store.list_namespaces() == []


def test_namespace_elements_with_slashes_and_percent_stay_apart(store: TTMemoryStore) -> None:
    store.put(("a/b",), "k", {"n": 1})
    store.put(("a", "b"), "k", {"n": 2})
    store.put(("a%2Fb",), "k", {"n": 3})
    assert store.get(("a/b",), "k").value == {"n": 1}
    assert store.get(("a", "b"), "k").value == {"n": 2}
    assert store.get(("a%2Fb",), "k").value == {"n": 3}
    assert sorted(store.list_namespaces()) == [("a", "b"), ("a%2Fb",), ("a/b",)]
    assert [item.value for item in store.search(("a",))] == [{"n": 2}]


def test_search_filters_and_pagination(store: TTMemoryStore) -> None:
    for namespace, key, value in [
        (("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["x"]}),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["y"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["z"]}),
    ]:
        store.put(namespace, key, value)
    assert len(store.search(["test"])) == 3
    docs = store.search(["test", "docs"])
    assert len(docs) == 2 and all(item.namespace == ("test", "docs") for item in docs)
    alice = store.search(["test"], filter={"author": "Alice"})
    assert sorted(item.key for item in alice) == ["doc1", "img1"]
    assert len(store.search(["test"], limit=2)) == 2
    assert len(store.search(["test"], offset=2)) == 1
    assert [i.key for i in store.search(["test"], filter={"tags": ["y"]})] == ["doc2"]


def test_numeric_comparison_filters(store: TTMemoryStore) -> None:
    namespace = ("test", "scores")
    for key, score in [("a", 2), ("b", 9), ("c", 10), ("d", 11)]:
        store.put(namespace, key, {"score": score})

    def scores(filter: dict[str, Any]) -> list[Any]:
        return sorted(item.value["score"] for item in store.search(namespace, filter=filter))

    assert scores({"score": {"$gte": 10}}) == [10, 11]
    assert scores({"score": {"$gt": 9}}) == [10, 11]
    assert scores({"score": {"$lt": 10}}) == [2, 9]
    assert scores({"score": {"$lte": 9}}) == [2, 9]
    assert scores({"score": {"$ne": 9}}) == [2, 10, 11]
    store.put(namespace, "e", {"score": 9.5})
    assert scores({"score": {"$gt": 9}}) == [9.5, 10, 11]


def test_search_by_query_is_hybrid_recall(store: TTMemoryStore) -> None:
    docs = [
        ("doc1", {"text": "short text"}),
        ("doc2", {"text": "longer text document"}),
        ("doc3", {"text": "longest text document here"}),
        ("doc4", {"description": "text in description field"}),
        ("doc5", {"content": "nothing relevant at all"}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)
    results = store.search(("test",), query="text document")
    keys = [r.key for r in results]
    assert keys[:2] in (["doc2", "doc3"], ["doc3", "doc2"])
    assert "doc5" not in keys  # matched nothing: left out, like fact_recall
    assert all(r.score is not None and r.score > 0 for r in results)
    assert results == sorted(results, key=lambda r: -r.score)
    assert [r.key for r in store.search(("test",), query="document", limit=1, offset=1)] == [
        keys[1]
    ]


# The hashing embedder's key (derived from the blind-index key, random per run) decides which
# words share a bucket: for about one key in 25 a word of the new texts below meets a query word
# there. The test pins a key with no such collision, so what it sees is the rule: no stored
# word matches, nothing comes back.
PINNED_BLIND_KEY = base64.urlsafe_b64encode(
    hashlib.sha256(b"ttmemory tests: the langgraph store's pinned blind-index key").digest()
).decode()


def test_update_reindexes_and_index_false_is_not_searchable(
    store: TTMemoryStore, settings: Any
) -> None:
    settings.TTMEMORY = {**settings.TTMEMORY, "BLIND_INDEX_KEY": PINNED_BLIND_KEY}
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    assert store.search(("test",), query="Zany Xerxes")[0].key == "doc1"
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    # The old text's words no longer find doc1: its index follows the update.
    assert store.search(("test",), query="Zany Xerxes") == []
    assert "doc1" in [r.key for r in store.search(("test",), query="dogs")]
    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert "doc4" not in [r.key for r in store.search(("test",), query="new text about dogs")]
    assert "doc4" in [r.key for r in store.search(("test",))]  # still listed and filtered
    # The old text's fact went with the update; no fact is left without its item.
    texts = sorted(f.text for f in Fact.objects.filter(namespace="user-1"))
    assert texts == ["new text about dogs", "something about dogs"]


def test_search_by_query_with_filters(store: TTMemoryStore) -> None:
    for key, value in [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]:
        store.put(("test",), key, value)
    results = store.search(("test",), query="apple", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc1"]
    results = store.search(("test",), query="car", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc2"]
    results = store.search(
        ("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"}
    )
    assert [r.key for r in results] == ["doc3"]


def test_search_edge_cases(store: TTMemoryStore) -> None:
    store.put(("test",), "doc1", {"text": "test document"})
    assert len(store.search(("test",), query="")) == 1  # no query: a listing
    assert len(store.search(("test",), query=None)) == 1
    assert len(store.search(("test",), query="test " * 100)) == 1
    assert len(store.search(("test",), query="test!@#$%^&*()")) == 1


def test_index_fields_from_config_and_per_put(db: Any, settings: Any) -> None:
    # HashEmbedder hashes words into 384 buckets with a per-run random key: now and then an
    # unindexed word shares a bucket with an indexed one (a vector-only hit). A fixed key
    # (checked free of such collisions for these words) makes the test mean one thing.
    settings.TTMEMORY = {
        **settings.TTMEMORY,
        "EMBEDDER": {
            "BACKEND": "ttmemory.backends.embedders.HashEmbedder",
            "OPTIONS": {"key": base64.b64encode(b"langgraph-store-index-fields-key").decode()},
        },
    }
    store = TTMemoryStore(namespace="user-1", index={"dims": 384, "fields": ["key1", "key3"]})
    store.put(("test",), "doc1", {"key1": "xylophone", "key2": "yodel", "key3": "zither"})
    store.put(("test",), "doc2", {"key0": "umbrella", "key1": "violin", "key3": "xylophone"})
    assert sorted(r.key for r in store.search(("test",), query="xylophone")) == ["doc1", "doc2"]
    assert store.search(("test",), query="yodel") == []  # key2 is not indexed
    assert store.search(("test",), query="umbrella") == []
    store.put(("test",), "doc3", {"key0": "harp", "key2": "kazoo"}, index=["key0"])
    assert [r.key for r in store.search(("test",), query="harp")] == ["doc3"]
    assert store.search(("test",), query="kazoo") == []


def test_index_config_maps_to_the_configured_embedder(db: Any) -> None:
    with pytest.raises(ValueError, match="TTMEMORY\\['EMBEDDER'\\]"):
        TTMemoryStore(
            namespace="user-1", index={"dims": 1536, "embed": "openai:text-embedding-3-small"}
        )
    with pytest.raises(ValueError, match="1536"):
        TTMemoryStore(namespace="user-1", index={"dims": 1536})


def test_non_ascii(store: TTMemoryStore) -> None:
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for number, text in enumerate(texts, 1):
        store.put(("memories",), str(number), {"text": text})
    for number, text in enumerate(texts, 1):
        assert store.search(("memories",), query=text)[0].key == str(number)


def test_ttl_sets_expiry_refreshes_on_read_and_sweeps(db: Any) -> None:
    store = TTMemoryStore(namespace="user-1", ttl={"default_ttl": 10, "refresh_on_read": True})
    store.put(("foo",), "item1", {"foo": "bar"})
    store.put(("foo",), "forever", {"foo": "baz"}, ttl=None)
    row = GraphStoreItem.objects.get(key="item1")
    assert row.ttl_minutes == 10
    assert abs((row.expires_at - timezone.now()) - dt.timedelta(minutes=10)) < dt.timedelta(
        seconds=30
    )
    assert row.fact.expires_at == row.expires_at  # the memory expires with its item
    assert GraphStoreItem.objects.get(key="forever").expires_at is None

    soon = timezone.now() + dt.timedelta(seconds=5)
    GraphStoreItem.objects.filter(pk=row.pk).update(expires_at=soon)
    assert store.get(("foo",), "item1", refresh_ttl=False) is not None
    assert GraphStoreItem.objects.get(pk=row.pk).expires_at == soon
    assert store.get(("foo",), "item1") is not None  # refresh_on_read: a new 10 minutes
    assert GraphStoreItem.objects.get(pk=row.pk).expires_at > soon + dt.timedelta(minutes=5)

    GraphStoreItem.objects.filter(pk=row.pk).update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert store.get(("foo",), "item1") is None
    assert [i.key for i in store.search(("foo",))] == ["forever"]
    assert store.list_namespaces() == [("foo",)]
    assert store.sweep_ttl() == 1
    assert not GraphStoreItem.objects.filter(pk=row.pk).exists()


def test_async_batch(store: TTMemoryStore) -> None:
    async def run() -> Any:
        await store.aput(("test",), "a", {"text": "async apple"})
        found = await store.asearch(("test",), query="apple")
        listed = await store.alist_namespaces()
        await store.adelete(("test",), "a")
        return found, listed, await store.aget(("test",), "a")

    found, listed, gone = async_to_sync(run)()
    assert [item.key for item in found] == ["a"] and listed == [("test",)] and gone is None


# -- what ttmemory adds ------------------------------------------------------------------------


def test_first_elements_select_the_ttmemory_namespace_and_isolate_it(db: Any) -> None:
    store = TTMemoryStore()  # namespace_depth=1
    store.put(("user-1", "memories"), "m1", {"text": "Ada likes green tea"})
    store.put(("user-2", "memories"), "m1", {"text": "Bob likes green tea"})
    assert store.get(("user-1", "memories"), "m1").value == {"text": "Ada likes green tea"}
    hits = store.search(("user-2",), query="green tea")
    assert [(h.namespace, h.value["text"]) for h in hits] == [
        (("user-2", "memories"), "Bob likes green tea")
    ]
    assert store.list_namespaces(prefix=("user-1",)) == [("user-1", "memories")]
    with pytest.raises(InvalidNamespaceError, match="ttmemory namespace"):
        store.search((), query="green tea")  # would read across tenants
    with pytest.raises(InvalidNamespaceError, match="ttmemory namespace"):
        store.list_namespaces()
    with pytest.raises(InvalidNamespaceError, match="ttmemory namespace"):
        store.list_namespaces(prefix=("*", "memories"))
    assert GraphStoreItem.objects.get(namespace="user-1").path == "memories/"

    two_level = TTMemoryStore(namespace_depth=2)
    two_level.put(("acme", "user-9", "notes"), "n", {"text": "hello"})
    assert GraphStoreItem.objects.get(namespace="acme/user-9").path == "notes/"
    assert two_level.list_namespaces(prefix=("acme", "user-9")) == [("acme", "user-9", "notes")]
    with pytest.raises(InvalidNamespaceError, match="'/'"):
        two_level.put(("acme/x", "y"), "n", {"text": "hi"})


def test_values_are_encrypted_and_bound_to_their_row(store: TTMemoryStore) -> None:
    store.put(("prefs",), "tea", {"text": "Ada drinks lapsang souchong"})
    store.put(("prefs",), "coffee", {"text": "Ada avoids espresso"})
    raw = raw_rows("SELECT value FROM ttmemory_graphstoreitem")
    assert raw and all(b"lapsang" not in bytes(value) for (value,) in raw)
    tea = GraphStoreItem.objects.get(key="tea")
    raw_value = raw_rows("SELECT value FROM ttmemory_graphstoreitem WHERE id = %s", [tea.pk])[0][0]
    coffee = GraphStoreItem.objects.get(key="coffee")
    from ttmemory.fields import Sealed

    GraphStoreItem.objects.filter(pk=coffee.pk).update(value=Sealed(bytes(raw_value)))
    with pytest.raises(DecryptionError):
        store.get(("prefs",), "coffee")


def test_store_memories_are_ttmemory_facts(store: TTMemoryStore) -> None:
    store.put(("memories",), "m1", {"text": "Ada is allergic to peanuts"})
    store.put(("memories",), "m2", {"text": "Ada is allergic to peanuts"})  # same text
    recalled = memory.fact_recall(namespace="user-1", query="peanut allergy")
    assert [f.text for f in recalled.facts] == ["Ada is allergic to peanuts"]
    assert recalled.facts[0].kind == "langgraph"
    assert sorted(r.key for r in store.search(("memories",), query="peanuts")) == ["m1", "m2"]
    store.delete(("memories",), "m1")  # the fact stays: m2 still uses it
    assert memory.fact_recall(namespace="user-1", query="peanuts").facts
    store.delete(("memories",), "m2")
    assert memory.fact_recall(namespace="user-1", query="peanuts").facts == []


def test_namespace_erase_and_export_cover_store_items(store: TTMemoryStore) -> None:
    store.put(("memories",), "m1", {"text": "Ada lives in Lisbon"})
    exported = memory.namespace_export(namespace="user-1")
    assert [(i["path"], i["key"], i["value"]) for i in exported["store_items"]] == [
        ("memories/", "m1", {"text": "Ada lives in Lisbon"})
    ]
    receipt = memory.namespace_erase(namespace="user-1")
    assert receipt.counts["graph_store_item"] == 1 and receipt.counts["fact"] == 1
    assert store.get(("memories",), "m1") is None


def test_bad_values_get_clear_errors_and_store_nothing(store: TTMemoryStore) -> None:
    with pytest.raises(memory.MemoryValidationError, match="value"):
        store.put(("test",), "k", {"when": dt.datetime(2026, 1, 1)})
    with pytest.raises(InvalidNamespaceError):
        store.put(("te.st",), "k", {"a": 1})
    assert not GraphStoreItem.objects.exists() and not Fact.objects.exists()


def test_a_shared_memory_expires_with_the_last_of_its_items(db: Any) -> None:
    store = TTMemoryStore(namespace="user-1")
    store.put(("a",), "k1", {"text": "Ada rows on Sundays"}, ttl=5)
    fact = GraphStoreItem.objects.get(key="k1").fact
    assert fact.expires_at is not None
    store.put(("b",), "k2", {"text": "Ada rows on Sundays"})  # same text, no time to live
    fact.refresh_from_db()
    assert fact.expires_at is None  # k2 never expires, so neither does its memory
    store.put(("a",), "k1", {"text": "Ada rows on Sundays"})  # k1 loses its time to live too
    assert GraphStoreItem.objects.get(key="k1").expires_at is None

    store.put(("a",), "k1", {"text": "Ada swims on Mondays"}, ttl=5)
    store.delete(("b",), "k2")
    swim = GraphStoreItem.objects.get(key="k1").fact
    GraphStoreItem.objects.filter(key="k1").update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert store.sweep_ttl() == 1
    assert not Fact.objects.filter(pk=swim.pk).exists()  # swept with its only item
    assert not Fact.objects.filter(namespace="user-1").exists()


def test_a_profiles_path_maps_items_onto_ttmemory_profiles(db: Any) -> None:
    store = TTMemoryStore(profiles=("profile",))  # namespace_depth=1
    store.put(("user-5", "profile"), "user", {"name": "Ada", "tea": "green"})
    store.put(("user-5", "memories"), "m1", {"text": "Ada moved to Porto"})
    assert memory.profile_get(namespace="user-5", kind="user") == {"name": "Ada", "tea": "green"}
    store.put(("user-5", "profile"), "user", {"name": "Ada"})  # a put replaces, no merge
    assert memory.profile_get(namespace="user-5") == {"user": {"name": "Ada"}}
    item = store.get(("user-5", "profile"), "user")
    assert (item.namespace, item.key, item.value) == (
        ("user-5", "profile"),
        "user",
        {"name": "Ada"},
    )
    assert sorted(store.list_namespaces(prefix=("user-5",))) == [
        ("user-5", "memories"),
        ("user-5", "profile"),
    ]
    listed = store.search(("user-5",))
    assert sorted((i.namespace[-1], i.key) for i in listed) == [
        ("memories", "m1"),
        ("profile", "user"),
    ]
    assert [i.key for i in store.search(("user-5",), filter={"name": "Ada"})] == ["user"]
    assert [i.key for i in store.search(("user-5",), query="Porto")] == ["m1"]  # recall: facts
    prompt = memory.prompt_build(
        session=memory.session_open(namespace="user-5", key="chat"), query="tea", max_tokens=500
    )
    assert "Ada" in str(prompt)
    with pytest.raises(memory.MemoryValidationError, match="key"):
        store.put(("user-5", "profile"), "Not A Kind", {"x": 1})
    store.delete(("user-5", "profile"), "user")
    assert store.get(("user-5", "profile"), "user") is None
    assert memory.profile_get(namespace="user-5") == {}
