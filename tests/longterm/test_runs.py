"""Neighbour runs (longterm/runs.py): each seed's eligible facts before and after it in its own
namespace, whatever the facts around it in id order belong to."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from ttmemory import memory
from ttmemory.longterm.runs import neighbour_runs
from ttmemory.models import Fact


def test_runs_stay_in_their_namespace_and_skip_what_is_not_current(db: Any) -> None:
    # The namespace asked sorts between the two others: neither side may leak into them.
    ids: dict[str, list[int]] = {"user-a": [], "user-b": [], "user-c": []}
    for n in range(12):  # ids interleaved: a, b, c, a, b, c, ...
        for namespace in ("user-a", "user-b", "user-c"):
            fact = memory.fact_remember(namespace=namespace, text=f"{namespace} fact number {n}")
            ids[namespace].append(fact.pk)
    ended = ids["user-b"][4]
    Fact.objects.filter(pk=ended).update(valid_to=timezone.now())
    a = [pk for pk in ids["user-b"] if pk != ended]

    seed = ids["user-b"][5]
    runs = neighbour_runs("user-b", [seed, a[0], a[-1]], reach=2, kinds=None)

    at = a.index(seed)
    assert runs[seed] == a[at - 2 : at + 3]  # the ended fact skipped, no other namespace's
    assert runs[a[0]] == a[:3]  # the namespace's first fact: nothing before it
    assert runs[a[-1]] == a[-3:]
