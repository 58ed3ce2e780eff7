"""ttmemory and its peers in one harness, against the same raw-SQL baseline on the same server.

A *store* is anything that keeps a session's messages: ttmemory (``ttmemory_bench_peers`` builds
its store from the services, in the project's venv) and the peers here (in ``.venv-peers``, whose
pins differ from the project's: ``bench/requirements-peers.txt``):

- ``langchain-postgres``: ``PostgresChatMessageHistory`` on one psycopg connection;
- ``openai-agents``: the Agents SDK's ``SQLAlchemySession`` on asyncpg;
- ``langgraph``: ``PostgresSaver``, a session being a thread whose ``messages`` channel grows by
  one checkpoint per call (read the latest, append, put), as a graph with ``add_messages`` does.

``measure(store, raw, ...)`` times each operation of issue 36 on the store and on the baseline
(``bench/raw.py``) alternately in the same process, so ratios hold on a noisy machine: add 1, add
100 in one call, newest 1,000 of 2,000, 16 writers x 10 adds (wall); then one checked round of the
writers with a reader reading the whole history meanwhile (lost and duplicated writes, reads that
are not a prefix of the final history); then the cost curve as one session grows. Stores that
also keep facts searchable by meaning (ttmemory's ``fact_recall``, langchain-postgres'
``PGVector``, LangGraph's ``PostgresStore`` with its vector index; ``FactStore``) are measured as
a namespace grows too, against a plain pgvector table searched exactly (``RawFacts``):
``namespace_curve``.

Run by the command; alone: ``python bench/peers.py measure PARAMS_JSON OUT_JSON [options]`` and
``python bench/peers.py plot RESULTS_JSON OUT_PNG``. Nothing here imports Django.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

if __package__ in (None, ""):  # run as a script from the peers' venv
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.raw import (
    DIMENSIONS,
    RawFacts,
    RawSessions,
    Timing,
    _concurrent,
    fact_question,
    fact_text,
    fake_vector,
    paired,
    sample_message,
    vector_literal,
)

WRITERS = 16
ADDS_PER_WRITER = 10
OPERATIONS = ["add 1", "add 100 in one call", "newest 1,000 of 2,000", "16 writers x 10 adds, wall"]


class Store(Protocol):
    """A session store under test; a *handle* is what ``open`` returns for one session."""

    name: str

    def open(self, key: str) -> Any: ...

    def add(self, handle: Any, messages: list[dict[str, Any]]) -> None: ...

    def newest(self, handle: Any, limit: int) -> list[str]: ...

    def preload(self, handle: Any, messages: list[dict[str, Any]]) -> None:
        """Grow a session to the cost curve's size the cheapest way the store offers."""
        ...

    def writer(self, key: str) -> tuple[Callable[[dict[str, Any]], None], Callable[[], None]]:
        """For a thread of its own: (add one message to session ``key``, close)."""
        ...

    def close(self) -> None: ...


class FactStore(Protocol):
    """A store that also keeps a namespace's facts and searches them by a question (k hits)."""

    def facts_load(self, namespace: str, texts: list[str]) -> None: ...

    def facts_search(self, namespace: str, question: str, k: int) -> list[str]: ...


QUESTIONS = 64  # distinct questions a namespace point cycles through


