"""Episodic index writes: postings caught up off the append path, vectors after, deletes with rows.

An append stores its messages and nothing else; the ``message_index`` job
(``messages_index_pending``), queued after commit when a session's first message is stored and
then every ``MESSAGE_INDEX_EVERY`` messages, hashes their terms outside the session lock and
writes the blind-index postings under it, moving the session's ``indexed_upto_seq`` on. Until
then ``message_search`` scores the messages past that mark from the stored messages themselves
(``longterm.episodes.keyword_scores``), so a message is found as soon as it is committed and
search results do not depend on whether the job has run. Vectors are made by the background
job ``message_embed`` after the postings (an embedder never sits on the append path).
Services that delete messages delete their index rows in the same transaction
(``index_delete_locked``), and the job writes under the same session lock only the messages
still stored then, so it can never index a message deleted meanwhile.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, models, transaction
from django.db.models import F, Q, QuerySet

from ttmemory import jobs
from ttmemory.backends.embedders import get_embedder
from ttmemory.backends.locks import session_lock_hold
from ttmemory.conf import app_settings
from ttmemory.exceptions import EmbeddingError
from ttmemory.longterm import blind, episodes
from ttmemory.longterm.embedding import embed_for
from ttmemory.longterm.episodes import entry_postings, message_text
from ttmemory.models import MemorySession, Message, MessageEntry, MessageTerm
from ttmemory.models.binding import derived_write
from ttmemory.services.ledger import ledger_record_embedding

# Messages embedded per call of the embedder by the background job.
EMBED_BATCH = 64


def index_messages_locked(
    session: MemorySession,
    messages: Sequence[tuple[int, Mapping[str, Any]]],
    *,
    fresh: bool = False,
) -> int:
    """Index ``(seq, message)`` pairs just stored in ``session``; return how many were indexed.

    Writes one ``MessageEntry`` and the ``MessageTerm`` postings (keyed hashes only) per
    message with text that has no entry yet (a seq always holds the same message, so a
    restored message keeps the entry it had), in a few multi-row INSERTs, and queues
    ``message_embed`` after commit. ``fresh``: the seqs are new (an append), none can have an
    entry, so none is looked for. Call inside the storing transaction.
    """
    if not app_settings.MESSAGE_SEARCH_INDEX or not messages:
        return 0
    return _write_index(session, _index_rows(session, messages), fresh=fresh)


@dataclass
class _IndexRows:
    """The index rows of some messages of one session, by seq (``_index_rows``)."""

    entries: dict[int, tuple[Any, ...]]
    postings: dict[int, list[tuple[Any, ...]]]


def _index_rows(
    session: MemorySession,
    messages: Sequence[tuple[int, Mapping[str, Any]]],
    *,
    pause: Callable[[], None] | None = None,
) -> _IndexRows:
    """The entry and postings of each message with text: term hashing, no database access.
    ``pause`` is called before each message (``jobs.pause``, where nothing is held)."""
    namespace = session.namespace
    version = blind.index_version(namespace)
    rows = _IndexRows({}, {})
    memo: dict[str, int] = {}
    session_id = session.pk
    for seq, message in messages:
        if pause is not None:
            pause()
        text = message_text(message)
        if not text.strip():
            continue
        counts = entry_postings(text, namespace=namespace, memo=memo)
        rows.entries[seq] = (session_id, namespace, seq, sum(counts.values()), "", version)
        rows.postings[seq] = [(session_id, namespace, seq, term, tf) for term, tf in counts.items()]
    return rows


def _write_index(
    session: MemorySession,
    rows: _IndexRows,
    *,
    fresh: bool = False,
    stored: set[int] | None = None,
) -> int:
    """Insert ``rows`` of the seqs that have no entry yet (``fresh``: none can have one) and,
    when given, are in ``stored``; queue ``message_embed``. Inside the storing transaction, or
    under the session lock."""
    seqs = [seq for seq in rows.entries if stored is None or seq in stored]
    if not fresh:
        existing = _indexed_seqs(session, seqs)
        seqs = [seq for seq in seqs if seq not in existing]
    if not seqs:
        return 0
    _insert(MessageEntry, _ENTRY_COLUMNS, [rows.entries[seq] for seq in seqs])
    _insert(MessageTerm, _TERM_COLUMNS, [p for seq in seqs for p in rows.postings[seq]])
    if episodes.vector_weight() > 0:  # else searched by keyword only: no vector to make
        jobs.schedule("message_embed", session.pk)
    return len(seqs)


_ENTRY_COLUMNS = (
    "session_id",
    "namespace",
    "seq",
    "term_count",
    "embedding_model",
    "index_version",
)
_TERM_COLUMNS = ("session_id", "namespace", "seq", "term", "tf")
CHUNK = 900  # SQLite's bound-parameter limit over the widest row


def _indexed_seqs(session: MemorySession, seqs: Sequence[int]) -> set[int]:
    """Which of ``seqs`` have an index entry already (one query per ``CHUNK`` seqs)."""
    have: set[int] = set()
    for start in range(0, len(seqs), CHUNK):
        have.update(
            MessageEntry.objects.filter(
                session_id=session.pk, seq__in=seqs[start : start + CHUNK]
            ).values_list("seq", flat=True)
        )
    return have


def _insert(model: type[models.Model], columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    """Multi-row INSERTs of plain values (no model instances: this runs on every append).

    On PostgreSQL one COPY: a VALUES list of thousands of placeholders costs psycopg more to
    parse than the database to run.
    """
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    names = ", ".join(quote(c) for c in columns)
    if connection.vendor == "postgresql":
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
        return
    placeholder = "(" + ", ".join(["%s"] * len(columns)) + ")"
    per = max(1, 30_000 // len(columns) // 10)  # rows per statement, well under SQLite's limit
    with connection.cursor() as cursor:
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            cursor.execute(
                f"INSERT INTO {table} ({names}) VALUES {', '.join([placeholder] * len(chunk))}",
                list(itertools.chain.from_iterable(chunk)),
            )


def messages_index_pending(
    *,
    session_id: int | None = None,
    namespace: str | None = None,
    batch_size: int | None = None,
    sweep: bool = True,
) -> int:
    """Index the stored messages past each session's ``indexed_upto_seq``; return how many.

    The ``message_index`` job: for ``session_id``'s session and the other sessions of its
    namespace that are behind (only that session when ``sweep`` is False: what an append's
    trigger asks, so an append never pays for other sessions' tails; or of ``namespace``, or
    every session when both are None), ``batch_size`` messages (default ``BATCH_SIZE``) per
    transaction. A batch is read and hashed outside the session's lock (appends wait for that
    lock: hashing is most of the job) and written under it, after re-reading the mark and which
    of its seqs are still stored (a seq always holds the same message): a delete, trim or
    rollback meanwhile is never raced, what it deleted is not indexed and what it restored is
    (read again under the lock), and a mark moved meanwhile means reading again. On
    PostgreSQL its own commits do not wait for the WAL flush (``synchronous_commit`` off for
    them alone: what a crash loses is indexed again). Idempotent: a message
    that has an entry (a restored one) is skipped, a second run finds nothing to do. Nothing
    while ``MESSAGE_SEARCH_INDEX`` is off.
    """
    if not app_settings.MESSAGE_SEARCH_INDEX:
        return 0
    batch = batch_size or app_settings.BATCH_SIZE
    if session_id is not None and not sweep:
        return _index_session(session_id, batch)
    behind = MemorySession.objects.filter(indexed_upto_seq__lt=F("last_seq"))
    if session_id is not None:
        owner = MemorySession.objects.filter(pk=session_id).values_list("namespace", flat=True)
        namespace = owner.first()
        if namespace is None:  # deleted since the job was queued
            return 0
    if namespace is not None:
        behind = behind.filter(namespace=namespace)
    done = 0
    for pk in behind.order_by("pk").values_list("pk", flat=True):
        done += _index_session(pk, batch)
    return done


def _index_session(session_id: int, batch: int) -> int:
    done = 0
    while True:
        # Read and hash outside the session's lock (appenders wait for it): a seq always holds
        # the same message, so what is read here is what is stored, if it still is; under
        # the lock only the seqs still stored and still past the mark are written.
        row = (
            MemorySession.objects.filter(pk=session_id)
            .values_list("namespace", "indexed_upto_seq", "last_seq")
            .first()
        )
        if row is None:
            return done
        namespace, upto, last = row
        if upto >= last:
            return done
        messages = list(
            Message.objects.filter(session_id=session_id, seq__gt=upto)
            .order_by("seq")
            .values_list("seq", "data")[:batch]
        )
        mark = messages[-1][0] if len(messages) == batch else last
        session = MemorySession(pk=session_id, namespace=namespace)
        rows = _index_rows(session, messages, pause=jobs.pause)  # nothing held: may pause
        # Derived rows: a crash can lose only such a transaction, its postings and its move of
        # the mark together, and the next run indexes those messages again (searched from the
        # stored ones meanwhile).
        with derived_write():
            session_lock_hold(session_id)
            now = (
                MemorySession.objects.filter(pk=session_id)
                .values_list("indexed_upto_seq", flat=True)
                .first()
            )
            if now is None:
                return done
            if now != upto:  # another run moved the mark, or a restore moved it back: again
                continue
            stored = set(
                Message.objects.filter(
                    session_id=session_id, seq__gt=upto, seq__lte=mark
                ).values_list("seq", flat=True)
            )
            missing = sorted(stored - {seq for seq, _ in messages})
            if missing:  # restored since the read, past the mark: read under the lock
                restored = Message.objects.filter(session_id=session_id, seq__in=missing)
                more = _index_rows(session, list(restored.values_list("seq", "data")))
                rows.entries.update(more.entries)
                rows.postings.update(more.postings)
            _write_index(session, rows, stored=stored)
            MemorySession.objects.filter(pk=session_id).update(indexed_upto_seq=mark)
            done += len(stored)
        if mark >= last:
            return done


def index_behind_locked(session: MemorySession, seqs: Sequence[int]) -> None:
    """Messages ``seqs`` were stored again (a restore, a fork's copies): move the session's
    ``indexed_upto_seq`` back before them and queue ``message_index`` after commit.

    Those whose index rows survived are skipped by the job; ``message_search`` scores the
    others from the stored messages until it has run. Call inside the storing transaction.
    """
    if not seqs or not app_settings.MESSAGE_SEARCH_INDEX:
        return
    ordered = sorted(seqs)
    have = _indexed_seqs(session, ordered)
    missing = [seq for seq in ordered if seq not in have]
    if not missing:
        return
    first = missing[0] - 1
    MemorySession.objects.filter(pk=session.pk, indexed_upto_seq__gt=first).update(
        indexed_upto_seq=first
    )
    jobs.schedule("message_index", session.pk)


def index_delete_locked(session: MemorySession | int, seqs: Iterable[int] | None = None) -> int:
    """Delete the index rows of ``seqs`` of a session (all of them when None); entries deleted."""
    session_id = session if isinstance(session, int) else session.pk
    entries = MessageEntry.objects.filter(session_id=session_id)
    terms = MessageTerm.objects.filter(session_id=session_id)
    if seqs is None:
        terms.delete()
        return entries.delete()[0]
    wanted = list(seqs)
    deleted = 0
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start : start + CHUNK]
        terms.filter(seq__in=chunk).delete()
        deleted += entries.filter(seq__in=chunk).delete()[0]
    return deleted


def index_delete_archived_upto(session: MemorySession, upto_seq: int) -> int:
    """Delete the index rows of the archived messages up to ``upto_seq`` (a summary's delete)."""
    seqs = Message.objects.filter(
        session=session, archived_at__isnull=False, seq__lte=upto_seq
    ).values_list("seq", flat=True)
    return index_delete_locked(session, list(seqs))


def messages_embed(*, session_id: int, limit: int = 1000) -> int:
    """Embed up to ``limit`` indexed messages of a session lacking a current vector; count.

    Idempotent (what is embedded with the configured model is skipped). Raises EmbeddingError
    when the embedder fails, so a retrying task tries again; keyword search is unaffected.
    """
    embedder = get_embedder()
    pending = list(
        _stale(embedder.model, embedder.dimensions)
        .filter(session_id=session_id)
        .order_by("seq")
        .values_list("seq", flat=True)[:limit]
    )
    done = 0
    for start in range(0, len(pending), EMBED_BATCH):
        done += _embed_seqs(session_id, pending[start : start + EMBED_BATCH], embedder.model)
    return done


def _stale(model: str, dimensions: int) -> QuerySet[MessageEntry]:
    return MessageEntry.objects.filter(
        Q(embedding__isnull=True) | ~Q(embedding_model=model) | ~Q(embedding_dim=dimensions)
    )


def _embed_seqs(session_id: int, seqs: list[int], model: str) -> int:
    texts = dict(
        (seq, message_text(data))
        for seq, data in Message.objects.filter(session_id=session_id, seq__in=seqs).values_list(
            "seq", "data"
        )
    )
    present = [seq for seq in seqs if texts.get(seq, "").strip()]
    if not present:
        return 0
    namespace = MemorySession.objects.values_list("namespace", flat=True).get(pk=session_id)
    embedded = embed_for([texts[seq] for seq in present], namespace=namespace, purpose="embed")
    ledger_record_embedding(call=embedded.call)
    vectors = embedded.vectors
    if vectors is None:
        raise EmbeddingError(embedded.reason)
    field = MessageEntry._meta.get_field("embedding")
    quote = connection.ops.quote_name
    # One statement run per row with executemany (psycopg pipelines it): bulk_update's CASE
    # expression cost about ten times more on a 100-message append.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {quote(MessageEntry._meta.db_table)} SET embedding = %s, "
            "embedding_model = %s, embedding_dim = %s WHERE session_id = %s AND seq = %s",
            [
                (field.get_db_prep_value(vector, connection), model, len(vector), session_id, seq)
                for seq, vector in zip(present, vectors, strict=True)
            ],
        )
    return len(present)


@dataclass
class EpisodicRebuildStats:
    """One run over the episodic index: sessions visited, entries rebuilt or embedded."""

    pending: int = 0
    done: int = 0
    sessions: int = 0


def messages_reindex(
    *, batch_size: int = 500, on_batch: Callable[[int], None] | None = None
) -> EpisodicRebuildStats:
    """Rebuild the postings of every message indexed with another blind index (key, tokenizer).

    Session by session, ``batch_size`` messages per transaction; stopping and running again
    resumes. Also indexes stored messages that have text and no entry yet (stored before the
    index existed) and drops entries whose message is gone.
    """
    stats = EpisodicRebuildStats()
    stale_sessions = set(
        blind.stale(MessageEntry.objects.all()).values_list("session_id", flat=True)
    )
    indexed = MessageEntry.objects.values_list("session_id", "seq")
    stats.pending = blind.stale(MessageEntry.objects.all()).count()
    for session in MemorySession.objects.order_by("pk").iterator():
        have = set(indexed.filter(session_id=session.pk).values_list("seq", flat=True))
        seqs = list(
            Message.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)
        )
        missing = [seq for seq in seqs if seq not in have]
        gone = have - set(seqs)
        if session.pk not in stale_sessions and not missing and not gone:
            continue
        stats.sessions += 1
        if gone:
            index_delete_locked(session, sorted(gone))
        todo = seqs if session.pk in stale_sessions else missing
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            with transaction.atomic():
                index_delete_locked(session, chunk)
                rows = Message.objects.filter(session=session, seq__in=chunk).values_list(
                    "seq", "data"
                )
                index_messages_locked(session, list(rows))
            stats.done += len(chunk)
            if on_batch is not None:
                on_batch(len(chunk))
        if seqs:  # every stored message is indexed now: message_index has nothing to do here
            MemorySession.objects.filter(pk=session.pk, indexed_upto_seq__lt=seqs[-1]).update(
                indexed_upto_seq=seqs[-1]
            )
    return stats


def messages_reembed(
    *, batch_size: int = 64, on_batch: Callable[[int], None] | None = None
) -> EpisodicRebuildStats:
    """Give every indexed message a vector of the configured embedder (resumable batches).

    Nothing to do while ``message_search`` uses no vectors (its weight is 0).
    """
    if episodes.vector_weight() <= 0:
        return EpisodicRebuildStats()
    embedder = get_embedder()
    stale = _stale(embedder.model, embedder.dimensions)
    stats = EpisodicRebuildStats(pending=stale.count())
    for session_id in sorted(set(stale.values_list("session_id", flat=True))):
        stats.sessions += 1
        seqs = list(
            stale.filter(session_id=session_id).order_by("seq").values_list("seq", flat=True)
        )
        for start in range(0, len(seqs), batch_size):
            chunk = seqs[start : start + batch_size]
            _embed_seqs(session_id, chunk, embedder.model)
            stats.done += len(chunk)
            if on_batch is not None:
                on_batch(len(chunk))
    return stats
