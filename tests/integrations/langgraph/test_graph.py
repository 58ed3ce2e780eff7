"""A small LangGraph StateGraph run on the database with TTMemorySaver and TTMemoryStore."""

from __future__ import annotations

import gc
import operator
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from asgiref.sync import async_to_sync
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from tests.conftest import raw_rows
from ttmemory import memory
from ttmemory.exceptions import DecryptionError
from ttmemory.fields import Sealed
from ttmemory.integrations.langgraph import TTMemorySaver, TTMemoryStore
from ttmemory.models import GraphCheckpoint

pytestmark = pytest.mark.contract


@pytest.fixture
def graph_db(transactional_db: Any) -> Iterator[None]:
    """LangGraph's sync runner calls the saver and the store from its worker threads, each with
    its own database connection (committed, so the test's transaction cannot roll them back):
    the tables are flushed afterwards, and the ended threads' connections closed."""
    yield
    gc.collect()


class State(TypedDict):
    user: str
    said: Annotated[list[str], operator.add]
    recalled: list[str]


def remember(state: State, runtime: Runtime[Any]) -> dict[str, Any]:
    """Store what the user said as a memory, recall what is known about tea."""
    assert runtime.store is not None
    text = state["said"][-1]
    runtime.store.put((state["user"], "memories"), f"m{len(state['said'])}", {"text": text})
    hits = runtime.store.search((state["user"], "memories"), query="tea")
    return {"recalled": [hit.value["text"] for hit in hits]}


def build(saver: TTMemorySaver, store: TTMemoryStore) -> Any:
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    return graph.compile(checkpointer=saver, store=store)


def test_two_turns_then_a_new_saver_reads_the_state(graph_db: None) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "chat-1"}}
    app = build(TTMemorySaver(namespace="user-7"), TTMemoryStore())
    app.invoke({"user": "user-7", "said": ["I drink green tea"]}, config)
    out = app.invoke({"user": "user-7", "said": ["I live in Porto"]}, config)
    assert out["said"] == ["I drink green tea", "I live in Porto"]
    assert out["recalled"] == ["I drink green tea"]

    # A restart: new saver and store instances read the thread back from the database.
    restarted = build(TTMemorySaver(namespace="user-7"), TTMemoryStore())
    state = restarted.get_state(config)
    assert state.values["said"] == ["I drink green tea", "I live in Porto"]
    history = list(restarted.get_state_history(config))
    assert len(history) >= 4 and history[0].config == state.config
    out = restarted.invoke({"user": "user-7", "said": ["Oolong tea too"]}, config)
    assert out["said"][-1] == "Oolong tea too"
    assert sorted(out["recalled"]) == ["I drink green tea", "Oolong tea too"]

    # Another tenant's saver sees no such thread; the memories are ttmemory facts.
    other = build(TTMemorySaver(namespace="user-8"), TTMemoryStore())
    assert other.get_state(config).values == {}
    assert memory.fact_recall(namespace="user-7", query="Porto").facts[0].text == "I live in Porto"


def test_async_graph_run(graph_db: None) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "chat-async"}}
    app = build(TTMemorySaver(namespace="user-7"), TTMemoryStore())

    async def two_turns() -> Any:
        await app.ainvoke({"user": "user-7", "said": ["Earl grey tea"]}, config)
        await app.ainvoke({"user": "user-7", "said": ["Mint tea"]}, config)
        return await app.aget_state(config)

    state = async_to_sync(two_turns)()
    assert state.values["said"] == ["Earl grey tea", "Mint tea"]
    assert sorted(state.values["recalled"]) == ["Earl grey tea", "Mint tea"]


def test_checkpoints_are_encrypted_and_bound_to_their_thread(graph_db: None) -> None:
    saver = TTMemorySaver(namespace="user-7")
    app = build(saver, TTMemoryStore())
    for thread in ("a", "b"):
        app.invoke(
            {"user": "user-7", "said": [f"secret rooibos {thread}"]},
            {"configurable": {"thread_id": thread}},
        )
    blobs = raw_rows("SELECT checkpoint FROM ttmemory_graphcheckpoint")
    writes = raw_rows("SELECT value FROM ttmemory_graphcheckpointwrite")
    assert blobs and all(b"rooibos" not in bytes(b) for (b,) in blobs + writes)

    # thread b's latest checkpoint row, given thread a's ciphertext, refuses to load.
    newest_a = GraphCheckpoint.objects.filter(thread_id="a").order_by("-checkpoint_id").first()
    newest_b = GraphCheckpoint.objects.filter(thread_id="b").order_by("-checkpoint_id").first()
    stolen = raw_rows(
        "SELECT checkpoint FROM ttmemory_graphcheckpoint WHERE id = %s", [newest_a.pk]
    )
    GraphCheckpoint.objects.filter(pk=newest_b.pk).update(checkpoint=Sealed(bytes(stolen[0][0])))
    with pytest.raises(DecryptionError):
        saver.get_tuple({"configurable": {"thread_id": "b", "checkpoint_ns": ""}})
    assert saver.get_tuple({"configurable": {"thread_id": "a", "checkpoint_ns": ""}}) is not None

    receipt = memory.namespace_erase(namespace="user-7")
    assert receipt.counts["graph_checkpoint"] >= 4
    assert saver.get_tuple({"configurable": {"thread_id": "a", "checkpoint_ns": ""}}) is None
