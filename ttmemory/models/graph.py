"""Agent-framework state: graph checkpoints with their pending writes, and key-value items.

Used by ``ttmemory.integrations.langgraph`` (a LangGraph checkpointer and store), kept here
with the other tables so migrations, key rotation and namespace erasure see them. Content
(the serialised checkpoint, its metadata, each write, each item's value) is encrypted and
bound to its row; identifiers (thread, checkpoint and task ids, channel names, item keys and
paths) are clear so they can be looked up.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from ttmemory.fields import EncryptedBinaryField, EncryptedJSONField, EncryptedQuerySet

CHECKPOINT_BINDING = ("namespace", "thread_id", "checkpoint_ns", "checkpoint_id")


class GraphCheckpointQuerySet(EncryptedQuerySet["GraphCheckpoint"]):
    def for_thread(self, namespace: str, thread_id: str) -> GraphCheckpointQuerySet:
        return self.filter(namespace=namespace, thread_id=thread_id)


class GraphCheckpoint(models.Model):
    """One checkpoint of a graph thread: its serialised state and metadata, encrypted.

    ``checkpoint`` and ``metadata`` hold a serialiser's bytes (their type tags beside them) and
    are bound to namespace, thread, checkpoint namespace and checkpoint id: a value copied to
    another thread or tenant fails to decrypt. Checkpoint ids are time-ordered (uuid6), so the
    newest is the greatest.
    """

    namespace = models.CharField(max_length=255)
    thread_id = models.CharField(max_length=255)
    checkpoint_ns = models.CharField(max_length=255, blank=True, default="")
    checkpoint_id = models.CharField(max_length=64)
    parent_checkpoint_id = models.CharField(max_length=64, blank=True, default="")
    run_id = models.CharField(max_length=64, blank=True, default="")
    checkpoint_type = models.CharField(max_length=32)
    checkpoint = EncryptedBinaryField(bind=CHECKPOINT_BINDING)
    metadata_type = models.CharField(max_length=32)
    metadata = EncryptedBinaryField(bind=CHECKPOINT_BINDING)
    created_at = models.DateTimeField(default=timezone.now)

    objects = GraphCheckpointQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "thread_id", "checkpoint_ns", "checkpoint_id"],
                name="ttm_graphcp_uniq",
            ),
        ]
        indexes = [
            models.Index(fields=["namespace", "run_id"], name="ttm_graphcp_run_idx"),
        ]

    def __str__(self) -> str:
        return f"checkpoint {self.checkpoint_id} of thread {self.thread_id} in {self.namespace}"


class GraphCheckpointWrite(models.Model):
    """A write a task made after a checkpoint (pending until the next one), encrypted.

    ``idx`` is the write's position in its task; special channels (errors, interrupts) use
    negative indexes and are replaced, regular writes are kept as first stored.
    """

    namespace = models.CharField(max_length=255)
    thread_id = models.CharField(max_length=255)
    checkpoint_ns = models.CharField(max_length=255, blank=True, default="")
    checkpoint_id = models.CharField(max_length=64)
    task_id = models.CharField(max_length=255)
    task_path = models.TextField(blank=True, default="")
    idx = models.IntegerField()
    channel = models.CharField(max_length=255)
    value_type = models.CharField(max_length=32)
    value = EncryptedBinaryField(bind=(*CHECKPOINT_BINDING, "task_id", "idx"))

    objects = EncryptedQuerySet["GraphCheckpointWrite"].as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "namespace",
                    "thread_id",
                    "checkpoint_ns",
                    "checkpoint_id",
                    "task_id",
                    "idx",
                ],
                name="ttm_graphwrite_uniq",
            ),
        ]

    def __str__(self) -> str:
        return f"write {self.task_id}/{self.idx} to {self.channel} of thread {self.thread_id}"


class GraphStoreItemQuerySet(EncryptedQuerySet["GraphStoreItem"]):
    def current(self) -> GraphStoreItemQuerySet:
        """Not expired."""
        return self.exclude(expires_at__lte=timezone.now())


class GraphStoreItem(models.Model):
    """A key-value item of an agent's store, under a path inside a ttmemory namespace.

    ``path`` is the rest of the framework's namespace tuple, each element escaped and ended by
    ``/`` (so a prefix of elements is a prefix of the string). ``value`` (a JSON object) is
    encrypted and bound to namespace, path and key. ``fact`` is the item's entry in long-term
    memory (its indexed text, recalled by ``fact_recall``); items with the same text share one.
    """

    namespace = models.CharField(max_length=255)
    path = models.CharField(max_length=1024, blank=True, default="")
    key = models.CharField(max_length=255)
    value = EncryptedJSONField(bind=("namespace", "path", "key"))
    fact = models.ForeignKey(
        "ttmemory.Fact",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    ttl_minutes = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = GraphStoreItemQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["namespace", "path", "key"], name="ttm_graphitem_uniq"),
        ]
        indexes = [
            models.Index(fields=["expires_at"], name="ttm_graphitem_expiry_idx"),
        ]

    def __str__(self) -> str:
        return f"item {self.key!r} at {self.path!r} in {self.namespace}"
