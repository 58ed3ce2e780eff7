"""Long-term memory writes: remember (upsert), supersede, forget, prune, profiles."""

from __future__ import annotations

import atexit
import datetime as dt
import logging
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from ttmemory import blind, events, scheduling
from ttmemory.backends.embedders import get_embedder
from ttmemory.conf import app_settings
from ttmemory.embedding import embed_texts
from ttmemory.exceptions import MemoryValidationError
from ttmemory.models import Fact, FactTerm, MemorySession, Profile
from ttmemory.validation import clean_identifier, clean_json_object, merged

logger = logging.getLogger(__name__)
KIND_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
MAX_FACT_CHARS = 4000
METADATA_KEY_RE = re.compile(r"^[A-Za-z0-9_]{1,64}$")


def clean_kind(kind: Any, *, field: str = "kind") -> str:
    if not isinstance(kind, str) or not KIND_RE.match(kind):
        raise MemoryValidationError(
            field, "must be 1-32 lowercase letters, digits or '_', starting with a letter"
        )
    return kind


def clean_metadata(metadata: Any, *, field: str = "metadata") -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise MemoryValidationError(field, "must be a JSON object")
    for key in metadata:
        if not isinstance(key, str) or not METADATA_KEY_RE.match(key):
            raise MemoryValidationError(
                f"{field}.{key}", "keys must be 1-64 letters, digits or '_'"
            )
    return clean_json_object(metadata, field=field)


def _clean_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise MemoryValidationError("text", "must be a non-empty string")
    if len(text) > MAX_FACT_CHARS:
        raise MemoryValidationError(
            "text", f"is {len(text)} characters; the limit is {MAX_FACT_CHARS}"
        )
    return text.strip()


def _clean_source(source: Any, namespace: str) -> tuple[int | None, list[int]]:
    if source is None:
        return None, []
    if isinstance(source, Mapping):
        session, seqs = source.get("session"), source.get("seqs", [])
    elif isinstance(source, tuple | list) and len(source) == 2:
        session, seqs = source
    else:
        raise MemoryValidationError("source", "must be (session, [seqs]) or {'session', 'seqs'}")
    if not isinstance(session, MemorySession):
        raise MemoryValidationError("source.session", "must be a MemorySession")
    if session.namespace != namespace:
        raise MemoryValidationError("source.session", "belongs to another namespace")
    if not isinstance(seqs, list | tuple) or not all(
        isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in seqs
    ):
        raise MemoryValidationError("source.seqs", "must be a list of positive message seqs")
    return session.pk, sorted(set(seqs))


def fact_remember(
    *,
    namespace: str,
    text: str,
    kind: str = "fact",
    metadata: Mapping[str, Any] | None = None,
    source: Any = None,
    expires_at: dt.datetime | None = None,
) -> Fact:
    """Store a fact, or update the one with the same normalised text (an upsert).

    The embedding is computed first, outside the transaction; if the embedder fails the fact is
    stored without a vector and is still found by keyword. Remembering a superseded text makes
    it current again. ``source`` is ``(session, [seqs])`` of the messages it came from; sources
    accumulate across upserts.
    """
    namespace = clean_identifier(namespace, field="namespace")
    text = _clean_text(text)
    kind = clean_kind(kind)
    clean_meta = clean_metadata(metadata) if metadata is not None else None
    session_id, seqs = _clean_source(source, namespace)
    if expires_at is not None and not isinstance(expires_at, dt.datetime):
        raise MemoryValidationError("expires_at", "must be a datetime")
    text_hash = blind.text_hash(text)
    counts = blind.term_counts(text)
    vectors, _ = embed_texts([text])
    embedder = get_embedder()
    vector = vectors[0] if vectors else None
    for _attempt in range(2):
        try:
            with transaction.atomic():
                fact, created = _upsert(
                    namespace, text, kind, clean_meta, session_id, seqs, expires_at,
                    text_hash, counts, vector, embedder.model,
                )  # fmt: skip
                events.emit(
                    "fact.changed",
                    namespace=namespace,
                    session_id=session_id,
                    counts={"added" if created else "updated": 1},
                    ids={"fact": fact.pk},
                )
                if vector is None:  # the embedder failed: embed it later, in the background
                    scheduling.schedule("embed", fact.pk)
                return fact
        except IntegrityError:
            continue  # a concurrent remember created it first: update that one
    raise MemoryValidationError("text", "could not be stored (concurrent conflict); retry")