def namespace_curve(
    store: Any,
    raw: RawFacts,
    sizes: list[int],
    runs: int,
    progress: Callable[[str], None],
    *,
    k: int = 10,
) -> list[dict[str, Any]]:
    """Search k=10 in a namespace of each of ``sizes`` facts (``fact_text``; loaded the
    store's cheapest way), beside the baseline's exact pgvector search of the same facts, the
    two alternating. The baseline is given the question's vector; each store embeds the
    question as it does (the peers with ``fake_vector``, ttmemory with its embedder)."""
    points = []
    for size in sizes:
        namespace = f"facts-{size}-{uuid.uuid4().hex[:6]}"
        progress(f"{store.name}: a namespace of {size:,} facts, loading")
        texts = [fact_text(i) for i in range(size)]
        store.facts_load(namespace, texts)
        raw.load(namespace, texts)
        questions = [fact_question(i) for i in range(QUESTIONS)]
        vectors = [vector_literal(fake_vector(q)) for q in questions]
        for question in questions[:4]:  # warm up both (caches, prepared statements)
            store.facts_search(namespace, question, k)
            raw.search(namespace, vectors[0], k)
        ours, base = _cycling(store, raw, namespace, questions, vectors, k)
        progress(f"{store.name}: a namespace of {size:,} facts, searching")
        mine, theirs = paired(ours, base, max(10, runs // 2))
        points.append({"facts": size, "search k=10": (mine.as_dict(), theirs.as_dict())})
    return points


def _cycling(
    store: Any, raw: RawFacts, namespace: str, questions: list[str], vectors: list[str], k: int
) -> tuple[Callable[[], None], Callable[[], None]]:
    """The two sides of a namespace point, each asking the next of the questions in turn."""
    turn = {"ours": 0, "raw": 0}

    def ours() -> None:
        store.facts_search(namespace, questions[turn["ours"] % len(questions)], k)
        turn["ours"] += 1

    def base() -> None:
        raw.search(namespace, vectors[turn["raw"] % len(vectors)], k)
        turn["raw"] += 1

    return ours, base


def texts(store: Store, handle: Any) -> list[str]:
    """The whole history's texts, oldest first."""
    return store.newest(handle, 10**9)


def measure(
    store: Store,
    raw: RawSessions,
    *,
    runs: int,
    rounds: int,
    sizes: list[int],
    progress: Callable[[str], None],
    namespace_sizes: list[int] | None = None,
    raw_facts: RawFacts | None = None,
) -> dict[str, Any]:
    """Every operation on ``store`` and on ``raw`` alternately; samples in microseconds. With
    ``namespace_sizes`` and a store that keeps facts, the namespace curve against
    ``raw_facts`` too."""
    run_id = uuid.uuid4().hex[:8]
    out: dict[str, Any] = {"store": store.name, "rows": {}, "concurrency": {}, "curve": []}
    one, hundred = sample_message(1), [sample_message(i) for i in range(100)]
    handle = store.open(f"add-{run_id}")
    for _ in range(10):  # warm both paths: connections, prepared statements
        store.add(handle, [one])
        raw.add(f"add-{run_id}", [one])
    progress(f"{store.name}: add 1")
    ours, base = paired(
        lambda: store.add(handle, [one]),
        lambda: raw.add(f"add-{run_id}", [one]),
        runs,
        settle=getattr(store, "settle", None),
    )
    out["rows"]["add 1"] = (ours.as_dict(), base.as_dict())
    progress(f"{store.name}: add 100 in one call")
    ours, base = paired(
        lambda: store.add(handle, hundred),
        lambda: raw.add(f"add-{run_id}", hundred),
        max(5, runs // 8),
        settle=getattr(store, "settle", None),
    )
    out["rows"]["add 100 in one call"] = (ours.as_dict(), base.as_dict())

    progress(f"{store.name}: newest 1,000 of 2,000")
    read = store.open(f"read-{run_id}")
    two_thousand = [sample_message(i) for i in range(2000)]
    for start in range(0, 2000, 500):
        store.add(read, two_thousand[start : start + 500])
        raw.add(f"read-{run_id}", two_thousand[start : start + 500])
    ours, base = paired(
        lambda: store.newest(read, 1000),
        lambda: raw.newest(f"read-{run_id}", 1000),
        max(5, runs // 8),
    )
    out["rows"]["newest 1,000 of 2,000"] = (ours.as_dict(), base.as_dict())

    progress(f"{store.name}: {WRITERS} writers x {ADDS_PER_WRITER} adds, {rounds} rounds")
    ours_t, base_t = Timing(), Timing()
    for r in range(rounds):
        key = f"conc-{run_id}-{r}"
        store.open(key)
        sides = [(ours_t, lambda k=key: _writers(store, k)), (base_t, lambda k=key: _raw(raw, k))]
        for timing, run in sides if r % 2 == 0 else reversed(sides):
            timing.samples.append(run())
            settle = getattr(store, "settle", None)
            if settle is not None:  # untimed: what the store left running never meets raw
                settle()
    out["rows"]["16 writers x 10 adds, wall"] = (ours_t.as_dict(), base_t.as_dict())

    progress(f"{store.name}: {WRITERS} writers with a reader, checked")
    out["concurrency"] = _checked_round(store, f"checked-{run_id}")

    for size in sizes:
        progress(f"{store.name}: cost curve, a session of {size:,} messages")
        out["curve"].append(_curve_point(store, raw, f"curve-{run_id}-{size}", size, runs))
    out["namespace_curve"] = []
    if namespace_sizes and hasattr(store, "facts_search") and raw_facts is not None:
        settle = getattr(store, "settle", None)
        if settle is not None:  # the session curve's index jobs must not run in these timings
            settle()
        out["namespace_curve"] = namespace_curve(store, raw_facts, namespace_sizes, runs, progress)
    return out


def _writers(store: Store, key: str) -> float:
    def connect() -> Any:
        add, close = store.writer(key)
        return _Writer(add, close)

    return _concurrent(
        WRITERS, ADDS_PER_WRITER, connect=connect, add=lambda w, message: w.add(message)
    )


def _raw(raw: RawSessions, key: str) -> float:
    return _concurrent(
        WRITERS,
        ADDS_PER_WRITER,
        connect=raw.connect,
        add=lambda conn, message: raw.add(key, [message], conn),
    )


class _Writer:
    def __init__(self, add: Callable[[dict[str, Any]], None], close: Callable[[], None]) -> None:
        self.add, self.close = add, close


def _checked_round(store: Store, key: str) -> dict[str, int]:
    """16 writers x 10 while a reader reads the whole history in a loop: what was lost or
    stored twice, and how many reads were not a prefix of the final history."""
    handle = store.open(key)
    reads: list[list[str]] = []
    done = threading.Event()
    errors: list[BaseException] = []

    def reader() -> None:
        read_handle = store.open(key)
        try:
            while not done.is_set():
                reads.append(texts(store, read_handle))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        _writers(store, key)
    finally:
        done.set()
        thread.join()
    if errors:
        raise errors[0]
    final = texts(store, handle)
    sent = {sample_message(w * 1000 + i)["content"] for w in range(WRITERS) for i in range(20)}
    written = [t for t in final if t in sent]
    return {
        "acknowledged": WRITERS * ADDS_PER_WRITER,
        "stored": len(set(written)),
        "lost": WRITERS * ADDS_PER_WRITER - len(set(written)),
        "duplicated": len(written) - len(set(written)),
        "reads": len(reads),
        "reads not a prefix": sum(1 for r in reads if r != final[: len(r)]),
    }


def _curve_point(store: Store, raw: RawSessions, key: str, size: int, runs: int) -> dict[str, Any]:
    """Add 1 and newest 50 in a session of ``size`` messages (grown in batches of 1,000; the
    baseline's by COPY)."""
    handle = store.open(key)
    store.preload(handle, [sample_message(i) for i in range(size)])
    raw.bulk(key, size)
    one = sample_message(7)
    samples = max(5, min(runs // 4, 200_000 // size))
    add_ours, add_raw = paired(
        lambda: store.add(handle, [one]), lambda: raw.add(key, [one]), samples
    )
    read_ours, read_raw = paired(
        lambda: store.newest(handle, 50), lambda: raw.newest(key, 50), samples
    )
    return {
        "messages": size,
        "add 1": (add_ours.as_dict(), add_raw.as_dict()),
        "newest 50": (read_ours.as_dict(), read_raw.as_dict()),
    }


# The peers -----------------------------------------------------------------------------------


def in_batches(store: Store, handle: Any, messages: list[dict[str, Any]]) -> None:
    """``Store.preload`` for a store whose append takes a batch: 1,000 messages a call."""
    for start in range(0, len(messages), 1000):
        store.add(handle, messages[start : start + 1000])


def _conninfo(params: dict[str, Any]) -> str:
    from psycopg.conninfo import make_conninfo

    return make_conninfo(**params)


class _FakeEmbeddings:
    """LangChain's ``Embeddings`` interface over ``fake_vector`` (no model in the figures)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [fake_vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return fake_vector(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


def _sqlalchemy_url(params: dict[str, Any], driver: str) -> Any:
    from sqlalchemy.engine import URL

    return URL.create(
        driver,
        username=params.get("user"),
        password=params.get("password") or None,
        host=params.get("host"),
        port=int(params["port"]) if params.get("port") else None,
        database=params.get("dbname"),
    )


class LangchainStore:
    """langchain-postgres ``PostgresChatMessageHistory`` (sync, one psycopg connection)."""

    name = "langchain-postgres"
    table = "bench_peers_langchain"

    def __init__(self, params: dict[str, Any]) -> None:
        import psycopg
        from langchain_postgres import PostgresChatMessageHistory

        self.params = params
        self.conn = psycopg.connect(_conninfo(params))
        self._engine: Any = None
        self._collections: dict[str, Any] = {}
        PostgresChatMessageHistory.drop_table(self.conn, self.table)
        PostgresChatMessageHistory.create_tables(self.conn, self.table)

    def _history(self, key: str, conn: Any) -> Any:
        from langchain_postgres import PostgresChatMessageHistory

        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, key))  # it takes UUIDs only
        return PostgresChatMessageHistory(self.table, session_id, sync_connection=conn)

    def open(self, key: str) -> Any:
        return self._history(key, self.conn)

    @staticmethod
    def _message(message: dict[str, Any]) -> Any:
        from langchain_core.messages import AIMessage, HumanMessage

        kind = HumanMessage if message["role"] == "user" else AIMessage
        return kind(content=message["content"])

    def add(self, handle: Any, messages: list[dict[str, Any]]) -> None:
        handle.add_messages([self._message(m) for m in messages])

    def newest(self, handle: Any, limit: int) -> list[str]:
        # It reads the whole history: there is no limit to pass.
        return [m.content for m in handle.messages[-limit:]]

    def preload(self, handle: Any, messages: list[dict[str, Any]]) -> None:
        in_batches(self, handle, messages)

    def writer(self, key: str) -> tuple[Callable[[dict[str, Any]], None], Callable[[], None]]:
        import psycopg

        conn = psycopg.connect(_conninfo(self.params))
        history = self._history(key, conn)
        return lambda message: self.add(history, [message]), conn.close

    def _vectors(self, namespace: str) -> Any:
        """A ``PGVector`` collection per namespace (its default: exact search, no index)."""
        from langchain_postgres import PGVector
        from sqlalchemy import create_engine

        if self._engine is None:
            self._engine = create_engine(_sqlalchemy_url(self.params, "postgresql+psycopg"))
        if namespace not in self._collections:
            self._collections[namespace] = PGVector(
                embeddings=_FakeEmbeddings(),
                connection=self._engine,
                collection_name=namespace,
                embedding_length=DIMENSIONS,
                use_jsonb=True,
            )
        return self._collections[namespace]

    def facts_load(self, namespace: str, texts: list[str]) -> None:
        vectors = self._vectors(namespace)
        for start in range(0, len(texts), 1000):
            chunk = texts[start : start + 1000]
            vectors.add_embeddings(chunk, [fake_vector(t) for t in chunk])

    def facts_search(self, namespace: str, question: str, k: int) -> list[str]:
        found = self._vectors(namespace).similarity_search_by_vector(fake_vector(question), k=k)
        return [document.page_content for document in found]

    def close(self) -> None:
        from langchain_postgres import PostgresChatMessageHistory

        PostgresChatMessageHistory.drop_table(self.conn, self.table)
        with self.conn.cursor() as cursor:
            for table in ("langchain_pg_embedding", "langchain_pg_collection"):
                cursor.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
        self.conn.commit()
        if self._engine is not None:
            self._engine.dispose()
        self.conn.close()


class AgentsStore:
    """The OpenAI Agents SDK's ``SQLAlchemySession`` on asyncpg, driven from sync code by an
    event loop per thread (each with its own engine: asyncpg connections belong to a loop)."""

    name = "openai-agents SQLAlchemySession"
    tables = ("bench_peers_agent_sessions", "bench_peers_agent_messages")

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params
        self.url = _sqlalchemy_url(params, "postgresql+asyncpg")
        self._drop()
        self.loop = asyncio.new_event_loop()
        self.engine = self._engine()

    def _engine(self) -> Any:
        from sqlalchemy.ext.asyncio import create_async_engine

        return create_async_engine(self.url)

    def _session(self, key: str, engine: Any) -> Any:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

        return SQLAlchemySession(
            key,
            engine=engine,
            create_tables=True,
            sessions_table=self.tables[0],
            messages_table=self.tables[1],
        )

    def open(self, key: str) -> Any:
        return self._session(key, self.engine)

    def add(self, handle: Any, messages: list[dict[str, Any]]) -> None:
        self.loop.run_until_complete(handle.add_items([dict(m) for m in messages]))

    def newest(self, handle: Any, limit: int) -> list[str]:
        items = self.loop.run_until_complete(handle.get_items(limit=limit))
        return [item["content"] for item in items]

    def preload(self, handle: Any, messages: list[dict[str, Any]]) -> None:
        in_batches(self, handle, messages)

    def writer(self, key: str) -> tuple[Callable[[dict[str, Any]], None], Callable[[], None]]:
        loop = asyncio.new_event_loop()
        engine = self._engine()
        session = self._session(key, engine)

        def add(message: dict[str, Any]) -> None:
            loop.run_until_complete(session.add_items([dict(message)]))

        def close() -> None:
            loop.run_until_complete(engine.dispose())
            loop.close()

        return add, close

    def _drop(self) -> None:
        import psycopg

        with psycopg.connect(_conninfo(self.params), autocommit=True) as conn:
            for table in reversed(self.tables):
                conn.execute(f"DROP TABLE IF EXISTS {table} CASCADE")

    def close(self) -> None:
        self.loop.run_until_complete(self.engine.dispose())
        self.loop.close()
        self._drop()


class LangGraphStore:
    """LangGraph's ``PostgresSaver``: a session is a thread; each call reads the latest
    checkpoint, appends to its ``messages`` channel and puts the next one (a graph step)."""

    name = "langgraph PostgresSaver"

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params
        self._vector_store: Any = None
        self.conn, self.saver = self._saver()
        with self.conn.cursor() as cursor:
            for table in ("checkpoint_writes", "checkpoint_blobs", "checkpoints"):
                cursor.execute(f"TRUNCATE {table}")

    def _saver(self) -> tuple[Any, Any]:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        conn = psycopg.connect(
            _conninfo(self.params), autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        saver = PostgresSaver(conn)
        saver.setup()
        return conn, saver

    def open(self, key: str) -> Any:
        return {"configurable": {"thread_id": key, "checkpoint_ns": ""}}

    def add(self, handle: Any, messages: list[dict[str, Any]], saver: Any = None) -> None:
        from langgraph.checkpoint.base import empty_checkpoint

        saver = saver or self.saver
        latest = saver.get_tuple(handle)
        history, version, config, step = [], None, handle, 0
        if latest is not None:
            history = list(latest.checkpoint["channel_values"].get("messages", []))
            version = latest.checkpoint["channel_versions"].get("messages")
            config, step = latest.config, latest.metadata.get("step", 0) + 1
        new_version = saver.get_next_version(version, None)
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": history + [dict(m) for m in messages]}
        checkpoint["channel_versions"] = {"messages": new_version}
        saver.put(config, checkpoint, {"source": "loop", "step": step}, {"messages": new_version})

    def newest(self, handle: Any, limit: int) -> list[str]:
        latest = self.saver.get_tuple(handle)
        if latest is None:
            return []
        return [m["content"] for m in latest.checkpoint["channel_values"]["messages"][-limit:]]

    def preload(self, handle: Any, messages: list[dict[str, Any]]) -> None:
        # One step that writes the whole history: 1,000 at a time would write it size/1,000 times.
        self.add(handle, messages)

    def writer(self, key: str) -> tuple[Callable[[dict[str, Any]], None], Callable[[], None]]:
        conn, saver = self._saver()
        handle = self.open(key)
        return lambda message: self.add(handle, [message], saver), conn.close

    def _store(self) -> Any:
        """LangGraph's ``PostgresStore`` with its vector index (its defaults: HNSW, cosine)."""
        if self._vector_store is None:
            import psycopg
            from langgraph.store.postgres import PostgresStore
            from psycopg.rows import dict_row

            self._store_conn = psycopg.connect(
                _conninfo(self.params), autocommit=True, prepare_threshold=0, row_factory=dict_row
            )
            self._drop_store()
            self._vector_store = PostgresStore(
                self._store_conn,
                index={
                    "dims": DIMENSIONS,
                    "embed": lambda texts: [fake_vector(t) for t in texts],
                    "fields": ["text"],
                },
            )
            self._vector_store.setup()
        return self._vector_store

    def facts_load(self, namespace: str, texts: list[str]) -> None:
        from langgraph.store.base import PutOp

        store = self._store()
        for start in range(0, len(texts), 1000):
            store.batch(
                [
                    PutOp(namespace=("facts", namespace), key=str(start + i), value={"text": t})
                    for i, t in enumerate(texts[start : start + 1000])
                ]
            )

    def facts_search(self, namespace: str, question: str, k: int) -> list[str]:
        found = self._store().search(("facts", namespace), query=question, limit=k)
        return [item.value["text"] for item in found]

    def _drop_store(self) -> None:
        with self._store_conn.cursor() as cursor:
            for table in ("store_vectors", "store", "store_migrations", "vector_migrations"):
                cursor.execute(f"DROP TABLE IF EXISTS {table} CASCADE")

    def close(self) -> None:
        if self._vector_store is not None:
            self._drop_store()
            self._store_conn.close()
        self.conn.close()


PEERS: dict[str, Callable[[dict[str, Any]], Store]] = {
    "langchain": LangchainStore,
    "agents": AgentsStore,
    "langgraph": LangGraphStore,
}


# Plot ------------------------------------------------------------------------------------------


def plot(results: list[dict[str, Any]], path: Path) -> None:
    """Add 1 and newest 50 (median microseconds, log scales) as one session grows, and search
    k=10 as a namespace grows, each store beside the baseline measured in its own process
    (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    # One colour per store in every panel (a store without facts is missing from the third).
    colours = {result["store"]: f"C{index}" for index, result in enumerate(results)}
    for axis, operation in zip(axes[:2], ("add 1", "newest 50"), strict=True):
        for result in results:
            if not result["curve"]:
                continue
            sizes = [p["messages"] for p in result["curve"]]
            ours = [p[operation][0]["median"] for p in result["curve"]]
            colour = colours[result["store"]]
            axis.plot(sizes, ours, marker="o", label=result["store"], color=colour)
            base = [p[operation][1]["median"] for p in result["curve"]]
            axis.plot(sizes, base, linestyle="--", color=colour, alpha=0.45)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("messages in the session")
        axis.set_ylabel("median microseconds")
        axis.set_title(f"{operation} (dashed: raw SQL in the same process)")
        axis.grid(True, which="both", alpha=0.3)
    axis = axes[2]
    for result in results:
        points = result.get("namespace_curve") or []
        if not points:
            continue
        sizes = [p["facts"] for p in points]
        ours = [p["search k=10"][0]["median"] for p in points]
        colour = colours[result["store"]]
        axis.plot(sizes, ours, marker="o", label=result["store"], color=colour)
        base = [p["search k=10"][1]["median"] for p in points]
        axis.plot(sizes, base, linestyle="--", color=colour, alpha=0.45)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("facts in the namespace")
    axis.set_ylabel("median microseconds")
    axis.set_title("search k=10 (dashed: exact pgvector)")
    axis.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/peers.py")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("measure", help="measure the peers; JSON to OUT")
    run.add_argument("params", help="psycopg connection parameters as JSON")
    run.add_argument("out")
    run.add_argument("--peers", default=",".join(PEERS))
    run.add_argument("--runs", type=int, default=100)
    run.add_argument("--rounds", type=int, default=3)
    run.add_argument("--curve", default="1000,10000,100000")
    run.add_argument("--namespace-curve", default="1000,10000")
    draw = sub.add_parser("plot", help="draw the cost curve of a results file")
    draw.add_argument("results")
    draw.add_argument("png")
    args = parser.parse_args(argv)
    if args.command == "plot":
        plot(json.loads(Path(args.results).read_text()), Path(args.png))
        return 0
    params = json.loads(args.params)
    sizes = [int(x) for x in args.curve.split(",") if x.strip()]
    namespace_sizes = [int(x) for x in args.namespace_curve.split(",") if x.strip()]
    results = []
    for name in args.peers.split(","):
        store = PEERS[name](params)
        raw = RawSessions(params, table=f"bench_peers_raw_{name}")
        raw_facts = RawFacts(params, table=f"bench_peers_rawfacts_{name}")
        started = time.monotonic()
        try:
            results.append(
                measure(
                    store,
                    raw,
                    runs=args.runs,
                    rounds=args.rounds,
                    sizes=sizes,
                    progress=lambda m: print(f"  {m}", file=sys.stderr, flush=True),
                    namespace_sizes=namespace_sizes,
                    raw_facts=raw_facts,
                )
            )
        finally:
            raw.close()
            raw_facts.close()
            store.close()
        print(f"  {name}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    Path(args.out).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
