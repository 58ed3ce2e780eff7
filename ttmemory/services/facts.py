"""Long-term memory writes: remember (upsert), supersede, forget, prune, profiles."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from ttmemory import jobs
from ttmemory.backends.embedders import get_embedder
from ttmemory.exceptions import MemoryValidationError
from ttmemory.longterm import blind
from ttmemory.longterm.embedding import embed_for
from ttmemory.models import (
    Fact,
    FactTerm,
    FactUsage,
    LegalHold,
    MemorySession,
    Message,
    Profile,
)
from ttmemory.models.binding import derived_write
from ttmemory.selectors.facts import facts_orphaned_by
from ttmemory.services.gate import Change, change
from ttmemory.services.ledger import ledger_record_embedding
from ttmemory.validation import (
    clean_datetime,
    clean_json_object,
    clean_kind,
    clean_metadata,
    clean_text,
    merged,
    refuse_invisible,
)

logger = logging.getLogger(__name__)
MAX_FACT_CHARS = 4000
# The most message seqs one call may name as a fact's source.
MAX_SOURCE_SEQS = 1000


def _clean_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise MemoryValidationError("text", "must be a non-empty string")
    if len(text) > MAX_FACT_CHARS:
        raise MemoryValidationError(
            "text", f"is {len(text)} characters; the limit is {MAX_FACT_CHARS}"
        )
    return clean_text(text.strip(), field="text")


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
    wanted = sorted(set(seqs))
    if len(wanted) > MAX_SOURCE_SEQS:
        raise MemoryValidationError(
            "source.seqs", f"names {len(wanted)} messages; the limit is {MAX_SOURCE_SEQS}"
        )
    if wanted:
        found = set(
            Message.objects.filter(session=session, seq__in=wanted).values_list("seq", flat=True)
        )
        missing = [seq for seq in wanted if seq not in found]
        if missing:
            shown = ", ".join(str(seq) for seq in missing[:5]) + (", ..." if missing[5:] else "")
            raise MemoryValidationError(
                "source.seqs", f"no message of the source session has seq {shown}"
            )
    return session.pk, wanted


@overload
def fact_remember(
    *,
    namespace: str,
    text: str,
    kind: str = "fact",
    metadata: Mapping[str, Any] | None = None,
    source: Any = None,
    expires_at: dt.datetime | None = None,
) -> Fact: ...


@overload
def fact_remember(
    *,
    namespace: str,
    text: str,
    kind: str = "fact",
    metadata: Mapping[str, Any] | None = None,
    source: Any = None,
    expires_at: dt.datetime | None = None,
    with_created: Literal[True],
) -> tuple[Fact, bool]: ...


def fact_remember(
    *,
    namespace: str,
    text: str,
    kind: str = "fact",
    metadata: Mapping[str, Any] | None = None,
    source: Any = None,
    expires_at: dt.datetime | None = None,
    with_created: bool = False,
) -> Fact | tuple[Fact, bool]:
    """Store a fact, or update the one with the same normalised text (an upsert).

    Returns the stored ``Fact`` (the existing row when the text was already known). With
    ``with_created=True`` the answer is ``(fact, created)``, decided by the same locked upsert,
    so callers that report "created" (the REST API's 201 vs 200) need no racy check of their own.

    The embedding is computed first, outside the transaction; if the embedder fails the fact is
    stored without a vector and is still found by keyword. Remembering a superseded text makes
    it current again. ``source`` is ``(session, [seqs])`` of the messages it came from; sources
    accumulate across upserts. Raises MemoryValidationError naming the field for a malformed
    namespace, text, kind or metadata, source seqs that name no message of that session (or
    more than ``MAX_SOURCE_SEQS``), or ``expires_at`` outside 1970-9999.
    """
    # The embedding is computed outside any transaction; each attempt is a transaction.
    with change("remember", namespace=namespace, atomic=False, hold="allow") as gate:
        return _remember(gate, text, kind, metadata, source, expires_at, with_created)


def _remember(
    gate: Change,
    text: Any,
    kind: Any,
    metadata: Mapping[str, Any] | None,
    source: Any,
    expires_at: dt.datetime | None,
    with_created: bool,
) -> Fact | tuple[Fact, bool]:
    namespace = gate.namespace
    text = _clean_text(text)
    kind = clean_kind(kind)
    clean_meta = clean_metadata(metadata) if metadata is not None else None
    session_id, seqs = _clean_source(source, namespace)
    if expires_at is not None:
        expires_at = clean_datetime(expires_at, field="expires_at")
    text_hash = blind.text_hash(text, namespace=namespace)
    slot = (clean_meta or {}).get("slot")
    counts, length = blind.fact_postings(
        text, slot=slot if isinstance(slot, str) else "", namespace=namespace
    )
    embedded = embed_for([text], namespace=namespace, purpose="embed")
    ledger_record_embedding(call=embedded.call)
    embedder = get_embedder()
    vector = embedded.vectors[0] if embedded.vectors else None
    for _attempt in range(2):
        try:
            with transaction.atomic():
                fact, created = _upsert(
                    namespace, text, kind, clean_meta, session_id, seqs, expires_at,
                    text_hash, (counts, length), vector, embedder.model,
                )  # fmt: skip
                gate.emit(
                    "fact.changed",
                    session_id=session_id,
                    counts={"added" if created else "updated": 1},
                    ids={"fact": fact.pk},
                )
                if vector is None:  # the embedder failed: embed it later, in the background
                    jobs.schedule("embed", fact.pk)
                return (fact, created) if with_created else fact
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
    postings: tuple[Any, int],
    vector: list[float] | None,
    model: str,
) -> tuple[Fact, bool]:
    now = timezone.now()
    # A fact not yet rebuilt by ttmemory_reindex carries the first release's (global) hash.
    hashes = [text_hash, blind.legacy_text_hash(text)]
    same = Fact.objects.select_for_update().filter(namespace=namespace, text_hash__in=hashes)
    fact = min(same, key=lambda found: found.text_hash != text_hash, default=None)
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
    fact.text_hash = text_hash
    counts, fact.term_count = postings
    fact.index_version = blind.fact_index_version(fact.namespace)
    fact.updated_at = now
    is_new = fact.pk is None
    fact.save()
    if not is_new:
        FactTerm.objects.filter(fact=fact).delete()
    FactTerm.objects.bulk_create(FactTerm.of(fact, counts))
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
    with change("supersede", namespace=namespace, stored=True, hold="allow") as gate:
        namespace = gate.namespace
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
            gate.emit(
                "fact.changed",
                counts={"superseded": 1},
                ids={"fact": new.pk, "previous": old.pk},
            )
    return new


def fact_forget(*, namespace: str, fact_id: int) -> None:
    """Delete a fact and its index entries for good. Fact.DoesNotExist if not in ``namespace``;
    ``LegalHoldError`` (nothing deleted) while the namespace is under legal hold."""
    with change("forget", namespace=namespace, stored=True, hold="check") as gate:
        fact = Fact.objects.get(namespace=gate.namespace, pk=fact_id)
        gate.refuse_if_held(session_id=fact.source_session_id)
        fact.delete()
        gate.emit("fact.changed", counts={"forgotten": 1}, ids={"fact": fact_id})


def facts_supersede_sources(*, gate: Change, removed_seqs: Sequence[int]) -> list[Fact]:
    """End (never delete) the facts whose only source messages are ``removed_seqs`` of the
    gate's session.

    Used inside the gate of a rollback or rewind, which remove messages; ``facts_orphaned_by``
    previews the same set.
    """
    session = gate.session
    assert session is not None
    orphaned = facts_orphaned_by(session=session, removed_seqs=removed_seqs)
    if orphaned:
        now = timezone.now()
        Fact.objects.filter(pk__in=[f.pk for f in orphaned]).update(valid_to=now, updated_at=now)
        gate.emit(
            "fact.changed",
            counts={"ended": len(orphaned)},
            ids={"facts": [f.pk for f in orphaned]},
        )
    return orphaned


def facts_touch_recalled(*, counts: Sequence[tuple[int, int]]) -> int:
    """Add recalls to facts' ``recall_count`` and set ``last_recalled_at``; returns facts updated.

    ``counts`` is ``(fact_id, times recalled)`` pairs, buffered by ``ttmemory.jobs.recall_counts``
    and written by the background job ``recall_touch``, so recall itself stays a read. Statistics,
    not content: an upsert into ``FactUsage`` (never the wide fact row), and on PostgreSQL the
    write does not wait for fsync (``derived_write``). Unknown ids are ignored.
    """
    by_count: dict[int, list[int]] = {}
    for fact_id, count in counts:
        by_count.setdefault(int(count), []).append(int(fact_id))
    if not by_count:
        return 0
    now = timezone.now()
    with derived_write():
        return sum(
            _upsert_usage(sorted(ids[start : start + 1000]), count, now)
            for count, ids in sorted(by_count.items())
            for start in range(0, len(ids), 1000)
        )


def _upsert_usage(ids: list[int], count: int, now: dt.datetime) -> int:
    quote = connection.ops.quote_name
    usage, fact = quote(FactUsage._meta.db_table), quote(Fact._meta.db_table)
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {usage} (fact_id, recall_count, last_recalled_at) "
            f"SELECT f.id, %s, %s FROM {fact} f WHERE f.id IN ({marks}) "
            f"ON CONFLICT (fact_id) DO UPDATE SET recall_count = {usage}.recall_count "
            "+ excluded.recall_count, last_recalled_at = excluded.last_recalled_at",
            [count, now, *ids],
        )
        return max(0, cursor.rowcount)


def facts_prune_expired(*, now: dt.datetime | None = None, batch_size: int = 1000) -> int:
    """Delete facts and profiles past ``expires_at``; returns how many facts went."""
    with change("prune facts", atomic=False, hold="allow"):
        return _prune_facts(now or timezone.now(), batch_size)


def _prune_facts(now: dt.datetime, batch_size: int) -> int:
    total = 0
    while True:
        with transaction.atomic():
            # Held ones stay (namespace holds; a session hold keeps what was learnt from it),
            # read in the transaction that deletes, so a hold placed meanwhile wins.
            held = LegalHold.objects.filter(namespace=OuterRef("namespace"))
            due = Fact.objects.filter(expires_at__lte=now).exclude(
                Exists(held.filter(session__isnull=True))
                | Exists(held.filter(session_id=OuterRef("source_session_id")))
            )
            ids = list(due.values_list("pk", flat=True)[:batch_size])
            if not ids:
                break
            Fact.objects.filter(pk__in=ids).delete()
        total += len(ids)
    with transaction.atomic():
        held_namespaces = LegalHold.objects.filter(session__isnull=True).values("namespace")
        Profile.objects.filter(expires_at__lte=now).exclude(namespace__in=held_namespaces).delete()
    return total


def profile_update(
    *,
    namespace: str,
    kind: str,
    data: Mapping[str, Any],
    expires_at: dt.datetime | None = None,
) -> Profile:
    """Merge ``data`` into the namespace's ``kind`` profile (a key set to None is removed).

    Raises MemoryValidationError naming the field for a malformed namespace or kind, data that
    is not a JSON object (or nests deeper than ``MAX_JSON_DEPTH``) and ``expires_at`` outside
    1970-9999.
    """
    with change("profile update", namespace=namespace, hold="check") as gate:
        kind = clean_kind(kind)
        if not isinstance(data, Mapping):
            raise MemoryValidationError("data", "must be a JSON object")
        clean = clean_json_object(data, field="data")
        for key in clean:  # profile keys are identifiers: nothing invisible in them
            refuse_invisible(key, field=f"data.{key}", ignorable_only=True)
        if expires_at is not None:
            expires_at = clean_datetime(expires_at, field="expires_at")
        profile, created = Profile.objects.select_for_update().get_or_create(
            namespace=gate.namespace, kind=kind, defaults={"data": {}}
        )
        if not created:  # a held profile is kept as it is (a new one may still be written)
            gate.refuse_if_held()
        profile.data = merged(profile.data, clean)
        profile.expires_at = expires_at
        profile.updated_at = timezone.now()
        profile.save()
    return profile