def _upsert(
    namespace: str,
    text: str,
    kind: str,
    metadata: dict[str, Any] | None,
    session_id: int | None,
    seqs: list[int],
    expires_at: dt.datetime | None,
    text_hash: str,
    counts: Any,
    vector: list[float] | None,
    model: str,
) -> tuple[Fact, bool]:
    now = timezone.now()
    fact = Fact.objects.select_for_update().filter(namespace=namespace, text_hash=text_hash).first()
    if fact is None:
        fact = Fact(namespace=namespace, text_hash=text_hash, valid_from=now, created_at=now)
    elif fact.source_session_id not in (None, session_id) and session_id is not None:
        seqs = []  # keep the first session's provenance; a second session adds no seqs
        session_id = fact.source_session_id
    fact.text = text
    fact.kind = kind
    if metadata is not None:
        fact.metadata = metadata
    if expires_at is not None or fact.pk is None:
        fact.expires_at = expires_at
    if session_id is not None:
        fact.source_session_id = session_id
        fact.source_seqs = sorted(set(fact.source_seqs or []) | set(seqs))
    fact.valid_to = None
    fact.superseded_by = None
    if vector is not None:
        fact.embedding = vector
        fact.embedding_model = model
        fact.embedding_dim = len(vector)
    fact.term_count = sum(counts.values())
    fact.updated_at = now
    is_new = fact.pk is None
    fact.save()
    if not is_new:
        FactTerm.objects.filter(fact=fact).delete()
    FactTerm.objects.bulk_create(
        FactTerm(fact=fact, namespace=namespace, term=term, tf=min(tf, 32767))
        for term, tf in counts.items()
    )
    return fact, is_new


def fact_supersede(
    *,
    namespace: str,
    fact_id: int,
    text: str,
    kind: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    source: Any = None,
) -> Fact:
    """Replace a fact by a new version: the old one keeps its row with ``valid_to`` and
    ``superseded_by`` (the chain), the new one is returned. Fact.DoesNotExist if ``fact_id``
    is not a current fact of ``namespace``.
    """
    namespace = clean_identifier(namespace, field="namespace")
    with transaction.atomic():
        old = Fact.objects.select_for_update().current().get(namespace=namespace, pk=fact_id)
        new = fact_remember(
            namespace=namespace,
            text=text,
            kind=kind or old.kind,
            metadata=metadata if metadata is not None else old.metadata,
            source=source,
        )
        if new.pk != old.pk:
            Fact.objects.filter(pk=old.pk).update(
                valid_to=timezone.now(), superseded_by=new, updated_at=timezone.now()
            )
            events.emit(
                "fact.changed",
                namespace=namespace,
                counts={"superseded": 1},
                ids={"fact": new.pk, "previous": old.pk},
            )
    return new


def fact_forget(*, namespace: str, fact_id: int) -> None:
    """Delete a fact and its index entries for good. Fact.DoesNotExist if not in ``namespace``."""
    namespace = clean_identifier(namespace, field="namespace")
    with transaction.atomic():
        fact = Fact.objects.get(namespace=namespace, pk=fact_id)
        fact.delete()
        events.emit(
            "fact.changed", namespace=namespace, counts={"forgotten": 1}, ids={"fact": fact_id}
        )


