"""Writes of agent-framework state: graph checkpoints, their pending writes, store items.

Framework-neutral: values arrive already serialised (``(type tag, bytes)`` pairs, JSON
objects); ``ttmemory.integrations.langgraph`` maps LangGraph's objects onto these calls. Every
row carries its namespace; every function is scoped to one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import Fact, GraphCheckpoint, GraphCheckpointWrite, GraphStoreItem, Profile
from ttmemory.services.facts import MAX_FACT_CHARS, fact_forget, fact_remember
from ttmemory.services.gate import Change, change
from ttmemory.validation import clean_json_object, clean_kind

_Row = TypeVar("_Row", GraphCheckpoint, GraphCheckpointWrite)

# Facts that index store items carry this kind, so recall can be limited to them.
STORE_FACT_KIND = "langgraph"

Typed = tuple[str, bytes]


def _clean_id(value: Any, *, field: str, limit: int = 255, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise MemoryValidationError(field, f"must be a string, not {type(value).__name__}")
    if not value and not empty:
        raise MemoryValidationError(field, "must not be empty")
    if len(value) > limit:
        raise MemoryValidationError(field, f"is {len(value)} characters; the limit is {limit}")
    return value


def graph_checkpoint_put(
    *,
    namespace: str,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    parent_checkpoint_id: str | None,
    run_id: str | None,
    checkpoint: Typed,
    metadata: Typed,
) -> GraphCheckpoint:
    """Store a checkpoint of ``thread_id`` (replacing one with the same id), encrypted and bound
    to namespace, thread, checkpoint namespace and id. Raises MemoryValidationError naming the
    field for an id that is empty or too long."""
    with change("checkpoint put", namespace=namespace, atomic=False, hold="allow") as gate:
        fields = {
            "namespace": gate.namespace,
            "thread_id": _clean_id(thread_id, field="thread_id"),
            "checkpoint_ns": _clean_id(checkpoint_ns, field="checkpoint_ns", empty=True),
            "checkpoint_id": _clean_id(checkpoint_id, field="checkpoint_id", limit=64),
        }
        values = {
            "parent_checkpoint_id": _clean_id(
                parent_checkpoint_id or "", field="parent_checkpoint_id", limit=64, empty=True
            ),
            "run_id": str(run_id or "")[:64],
            "checkpoint_type": checkpoint[0],
            "checkpoint": checkpoint[1],
            "metadata_type": metadata[0],
            "metadata": metadata[1],
        }
        for _attempt in range(2):
            try:
                with transaction.atomic():
                    row = GraphCheckpoint.objects.select_for_update().filter(**fields).first()
                    if row is None:
                        row = GraphCheckpoint(**fields)
                    for name, value in values.items():
                        setattr(row, name, value)
                    row.save()
                    return row
            except IntegrityError:
                continue  # stored concurrently with the same id: replace that one
        raise MemoryValidationError("checkpoint_id", "could not be stored (concurrent conflict)")


def graph_writes_put(
    *,
    namespace: str,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    task_id: str,
    task_path: str,
    writes: Sequence[tuple[int, str, Typed]],
) -> int:
    """Store a task's writes ``(idx, channel, value)`` after a checkpoint; returns rows stored.

    A write with a negative ``idx`` (errors, interrupts, resumes) replaces the stored one; a
    regular write already stored at its ``idx`` is kept as it was (a retried task changes
    nothing).
    """
    with change("writes put", namespace=namespace, hold="allow") as gate:
        where = {
            "namespace": gate.namespace,
            "thread_id": _clean_id(thread_id, field="thread_id"),
            "checkpoint_ns": _clean_id(checkpoint_ns, field="checkpoint_ns", empty=True),
            "checkpoint_id": _clean_id(checkpoint_id, field="checkpoint_id", limit=64),
            "task_id": _clean_id(task_id, field="task_id"),
        }
        rows = [
            GraphCheckpointWrite(
                **where,
                task_path=task_path or "",
                idx=idx,
                channel=_clean_id(channel, field="channel"),
                value_type=value[0],
                value=value[1],
            )
            for idx, channel, value in writes
        ]
        if not rows:
            return 0
        replaced = [row.idx for row in rows if row.idx < 0]
        if replaced:
            GraphCheckpointWrite.objects.filter(**where, idx__in=replaced).delete()
        GraphCheckpointWrite.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def _writes_of(checkpoints: Iterable[GraphCheckpoint]) -> Q:
    query = Q(pk__in=[])
    for cp in checkpoints:
        query |= Q(
            thread_id=cp.thread_id, checkpoint_ns=cp.checkpoint_ns, checkpoint_id=cp.checkpoint_id
        )
    return query


def graph_thread_delete(*, namespace: str, thread_id: str) -> int:
    """Delete every checkpoint and write of ``thread_id``; returns checkpoints deleted."""
    with change("thread delete", namespace=namespace) as gate:
        rows = {"namespace": gate.namespace, "thread_id": thread_id}
        GraphCheckpointWrite.objects.filter(**rows).delete()
        return GraphCheckpoint.objects.filter(**rows).delete()[0]


def graph_thread_copy(*, namespace: str, source_thread_id: str, target_thread_id: str) -> int:
    """Copy every checkpoint and write of one thread to another (re-encrypted for the target,
    whose existing rows with the same ids are replaced); returns checkpoints copied.
    Raises MemoryValidationError when the source thread has no checkpoint."""
    with change("thread copy", namespace=namespace, hold="allow") as gate:
        namespace = gate.namespace
        target = _clean_id(target_thread_id, field="target_thread_id")
        checkpoints = list(GraphCheckpoint.objects.for_thread(namespace, source_thread_id))
        if not checkpoints:
            raise MemoryValidationError("source_thread_id", "has no checkpoint to copy")
        writes = list(
            GraphCheckpointWrite.objects.filter(namespace=namespace, thread_id=source_thread_id)
        )
        graph_thread_delete(namespace=namespace, thread_id=target)
        copies = _copies(checkpoints, namespace=namespace, thread_id=target)
        GraphCheckpoint.objects.bulk_create(copies)
        GraphCheckpointWrite.objects.bulk_create(
            _copies(writes, namespace=namespace, thread_id=target)
        )
    return len(copies)


def _copies(rows: Sequence[_Row], **changes: Any) -> list[_Row]:
    """Unsaved copies of ``rows`` (of one model): every field but the primary key, with
    ``changes``. An encrypted field is opened here and sealed again for its copy's own row."""
    if not rows:
        return []
    fields = [f.name for f in type(rows[0])._meta.concrete_fields if not f.primary_key]
    return [
        type(row)(**{**{name: getattr(row, name) for name in fields}, **changes}) for row in rows
    ]


