"""``TTMemorySaver``: a LangGraph checkpointer storing checkpoints encrypted in the database.

Each checkpoint is serialised by the saver's ``serde`` (LangGraph's ``JsonPlusSerializer`` by
default) and the typed bytes are encrypted with AES-256-GCM, bound to the namespace, thread,
checkpoint namespace and checkpoint id of their row (``ttmemory.models.GraphCheckpoint``);
pending writes likewise (``GraphCheckpointWrite``). Every row of a saver lives in its
``namespace``: one saver per tenant keeps tenants apart, and ``namespace_erase`` removes them.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from asgiref.sync import sync_to_async
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from ttmemory.models import GraphCheckpoint, GraphCheckpointWrite
from ttmemory.selectors.graph import graph_checkpoint_get, graph_checkpoints, graph_writes
from ttmemory.services.graph import (
    graph_checkpoint_put,
    graph_runs_delete,
    graph_thread_copy,
    graph_thread_delete,
    graph_threads_prune,
    graph_writes_put,
)
from ttmemory.validation import clean_namespace

__all__ = ["TTMemorySaver"]


class TTMemorySaver(BaseCheckpointSaver[int]):
    """A LangGraph checkpointer over ttmemory's database (PostgreSQL or SQLite).

    ``TTMemorySaver(namespace="acme/user-42")``; pass it to ``graph.compile(checkpointer=...)``.
    Sync methods run the ORM directly; async ones run the same code through
    ``sync_to_async(thread_sensitive=True)``. Whole checkpoints are stored (every channel's
    value), so ``prune``, ``copy_thread`` and ``delete_for_runs`` never leave a checkpoint
    whose values live in a deleted row.
    """

    def __init__(self, *, namespace: str, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self.namespace = clean_namespace(namespace)

    # -- reads ---------------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``config`` (its newest when no ``checkpoint_id``), or None."""
        configurable = config["configurable"]
        row = graph_checkpoint_get(
            namespace=self.namespace,
            thread_id=str(configurable["thread_id"]),
            checkpoint_ns=configurable.get("checkpoint_ns", ""),
            checkpoint_id=get_checkpoint_id(config),
        )
        if row is None:
            return None
        writes = graph_writes(namespace=self.namespace, checkpoints=[row])
        return self._tuple(row, writes[_key(row)])

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of ``config``'s thread (and checkpoint namespace when it
        names one), all of the saver's namespace for ``config=None``; ``filter`` matches
        metadata keys, ``before`` keeps older ones, ``limit`` caps the count."""
        configurable = config["configurable"] if config else {}
        thread_id = configurable.get("thread_id")
        rows = graph_checkpoints(
            namespace=self.namespace,
            thread_id=str(thread_id) if thread_id is not None else None,
            checkpoint_ns=configurable.get("checkpoint_ns"),
            checkpoint_id=get_checkpoint_id(config) if config else None,
            before_id=get_checkpoint_id(before) if before else None,
            limit=None if filter else limit,
        )
        if filter:
            rows = [row for row in rows if _matches(self._metadata(row), filter)]
            if limit is not None:
                rows = rows[: max(limit, 0)]
        writes = graph_writes(namespace=self.namespace, checkpoints=rows)
        for row in rows:
            yield self._tuple(row, writes[_key(row)])

    # -- writes --------------------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` as a child of ``config``'s checkpoint; returns its config."""
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        full_metadata = get_checkpoint_metadata(config, metadata)
        graph_checkpoint_put(
            namespace=self.namespace,
            thread_id=thread_id,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint["id"],
            parent_checkpoint_id=configurable.get("checkpoint_id"),
            run_id=full_metadata.get("run_id"),
            checkpoint=self.serde.dumps_typed(checkpoint),
            metadata=self.serde.dumps_typed(full_metadata),
        )
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes after ``config``'s checkpoint (a retry keeps the first)."""
        configurable = config["configurable"]
        graph_writes_put(
            namespace=self.namespace,
            thread_id=str(configurable["thread_id"]),
            checkpoint_ns=configurable.get("checkpoint_ns", ""),
            checkpoint_id=configurable["checkpoint_id"],
            task_id=task_id,
            task_path=task_path,
            writes=[
                (WRITES_IDX_MAP.get(channel, idx), channel, self.serde.dumps_typed(value))
                for idx, (channel, value) in enumerate(writes)
            ],
        )

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of ``thread_id``."""
        graph_thread_delete(namespace=self.namespace, thread_id=str(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata names one of ``run_ids``."""
        graph_runs_delete(namespace=self.namespace, run_ids=[str(r) for r in run_ids])

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread to another, re-encrypted for it."""
        graph_thread_copy(
            namespace=self.namespace,
            source_thread_id=str(source_thread_id),
            target_thread_id=str(target_thread_id),
        )

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest``: keep each thread's newest checkpoint per checkpoint namespace;
        ``delete``: delete them all. Whole checkpoints are stored, so the kept one loads fully
        (a graph using ``DeltaChannel`` loses the writes history older than it)."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}: 'keep_latest' or 'delete'")
        graph_threads_prune(
            namespace=self.namespace,
            thread_ids=[str(t) for t in thread_ids],
            keep_latest=strategy == "keep_latest",
        )

    # -- async twins ---------------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await sync_to_async(self.get_tuple, thread_sensitive=True)(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        def read() -> builtins.list[CheckpointTuple]:
            return [*self.list(config, filter=filter, before=before, limit=limit)]

        for item in await sync_to_async(read, thread_sensitive=True)():
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await sync_to_async(self.put, thread_sensitive=True)(
            config, checkpoint, metadata, new_versions
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await sync_to_async(self.put_writes, thread_sensitive=True)(
            config, writes, task_id, task_path
        )

    async def adelete_thread(self, thread_id: str) -> None:
        await sync_to_async(self.delete_thread, thread_sensitive=True)(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await sync_to_async(self.delete_for_runs, thread_sensitive=True)(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await sync_to_async(self.copy_thread, thread_sensitive=True)(
            source_thread_id, target_thread_id
        )

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        def run() -> None:
            self.prune(thread_ids, strategy=strategy)

        await sync_to_async(run, thread_sensitive=True)()

    # -- rows to LangGraph's objects -----------------------------------------------------------

    def _metadata(self, row: GraphCheckpoint) -> CheckpointMetadata:
        metadata: CheckpointMetadata = self.serde.loads_typed((row.metadata_type, row.metadata))
        return metadata

    def _tuple(
        self, row: GraphCheckpoint, writes: builtins.list[GraphCheckpointWrite]
    ) -> CheckpointTuple:
        loads = self.serde.loads_typed
        config: RunnableConfig = {
            "configurable": {
                "thread_id": row.thread_id,
                "checkpoint_ns": row.checkpoint_ns,
                "checkpoint_id": row.checkpoint_id,
            }
        }
        parent: RunnableConfig | None = None
        if row.parent_checkpoint_id:
            parent = {
                "configurable": {
                    "thread_id": row.thread_id,
                    "checkpoint_ns": row.checkpoint_ns,
                    "checkpoint_id": row.parent_checkpoint_id,
                }
            }
        return CheckpointTuple(
            config=config,
            checkpoint=loads((row.checkpoint_type, row.checkpoint)),
            metadata=self._metadata(row),
            parent_config=parent,
            pending_writes=[(w.task_id, w.channel, loads((w.value_type, w.value))) for w in writes],
        )


def _key(row: GraphCheckpoint) -> tuple[str, str, str]:
    return (row.thread_id, row.checkpoint_ns, row.checkpoint_id)


def _matches(metadata: Any, wanted: dict[str, Any]) -> bool:
    return all(metadata.get(key) == value for key, value in wanted.items())
