"""Time travel: rewind a session to any message, fork it there, edit a message into a new branch.

No snapshot needs to exist beforehand: a rewind takes its own safety snapshot (undone exactly
like a rollback), and a fork copies the history into a new session, leaving the parent as it is.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from ttmemory.conf import app_settings
from ttmemory.exceptions import HistoryPointError, MemoryValidationError
from ttmemory.models import MemorySession, Message, SnapshotKind
from ttmemory.results import RollbackResult
from ttmemory.selectors.history import HistoryCut, history_cut, summary_covers_after
from ttmemory.services.facts import facts_supersede_sources
from ttmemory.services.gate import Change, change
from ttmemory.services.rows import (
    MESSAGE_STATE_FIELDS,
    bump_counters,
    insert_messages,
    touch_session,
)
from ttmemory.services.sessions import message_add, messages_cut_locked
from ttmemory.services.snapshots import apply_retention_locked, take_snapshot_locked
from ttmemory.validation import clean_count, clean_key

# Snapshot labels hold at most 200 characters.
LABEL_LIMIT = 200


def rewind_mode() -> str:
    """How a rewind removes messages: ``TRIM_MODE``, but "delete" whenever a summariser is
    configured, because archived messages are what it summarises next and removed turns must
    not come back through the summary. The safety snapshot keeps them either way."""
    if app_settings.SUMMARISE_AT_TOKENS > 0:
        return "delete"
    return str(app_settings.TRIM_MODE)


def session_rewind(
    *,
    session: MemorySession,
    to_seq: int,
    reason: str | None = None,
    created_by: AbstractBaseUser | None = None,
) -> RollbackResult:
    """Remove every live message after ``to_seq``, in one transaction under the session lock.

    A safety snapshot of the current state is stored first (labelled with ``reason``), so
    ``snapshot_rollback`` to ``result.safety`` undoes the rewind exactly, as it undoes a
    rollback. Removed messages are archived or deleted per ``TRIM_MODE`` (deleted when a
    summariser is configured: ``rewind_mode``); facts learned only from them are superseded
    (ended, not deleted); a summary that covers messages after ``to_seq`` is dropped. Seqs are
    never reused. Returns the same ``RollbackResult`` as a rollback (``restored_seqs`` empty).

    Raises HistoryPointError (nothing changed) when ``to_seq`` is not a live message of the
    session or cutting after it would split a tool group (a call and its results are kept or
    removed whole; the error names the group so the caller can cut before it or after it).
    ``session_rewind_preview`` shows what a rewind would change without changing it.
    """
    to_seq = clean_count(to_seq, field="to_seq", minimum=1)
    label = _label(f"before rewind to #{to_seq}", reason)
    mode = rewind_mode()
    with change("rewind", session=session, hold="check") as gate:
        if mode == "delete":
            gate.refuse_if_held()
        touch_session(session)
        cut = history_cut(session=session, seq=to_seq)
        safety = take_snapshot_locked(
            session, label=label, kind=SnapshotKind.SAFETY, created_by=created_by
        )
        removed = cut.after_seqs
        now = timezone.now()
        messages_cut_locked(session, removed, mode=mode, now=now, rewound=True)
        # Always moves history_version on: a summary being computed now is void.
        bump_counters(
            session,
            seqs=0,
            messages=-len(removed),
            tokens=-cut.after_tokens,
            now=now,
            history=True,
        )
        summary, upto = (
            MemorySession.objects.filter(pk=session.pk)
            .values_list("summary", "summary_upto_seq")
            .get()
        )
        summary_dropped = summary_covers_after(summary, upto, to_seq)
        if summary_dropped:
            # It tells of turns after to_seq. summary_upto_seq stays, so what it covered is
            # not summarised again (that would bring the removed turns back).
            MemorySession.objects.filter(pk=session.pk).update(summary=None)
            session.summary = None
        superseded = facts_supersede_sources(gate=gate, removed_seqs=removed)
        apply_retention_locked(session, protect={safety.pk})
        gate.emit(
            "session.rewound",
            counts={
                "removed": len(removed),
                "removed_tokens": cut.after_tokens,
                "facts_superseded": len(superseded),
                "summary_dropped": int(summary_dropped),
            },
            ids={"to_seq": to_seq, "safety": safety.pk},
        )
    return RollbackResult(
        safety=safety,
        removed_seqs=tuple(removed),
        restored_seqs=(),
        superseded_facts=superseded,
    )


def session_fork(
    *, session: MemorySession, at_seq: int | None = None, key: str | None = None
) -> MemorySession:
    """A new session of the same namespace holding ``session``'s live history up to ``at_seq``.

    ``at_seq`` None copies the whole live history; 0 forks before the first message; any other
    value must be a live message that does not split a tool group (HistoryPointError, as for
    ``session_rewind``). The copy keeps seqs, roles, tool groups and times; its state variables
    and metadata are the parent's; its summary too, unless it covers messages after ``at_seq``.
    Every value is encrypted afresh for the new session's rows (never copied as ciphertext).
    The fork records ``parent`` and ``forked_at_seq`` and continues at the next seq after
    ``forked_at_seq``. ``key`` names it (default: the parent's key and a random suffix);
    MemoryValidationError when that key is taken. Read under the parent's lock, so the copy is
    a state some serial order of writes produced; the parent is never written.
    """
    if at_seq is not None:
        at_seq = clean_count(at_seq, field="at_seq", minimum=0)
    key = _fork_key(session, key)
    with change("fork", session=session, hold="allow") as gate:
        if at_seq is None:
            cut = history_cut(session=session, seq=_last_live_seq(session), allow_start=True)
            return _fork_locked(gate, cut, key=key, whole=True)
        cut = history_cut(session=session, seq=at_seq, field="at_seq", allow_start=True)
        return _fork_locked(gate, cut, key=key, whole=False)


def session_edit(
    *,
    session: MemorySession,
    seq: int,
    message: Mapping[str, Any],
    key: str | None = None,
) -> MemorySession:
    """Edit-and-regenerate in one call: a fork of ``session`` holding the live history before
    message ``seq``, then ``message`` in its place; returns the fork (its newest message is
    the edited one, ready for the model's new answer).

    ``session`` stays as it was: the previous branch (``session_branches`` lists the forks).
    One transaction: an invalid ``message`` (MemoryValidationError, as ``message_add``) leaves
    no fork behind. HistoryPointError when ``seq`` is not a live message, or when the history
    before it ends inside a tool group (``seq`` is one of a call's results, for instance).
    """
    seq = clean_count(seq, field="seq", minimum=1)
    key = _fork_key(session, key)
    # The parent's lock is held to the commit, so through the append to the fork as well.
    with change("edit", session=session, hold="allow") as gate:
        if not Message.objects.live().filter(session=session, seq=seq).exists():
            raise HistoryPointError("seq", f"#{seq} is not a live message of this session", seq=seq)
        before = (
            Message.objects.live()
            .filter(session=session, seq__lt=seq)
            .order_by("-seq")
            .values_list("seq", flat=True)
            .first()
        ) or 0
        try:
            cut = history_cut(session=session, seq=before, field="seq", allow_start=True)
        except HistoryPointError as exc:
            first, last = exc.group or (before, before)  # ``before`` is live: a group
            raise HistoryPointError(
                "seq",
                f"the history before #{seq} ends inside the tool group #{first}-#{last} "
                "(a tool call and its results are kept whole); edit a message outside "
                "the group",
                seq=seq,
                group=exc.group,
            ) from None
        fork = _fork_locked(gate, cut, key=key, whole=False)
        message_add(session=fork, message=message)
    return fork


def _fork_locked(gate: Change, cut: HistoryCut, *, key: str, whole: bool) -> MemorySession:
    """Create the fork of the gate's session at ``cut``. Call holding the parent's lock."""
    parent = gate.session
    assert parent is not None
    values = (
        MemorySession.objects.filter(pk=parent.pk)
        .values_list(
            "summary", "summary_upto_seq", "state", "metadata", "last_seq", "learned_upto_seq"
        )
        .get()
    )
    summary, summary_upto, state, metadata, last_seq, learned_upto = values
    forked_at = last_seq if whole else cut.seq
    if not whole and summary_covers_after(summary, summary_upto, cut.seq):
        summary, summary_upto = None, 0
    rows = list(
        Message.objects.live()
        .filter(session=parent, seq__lte=cut.seq)
        .order_by("seq")
        .values_list(*MESSAGE_STATE_FIELDS)
    )
    now = timezone.now()
    try:
        with transaction.atomic():
            fork = MemorySession.objects.create(
                namespace=parent.namespace,
                key=key,
                metadata=metadata,
                message_count=len(rows),
                token_count=sum(row[MESSAGE_STATE_FIELDS.index("token_count")] for row in rows),
                last_seq=forked_at,
                summary=summary,
                summary_upto_seq=summary_upto,
                learned_upto_seq=min(learned_upto, forked_at),
                state=state or {},
                parent=parent,
                forked_at_seq=forked_at,
                created_at=now,
                updated_at=now,
            )
    except IntegrityError:
        raise MemoryValidationError(
            "key", f"a session with key {key!r} already exists in this namespace"
        ) from None
    copies = []
    for row in rows:
        fields = dict(zip(MESSAGE_STATE_FIELDS, row, strict=True))
        # Plain values: each field encrypts the message for its new row (session, seq).
        copies.append(Message(session=fork, namespace=fork.namespace, **fields))
    insert_messages(copies)
    gate.emit(
        "session.forked",
        session_id=fork.pk,
        counts={"messages": len(rows)},
        ids={"parent": parent.pk, "forked_at_seq": forked_at},
    )
    return fork


def _last_live_seq(session: MemorySession) -> int:
    last = (
        Message.objects.live()
        .filter(session=session)
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
    )
    return int(last or 0)


def _fork_key(parent: MemorySession, key: str | None) -> str:
    if key is not None:
        return clean_key(key, field="key")
    suffix = f"~fork-{secrets.token_hex(4)}"
    base = parent.key[: max(1, app_settings.MAX_NAMESPACE_LENGTH - len(suffix))]
    return clean_key(base + suffix, field="key")


def _label(prefix: str, reason: str | None) -> str:
    if reason is None:
        return prefix
    if not isinstance(reason, str):
        raise MemoryValidationError("reason", "must be a string")
    reason = " ".join(reason.split())
    if not reason:
        return prefix
    label = f"{prefix}: {reason}"
    return label if len(label) <= LABEL_LIMIT else label[: LABEL_LIMIT - 1] + "…"