def graph_threads_prune(
    *, namespace: str, thread_ids: Sequence[str], keep_latest: bool = True
) -> int:
    """Delete the checkpoints of ``thread_ids`` (with their writes), all of them or all but the
    newest per checkpoint namespace; returns checkpoints deleted."""
    deleted = 0
    with change("checkpoint delete", namespace=namespace, hold="check") as gate:
        for thread_id in dict.fromkeys(thread_ids):
            rows = GraphCheckpoint.objects.for_thread(gate.namespace, thread_id).order_by(
                "checkpoint_ns", "-checkpoint_id"
            )
            doomed: list[GraphCheckpoint] = []
            seen: set[str] = set()
            for cp in rows.only("pk", "thread_id", "checkpoint_ns", "checkpoint_id"):
                if keep_latest and cp.checkpoint_ns not in seen:
                    seen.add(cp.checkpoint_ns)
                    continue
                doomed.append(cp)
            deleted += _delete_checkpoints(gate, doomed)
    return deleted


def graph_runs_delete(*, namespace: str, run_ids: Sequence[str]) -> int:
    """Delete the checkpoints made by runs ``run_ids`` (with their writes); returns how many."""
    with change("checkpoint delete", namespace=namespace, hold="check") as gate:
        wanted = [str(r) for r in run_ids if r]
        if not wanted:
            return 0
        doomed = list(
            GraphCheckpoint.objects.filter(namespace=gate.namespace, run_id__in=wanted).only(
                "pk", "thread_id", "checkpoint_ns", "checkpoint_id"
            )
        )
        return _delete_checkpoints(gate, doomed)


