"""Neighbour runs: the eligible facts just before and after each seed fact, one SQL shape.

A run is what ``fusion.fact_runs`` returns for a seed: up to ``reach`` current facts of the
namespace (of the asked kinds) before it and after it, by id, and the seed. ``runs_cte`` is the
one way they are read, two ``LIMIT reach`` scans of ``ttm_fact_ns_id_idx`` per seed; the seeds
come from a CTE named ``seeds``: the best blended candidates inside the candidate statement
(``candidate_sql``), or the given ids in ``neighbour_runs``. The dialect says how a scan runs per
seed (``Dialect.join_first``). ``around`` is the same rule over the ids of the eligible facts
in memory (a namespace's matrix, ``vector_cache``), for a recall the matrix served.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from django.db import connection
from django.utils import timezone

from ttmemory.longterm import dialect
from ttmemory.longterm.dialect import Dialect
from ttmemory.models import Fact


def fact_table() -> str:
    return connection.ops.quote_name(Fact._meta.db_table)


def current(alias: str) -> str:
    """``recall.fact_filter``'s conditions, spelled out: current, not ended, not expired at
    the ``now`` parameter."""
    return (
        f"{alias}.superseded_by_id IS NULL AND {alias}.valid_to IS NULL AND "
        f"({alias}.expires_at IS NULL OR {alias}.expires_at > %(now)s)"
    )


def eligible(d: Dialect, alias: str, kinds: Iterable[str] | None, params: dict[str, Any]) -> str:
    """``current`` and of ``kinds`` (None: any kind; the list goes into ``params``)."""
    if not kinds:
        return current(alias)
    return current(alias) + " AND " + d.one_of(f"{alias}.kind", "kinds", kinds, params, kind="text")


def runs_cte(d: Dialect, *, reach: int, eligible: str) -> str:
    """``runs (seed, id)``: for each row of the CTE ``seeds (id)``, the ``reach`` facts before
    and after it that meet ``eligible`` (over alias ``f``; the namespace is ``%(ns)s``)."""
    fact, reach = fact_table(), int(reach)
    scans = []
    for op, order in (("<", "DESC"), (">", "ASC")):
        scan = (
            f"SELECT f.id FROM {fact} f WHERE f.namespace = %(ns)s AND f.id {op} s.id "
            f"AND {eligible} ORDER BY f.id {order} LIMIT {reach}"
        )
        scans.append(f"SELECT s.id AS seed, n.id FROM seeds s {d.join_first('n', fact, scan)}")
    return f"runs AS ({' UNION ALL '.join(scans)})"


def neighbour_runs(
    namespace: str, seeds: list[int], *, reach: int, kinds: Iterable[str] | None
) -> dict[int, list[int]]:
    """``fusion.fact_runs`` without a metadata filter, in SQL built without the ORM: for each
    seed, up to ``reach`` eligible facts before and after it and the seed, in order. One
    statement (``runs_cte`` over the given seeds); on PostgreSQL its text is the same for any
    number of seeds, and prepared."""
    if not seeds or reach <= 0:
        return {}
    d = dialect.current()
    params: dict[str, Any] = {"ns": namespace, "now": timezone.now()}
    given = d.table({"id": [int(seed) for seed in seeds]}, params)
    runs = runs_cte(d, reach=reach, eligible=eligible(d, "f", kinds, params))
    # Wrapped in a SELECT: a read that says so at its first word (logs, statement filters).
    sql = f"SELECT * FROM (WITH seeds AS ({given}), {runs} SELECT seed, id FROM runs) found"
    found: dict[int, list[int]] = {seed: [seed] for seed in seeds}
    with d.cursor() as cursor:
        cursor.execute(sql, params)
        for seed, fact_id in cursor.fetchall():
            found[int(seed)].append(int(fact_id))
    return {seed: sorted(ids) for seed, ids in found.items()}


def around(eligible: np.ndarray, seeds: Iterable[int], *, reach: int) -> dict[int, list[int]]:
    """``neighbour_runs``'s answer from the ids of the eligible facts, in order (the namespace's
    matrix in memory, ``vector_cache.eligible_ids``): for each seed, up to ``reach`` of them
    before it and after it, and the seed."""
    wanted = [int(seed) for seed in seeds]
    if not wanted or reach <= 0:
        return {}
    starts = np.searchsorted(eligible, wanted)  # the first eligible id >= each seed
    found: dict[int, list[int]] = {}
    for seed, at in zip(wanted, starts.tolist(), strict=True):
        after = at + 1 if at < len(eligible) and eligible[at] == seed else at
        before = eligible[max(0, at - reach) : at].tolist()
        found[seed] = [*before, seed, *eligible[after : after + reach].tolist()]
    return found
