"""Overhead of the LangGraph adapters against calling ttmemory (or the database) directly.

- ``TTMemoryStore.put`` vs ``fact_remember`` of the same text; ``TTMemoryStore.search(query)``
  vs ``fact_recall`` of the same query over the same facts: what the store adds is the item row
  (encrypted value, path, key), its lookups and LangGraph's objects.
- ``TTMemorySaver.put`` / ``get_tuple`` of one checkpoint (a 20-message state, serialised by
  LangGraph's ``JsonPlusSerializer``) vs the same serialised bytes written to / read from a
  plain table with one SQL statement, unencrypted: what the saver adds is AES-256-GCM, the ORM,
  validation and the write lookups. ``InMemorySaver`` is timed too, for scale.

Both sides of each pair run alternately in the same process (``session_memory.paired``);
figures are medians in microseconds. Everything lives in namespaces starting with
``bench-lg-`` and is deleted afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django.db import connection
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from bench.session_memory import Row, paired
from ttmemory import memory
from ttmemory.integrations.langgraph import TTMemorySaver, TTMemoryStore
from ttmemory.models import Fact, GraphCheckpoint, GraphCheckpointWrite, GraphStoreItem

RAW_TABLE = "ttmemory_bench_raw_checkpoint"
SEARCH_ITEMS = 200
TOPICS = ["tea", "trains", "gardening", "chess", "running", "jazz", "baking", "sailing"]


def _memory_text(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return f"Memory {i}: the user mentioned {topic} on day {i % 31}, and item {i} of their list."


def _state(turns: int = 20) -> dict[str, Any]:
    return {
        "messages": [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"Turn {i}: the customer asked about order #{1000 + i} and "
                "shipping to Lisbon on Friday; the agent answered in two short sentences.",
            }
            for i in range(turns)
        ],
        "step": turns,
    }


def run(
    *, runs: int, items: int = SEARCH_ITEMS, progress: Callable[[str], None] = lambda _: None
) -> list[Row]:
    rows: list[Row] = []
    tag = uuid.uuid4().hex[:8]
    ns_store, ns_core, ns_saver = (f"bench-lg-{name}-{tag}" for name in ("store", "core", "saver"))
    try:
        rows += _store_rows(ns_store, ns_core, runs, items, progress)
        rows += _saver_rows(ns_saver, runs, progress)
    finally:
        for namespace in (ns_store, ns_core, ns_saver):
            memory.namespace_erase(namespace=namespace)
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {RAW_TABLE}")
    return rows


def _store_rows(
    ns_store: str, ns_core: str, runs: int, items: int, progress: Callable[[str], None]
) -> list[Row]:
    store = TTMemoryStore(namespace=ns_store)
    counter = iter(range(10**9))
    progress("store put vs fact_remember")

    def put() -> None:
        i = next(counter)
        store.put(("memories",), f"m{i}", {"text": _memory_text(i)})

    def remember() -> None:
        i = next(counter)
        memory.fact_remember(namespace=ns_core, text=_memory_text(i), kind="langgraph")

    rows = [paired("store put vs fact_remember (new text)", put, remember, runs)]

    progress("store search vs fact_recall")
    GraphStoreItem.objects.filter(namespace=ns_store).delete()
    Fact.objects.filter(namespace=ns_store).delete()
    for i in range(items):
        store.put(("memories",), f"s{i}", {"text": _memory_text(i)})
    queries = iter(f"what about {TOPICS[i % len(TOPICS)]} on day {i % 31}" for i in range(10**9))
    current: dict[str, str] = {}

    def next_query() -> None:
        current["q"] = next(queries)

    def search() -> None:
        store.search(("memories",), query=current["q"], limit=10)

    def recall() -> None:
        memory.fact_recall(namespace=ns_store, query=current["q"], k=10, kinds=["langgraph"])

    rows.append(
        paired(
            f"store search vs fact_recall (k=10, {items} items)",
            search,
            recall,
            runs,
            setup_ours=next_query,
            setup_raw=lambda: None,
        )
    )
    return rows


def _saver_rows(namespace: str, runs: int, progress: Callable[[str], None]) -> list[Row]:
    saver = TTMemorySaver(namespace=namespace)
    serde = JsonPlusSerializer()
    in_memory = InMemorySaver()
    state = _state()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {RAW_TABLE}")
        blob_type = "bytea" if connection.vendor == "postgresql" else "blob"
        cursor.execute(
            f"CREATE TABLE {RAW_TABLE} (thread_id varchar(255), checkpoint_id varchar(64), "
            f"type varchar(32), checkpoint {blob_type}, metadata {blob_type}, "
            "PRIMARY KEY (thread_id, checkpoint_id))"
        )
    made: list[Any] = []

    def fresh() -> None:
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = dict(state)
        checkpoint["channel_versions"] = {"messages": 1, "step": 1}
        made.append(checkpoint)

    config = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    metadata = {"source": "loop", "step": 1, "parents": {}}

    def ours_put() -> None:
        saver.put(config, made[-1], metadata, {"messages": 1, "step": 1})  # type: ignore[arg-type]

    def raw_put() -> None:
        kind, data = serde.dumps_typed(made[-1])
        _, meta = serde.dumps_typed(metadata)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {RAW_TABLE} VALUES (%s, %s, %s, %s, %s)",
                ["bench", made[-1]["id"], kind, data, meta],
            )

    progress("saver put vs raw SQL")
    rows = [paired("saver put, one checkpoint vs raw SQL insert", ours_put, raw_put, runs,
                   setup_ours=fresh, setup_raw=fresh)]  # fmt: skip

    latest = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}

    def ours_get() -> None:
        found = saver.get_tuple(latest)  # type: ignore[arg-type]
        assert found is not None

    def raw_get() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT type, checkpoint, metadata FROM {RAW_TABLE} WHERE thread_id = %s "
                "ORDER BY checkpoint_id DESC LIMIT 1",
                ["bench"],
            )
            kind, data, meta = cursor.fetchone()
        serde.loads_typed((kind, bytes(data)))
        serde.loads_typed(("msgpack", bytes(meta)))

    progress("saver get_tuple vs raw SQL")
    rows.append(paired("saver get_tuple (latest) vs raw SQL select", ours_get, raw_get, runs))

    def memory_put() -> None:
        in_memory.put(config, made[-1], metadata, {"messages": 1, "step": 1})  # type: ignore[arg-type]

    progress("saver put vs InMemorySaver")
    rows.append(
        paired(
            "saver put vs InMemorySaver.put",
            ours_put,
            memory_put,
            runs,
            setup_ours=fresh,
            setup_raw=fresh,
        )
    )
    rows.append(
        paired(
            "saver get_tuple vs InMemorySaver.get_tuple",
            ours_get,
            lambda: in_memory.get_tuple(latest),  # type: ignore[arg-type]
            runs,
        )
    )
    GraphCheckpointWrite.objects.filter(namespace=namespace).delete()
    GraphCheckpoint.objects.filter(namespace=namespace).delete()
    return rows