def _delete_checkpoints(gate: Change, doomed: Sequence[GraphCheckpoint]) -> int:
    namespace = gate.namespace
    if doomed:
        gate.refuse_if_held()
    for start in range(0, len(doomed), 200):
        chunk = doomed[start : start + 200]
        GraphCheckpointWrite.objects.filter(namespace=namespace).filter(_writes_of(chunk)).delete()
        GraphCheckpoint.objects.filter(pk__in=[cp.pk for cp in chunk]).delete()
    return len(doomed)


def graph_item_put(
    *,
    namespace: str,
    path: str,
    key: str,
    value: Mapping[str, Any],
    index_text: str | None,
    ttl_minutes: float | None = None,
) -> GraphStoreItem:
    """Store (or replace) the item ``key`` at ``path``: its value encrypted and bound to its row;
    ``index_text`` (the first ``MAX_FACT_CHARS`` characters) remembered as a fact of kind
    ``langgraph`` so ``fact_recall`` finds the item; ``ttl_minutes`` sets ``expires_at``.

    Items with the same index text share one fact; a fact no item refers to any more is
    forgotten. Raises MemoryValidationError naming the field for a bad key, path or value.
    """
    with change("item put", namespace=namespace, atomic=False, hold="allow") as gate:
        return _item_put(gate, path, key, value, index_text, ttl_minutes)


def _item_put(
    gate: Change,
    path: str,
    key: str,
    value: Mapping[str, Any],
    index_text: str | None,
    ttl_minutes: float | None,
) -> GraphStoreItem:
    namespace = gate.namespace
    key = _clean_id(key, field="key")
    path = _clean_id(path, field="path", limit=1024, empty=True)
    if not isinstance(value, Mapping):
        raise MemoryValidationError("value", "must be a JSON object")
    clean_value = clean_json_object(value, field="value")
    now = timezone.now()
    expires_at = _expiry(now, ttl_minutes)
    fact = None
    text = (index_text or "").strip()[:MAX_FACT_CHARS]
    if text:
        fact = fact_remember(
            namespace=namespace, text=text, kind=STORE_FACT_KIND, expires_at=expires_at
        )
    for _attempt in range(2):
        try:
            with transaction.atomic():
                item = (
                    GraphStoreItem.objects.select_for_update()
                    .filter(namespace=namespace, path=path, key=key)
                    .first()
                )
                previous_fact_id = item.fact_id if item is not None else None
                if item is None:
                    item = GraphStoreItem(namespace=namespace, path=path, key=key, created_at=now)
                item.value = clean_value
                item.fact = fact
                item.ttl_minutes = ttl_minutes
                item.expires_at = expires_at
                item.updated_at = now
                item.save()
                if previous_fact_id is not None and previous_fact_id != item.fact_id:
                    _forget_unused_fact(namespace, previous_fact_id)
                if item.fact_id is not None:
                    _sync_fact_expiry(item.fact_id)
                return item
        except IntegrityError:
            continue  # created concurrently with the same key: replace that one
    raise MemoryValidationError("key", "could not be stored (concurrent conflict); retry")


def graph_item_delete(*, namespace: str, path: str, key: str) -> bool:
    """Delete the item ``key`` at ``path`` (and its fact, when no other item shares it);
    False when there was none."""
    with change("item delete", namespace=namespace, hold="allow") as gate:
        namespace = gate.namespace
        item = (
            GraphStoreItem.objects.select_for_update()
            .filter(namespace=namespace, path=path, key=key)
            .only("pk", "fact_id")
            .first()
        )
        if item is None:
            return False
        fact_id = item.fact_id
        item.delete()
        if fact_id is not None:
            _forget_unused_fact(namespace, fact_id)
    return True


def graph_items_touch(*, namespace: str, item_ids: Sequence[int]) -> int:
    """Restart the time to live of these items (those that have one); returns items touched."""
    now = timezone.now()
    touched = 0
    with change("item touch", namespace=namespace, hold="allow") as gate:
        rows = GraphStoreItem.objects.filter(
            namespace=gate.namespace, pk__in=list(item_ids), ttl_minutes__isnull=False
        ).only("pk", "ttl_minutes", "fact_id")
        for item in rows:
            expires_at = _expiry(now, item.ttl_minutes)
            GraphStoreItem.objects.filter(pk=item.pk).update(expires_at=expires_at)
            if item.fact_id is not None:
                _sync_fact_expiry(item.fact_id)
            touched += 1
    return touched


