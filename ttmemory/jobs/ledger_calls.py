"""Embedding calls made by reads, buffered per process and written by the job ``ledger_record``.

``fact_recall`` and ``message_search`` are reads: they hand the ledger rows of their billable
query embeddings here. Like recall statistics (``recall_counts``), they are handed to the job
at most every ``RECALL_TOUCH_SECONDS`` (0: at once) and at interpreter exit, so a recall costs
no write of its own; the daily token budget sees them once written.
"""

from __future__ import annotations

from typing import Any

from ttmemory.jobs.buffered import BufferedJob
from ttmemory.longterm.embedding import EmbeddingCall

JOB = "ledger_record"

_rows: BufferedJob[list[dict[str, Any]]] = BufferedJob(
    JOB, new=list, drain=list, what="ledger rows"
)
_take = _rows.take  # empties the buffer unwritten (bench/http_pool.py)
flush = _rows.flush  # (*, inline=True) -> rows handed over


def record_later(call: EmbeddingCall | None) -> None:
    """Buffer one call's ledger row; hand the buffer over when ``RECALL_TOUCH_SECONDS`` passed."""
    if call is None:
        return
    row = call.as_row()
    _rows.add(lambda rows: rows.append(row))
