"""Recall statistics, buffered per process and written by the background job ``recall_touch``.

``fact_recall`` is a read: it only counts its hits here. At most every ``RECALL_TOUCH_SECONDS``
(0: at once) and at interpreter exit the counts are handed to the job, which a service writes.
"""

from __future__ import annotations

from collections.abc import Iterable

from ttmemory.jobs.buffered import BufferedJob

JOB = "recall_touch"

_counts: BufferedJob[dict[int, int]] = BufferedJob(
    JOB, new=dict, drain=lambda counts: sorted(counts.items()), what="recall counts"
)
flush = _counts.flush  # (*, inline=True) -> facts handed over


def count_recalled(fact_ids: Iterable[int]) -> None:
    """Count one recall of each fact; hand the counts over when ``RECALL_TOUCH_SECONDS`` passed."""

    def count(counts: dict[int, int]) -> None:
        for fact_id in fact_ids:
            counts[fact_id] = counts.get(fact_id, 0) + 1

    _counts.add(count)