def graph_items_sweep(*, now: dt.datetime | None = None) -> int:
    """Delete expired items (their facts expire with them); returns how many."""
    now = now or timezone.now()
    with change("item sweep", hold="allow"):
        expired = GraphStoreItem.objects.filter(expires_at__lte=now)
        facts = set(expired.exclude(fact=None).values_list("namespace", "fact_id"))
        deleted: int = expired.delete()[0]
        for namespace, fact_id in sorted(facts):
            _forget_unused_fact(namespace, fact_id)
    return deleted


def graph_profile_put(
    *, namespace: str, kind: str, data: Mapping[str, Any], ttl_minutes: float | None = None
) -> Profile:
    """Replace the namespace's ``kind`` profile with ``data`` (a store's put: the whole value,
    not ``profile_update``'s merge); ``ttl_minutes`` sets ``expires_at``. Raises
    MemoryValidationError naming the field for a bad kind or data."""
    with change("profile put", namespace=namespace, atomic=False, hold="allow") as gate:
        return _profile_put(gate, kind, data, ttl_minutes)


def _profile_put(
    gate: Change, kind: str, data: Mapping[str, Any], ttl_minutes: float | None
) -> Profile:
    namespace = gate.namespace
    kind = clean_kind(kind, field="key")
    if not isinstance(data, Mapping):
        raise MemoryValidationError("value", "must be a JSON object")
    clean = clean_json_object(data, field="value")
    now = timezone.now()
    expires_at = _expiry(now, ttl_minutes)
    for _attempt in range(2):
        try:
            with transaction.atomic():
                profile = (
                    Profile.objects.select_for_update()
                    .filter(namespace=namespace, kind=kind)
                    .first()
                )
                if profile is None:
                    profile = Profile(namespace=namespace, kind=kind)
                profile.data = clean
                profile.expires_at = expires_at
                profile.updated_at = now
                profile.save()
                return profile
        except IntegrityError:
            continue  # created concurrently: replace that one
    raise MemoryValidationError("key", "could not be stored (concurrent conflict); retry")


def graph_profile_delete(*, namespace: str, kind: str) -> bool:
    """Delete the namespace's ``kind`` profile; False when there was none."""
    with change("profile delete", namespace=namespace, hold="allow") as gate:
        return Profile.objects.filter(namespace=gate.namespace, kind=kind).delete()[0] > 0


def _expiry(now: dt.datetime, ttl_minutes: float | None) -> dt.datetime | None:
    if ttl_minutes is None:
        return None
    if (
        isinstance(ttl_minutes, bool)
        or not isinstance(ttl_minutes, int | float)
        or ttl_minutes <= 0
    ):
        raise MemoryValidationError("ttl", "must be a number of minutes > 0, or None")
    return now + dt.timedelta(minutes=float(ttl_minutes))


def _sync_fact_expiry(fact_id: int) -> None:
    """A store fact expires with the last of its items (never, if one of them never does)."""
    expiries = list(
        GraphStoreItem.objects.filter(fact_id=fact_id).values_list("expires_at", flat=True)
    )
    if not expiries:
        return
    latest = None if None in expiries else max(e for e in expiries if e is not None)
    Fact.objects.filter(pk=fact_id, kind=STORE_FACT_KIND).exclude(expires_at=latest).update(
        expires_at=latest
    )


def _forget_unused_fact(namespace: str, fact_id: int) -> None:
    if GraphStoreItem.objects.filter(fact_id=fact_id).exists():
        return
    if Fact.objects.filter(namespace=namespace, pk=fact_id, kind=STORE_FACT_KIND).exists():
        fact_forget(namespace=namespace, fact_id=fact_id)


__all__ = [
    "STORE_FACT_KIND",
    "graph_checkpoint_put",
    "graph_item_delete",
    "graph_item_put",
    "graph_items_sweep",
    "graph_items_touch",
    "graph_profile_delete",
    "graph_profile_put",
    "graph_runs_delete",
    "graph_thread_copy",
    "graph_thread_delete",
    "graph_threads_prune",
    "graph_writes_put",
]
