"""Time travel reads: where a history may be cut, what a rewind changes, a session's branches."""

from __future__ import annotations

from dataclasses import dataclass

from ttmemory.exceptions import HistoryPointError
from ttmemory.models import MemorySession, Message
from ttmemory.results import SnapshotDiff
from ttmemory.selectors.facts import facts_orphaned_by
from ttmemory.validation import clean_count


@dataclass(frozen=True, slots=True)
class HistoryCut:
    """The live history of a session split after ``seq``: what stays and what goes.

    ``kept`` and ``after`` hold ``(seq, token_count)`` of live messages, oldest first.
    """

    seq: int
    kept: tuple[tuple[int, int], ...]
    after: tuple[tuple[int, int], ...]

    @property
    def after_seqs(self) -> list[int]:
        return [seq for seq, _ in self.after]

    @property
    def after_tokens(self) -> int:
        return sum(tokens for _, tokens in self.after)


def history_cut(
    *, session: MemorySession, seq: int, field: str = "to_seq", allow_start: bool = False
) -> HistoryCut:
    """Split ``session``'s live history after ``seq``, or raise HistoryPointError.

    ``seq`` must be a live message of the session (``allow_start``: 0 too, before the first
    message), and cutting after it must not split a tool group: no live message after ``seq``
    may belong to a group that starts at or before it (a tool call whose results come later,
    or a result whose sibling results do). The error names that group, so a caller can cut
    before its call or after its last result. Reads clear metadata only.
    """
    seq = clean_count(seq, field=field, minimum=0 if allow_start else 1)
    live = Message.objects.live().filter(session=session)
    if seq and not live.filter(seq=seq).exists():
        raise HistoryPointError(
            field,
            f"#{seq} is not a live message of this session (never stored, trimmed out of the "
            "live history, or removed by a rollback or rewind)",
            seq=seq,
        )
    rows = list(live.order_by("seq").values_list("seq", "token_count", "group_seq"))
    after = [row for row in rows if row[0] > seq]
    kept = {s for s, _, _ in rows if s <= seq}
    # A group whose call was trimmed away is no longer whole in the live history anyway.
    split_heads = {group for _, _, group in after if group in kept}
    if split_heads:
        head = min(split_heads)
        last = max(s for s, _, group in rows if group in split_heads)
        raise HistoryPointError(
            field,
            f"#{seq} is inside the tool group #{head}-#{last} (a tool call and its results are "
            f"kept or removed whole); cut before #{head} or at #{last}",
            seq=seq,
            group=(head, last),
        )
    return HistoryCut(
        seq=seq,
        kept=tuple((s, tokens) for s, tokens, _ in rows if s <= seq),
        after=tuple((s, tokens) for s, tokens, _ in after),
    )


def summary_covers_after(session_summary: str | None, summary_upto_seq: int, seq: int) -> bool:
    """Whether a summary describes messages after ``seq`` (so it cannot stay at a cut there)."""
    return bool(session_summary) and summary_upto_seq > seq


def session_rewind_preview(*, session: MemorySession, to_seq: int) -> SnapshotDiff:
    """What ``session_rewind`` to ``to_seq`` would change, without changing anything.

    ``remove`` lists the live messages after ``to_seq`` as ``(seq, message)``; ``restore`` is
    always empty; ``summary_changes`` says the summary would be dropped (it covers messages
    after ``to_seq``); ``facts_superseded`` are the facts learned only from removed messages.
    Raises HistoryPointError like the rewind itself.
    """
    cut = history_cut(session=session, seq=to_seq)
    removed = cut.after_seqs
    data = dict(
        Message.objects.live()
        .filter(session=session, seq__gt=cut.seq)
        .order_by("seq")
        .values_list("seq", "data")
    )
    summary, upto = (
        MemorySession.objects.filter(pk=session.pk).values_list("summary", "summary_upto_seq").get()
    )
    return SnapshotDiff(
        remove=tuple((seq, data[seq]) for seq in removed if seq in data),
        restore=(),
        tokens_removed=cut.after_tokens,
        tokens_restored=0,
        summary_changes=summary_covers_after(summary, upto, cut.seq),
        facts_superseded=tuple(facts_orphaned_by(session=session, removed_seqs=removed)),
    )


def session_branches(*, session: MemorySession) -> list[MemorySession]:
    """The sessions forked from ``session`` (``session_fork``, ``session_edit``), oldest first.

    Only direct forks; each lists its own. ``session.parent`` is the other way up.
    """
    return list(
        MemorySession.objects.filter(parent=session, namespace=session.namespace)
        .defer("summary", "state")
        .order_by("created_at", "pk")
    )