def facts_supersede_sources(
    *, session: MemorySession, removed_seqs: Sequence[int], dry_run: bool = False
) -> list[Fact]:
    """Facts whose only source messages are ``removed_seqs`` of ``session``: ended (not deleted).

    Used by rollback, which removes messages; with ``dry_run`` nothing changes (previews).
    """
    removed = set(removed_seqs)
    if not removed:
        return []
    candidates = list(Fact.objects.current().filter(source_session=session))
    orphaned = [f for f in candidates if f.source_seqs and set(f.source_seqs) <= removed]
    if orphaned and not dry_run:
        now = timezone.now()
        Fact.objects.filter(pk__in=[f.pk for f in orphaned]).update(valid_to=now, updated_at=now)
        events.emit(
            "fact.changed",
            namespace=session.namespace,
            session_id=session.pk,
            counts={"ended": len(orphaned)},
            ids={"facts": [f.pk for f in orphaned]},
        )
    return orphaned


_touch_lock = threading.Lock()
_touch_buffer: dict[int, int] = {}
_touch_flushed_at = 0.0


def facts_touch_recalled(*, fact_ids: Sequence[int]) -> None:
    """Count a recall of these facts (``recall_count``, ``last_recalled_at``).

    Statistics, not content: counts are buffered per process and written at most every
    ``RECALL_TOUCH_SECONDS`` (and at exit), so recall stays a read. On PostgreSQL the write
    does not wait for fsync.
    """
    global _touch_flushed_at

    with _touch_lock:
        for fact_id in fact_ids:
            _touch_buffer[fact_id] = _touch_buffer.get(fact_id, 0) + 1
        due = time.monotonic() - _touch_flushed_at >= app_settings.RECALL_TOUCH_SECONDS
    if due:
        flush_recall_touches()


def flush_recall_touches() -> int:
    """Write buffered recall counts now; returns how many facts were updated."""
    global _touch_flushed_at
    with _touch_lock:
        pending = dict(_touch_buffer)
        _touch_buffer.clear()
        _touch_flushed_at = time.monotonic()
    if not pending:
        return 0
    now = timezone.now()
    by_count: dict[int, list[int]] = {}
    for fact_id, count in pending.items():
        by_count.setdefault(count, []).append(fact_id)
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit = off")
        for count, ids in by_count.items():
            Fact.objects.filter(pk__in=ids).update(
                recall_count=F("recall_count") + count, last_recalled_at=now
            )
    return len(pending)


def _flush_at_exit() -> None:
    try:
        flush_recall_touches()
    except Exception:  # the database may be gone at interpreter exit
        logger.debug("could not write buffered recall counts at exit", exc_info=True)


atexit.register(_flush_at_exit)


def facts_prune_expired(*, now: dt.datetime | None = None, batch_size: int = 1000) -> int:
    """Delete facts and profiles past ``expires_at``; returns how many facts went."""
    now = now or timezone.now()
    total = 0
    while True:
        ids = list(
            Fact.objects.filter(expires_at__lte=now).values_list("pk", flat=True)[:batch_size]
        )
        if not ids:
            break
        with transaction.atomic():
            Fact.objects.filter(pk__in=ids).delete()
        total += len(ids)
    Profile.objects.filter(expires_at__lte=now).delete()
    return total


def profile_update(
    *,
    namespace: str,
    kind: str,
    data: Mapping[str, Any],
    expires_at: dt.datetime | None = None,
) -> Profile:
    """Merge ``data`` into the namespace's ``kind`` profile (a key set to None is removed)."""
    namespace = clean_identifier(namespace, field="namespace")
    kind = clean_kind(kind)
    if not isinstance(data, Mapping):
        raise MemoryValidationError("data", "must be a JSON object")
    clean = clean_json_object(data, field="data")
    with transaction.atomic():
        profile, _ = Profile.objects.select_for_update().get_or_create(
            namespace=namespace, kind=kind, defaults={"data": {}}
        )
        profile.data = merged(profile.data, clean)
        profile.expires_at = expires_at
        profile.updated_at = timezone.now()
        profile.save()
    return profile
