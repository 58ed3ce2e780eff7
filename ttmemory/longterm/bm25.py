"""BM25, the one definition every keyword ranking uses: Okapi BM25 with Lucene's idf.

    idf(N, n)            = ln(1 + (N - n + 0.5) / (n + 0.5))
    score(tf, len; idf)  = idf * tf * (k1 + 1) / (tf + k1 * (1 - b) + k1 * b * len / avgdl)

with k1 = ``K1``, b = ``B``. ``idf`` and ``term_score`` are written once, over any operands that
do arithmetic: Python floats (``fusion.fact_related``, ``episodes.keyword_scores``), Django
expressions (``recall.keyword_scores``, the ORM path of a metadata filter) and ``Sql`` (the SQL
text of ``candidates``, where the candidate lists are ranked in the database). So a change of
formula or constants reaches every path. tests/longterm/test_bm25.py checks the scores against
rank-bm25 on both databases.

Frequent words: in a namespace of repetitive facts (the same names, relations and verbs in
thousands of facts) a query word's posting list can be a large share of the namespace. Each
posting carries its fact's length (``FactTerm.length``), so a word's postings are scored from
the postings index alone, and a fact row is read only for the best-scored facts (to keep the
current ones). The query's words are read rarest first while their postings stay within
``POSTINGS_BUDGET``; a word beyond it finds no candidates by itself, it only scores the best
``FREQUENT_CANDIDATES`` of the facts the read words found and the vector list's (``candidates``),
so those get their BM25 over all query words. ``uncapped`` lifts the budget (benchmarks compare
both: docs/benchmarks.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any

K1 = 1.2
B = 0.75

#: Postings of the query's rarest words read whole, from the index alone, to rank keyword
#: candidates (see above). 20,000 reads every query word of the repetitive profile at 50,000
#: facts (top 10 kept of uncapped 1.000; 500, when each posting read its fact row, kept 0.545),
#: and bounds a query of words in most of a large namespace (docs/benchmarks.md).
POSTINGS_BUDGET = 20_000

#: Of the facts the read words found, the best this many by those words are also scored by the
#: words past the budget (with the vector candidates), one index lookup each.
FREQUENT_CANDIDATES = 200

#: Namespaces of at most this many facts read every query word's postings whole: there no
#: word's postings are many, and the budget's own steps (ranking the words by document
#: frequency, the frequent words' lookups) cost more than they spared: 0.13-0.19 ms of a 1.4-2.8
#: ms statement at 1,000-3,500 facts, where at 5,000 repetitive facts the budget saved 1.8 ms
#: (docs/benchmarks.md, "Repetitive vocabulary").
BUDGET_ABOVE_FACTS = 2_000

_capped = True

#: How long a large namespace's counted statistics (N, lengths) are used before they are
#: counted again: counting every document on every query costs more than they change.
KEPT_SECONDS = 30.0


def idf(total: Any, n: Any, *, ln: Any = math.log) -> Any:
    """Inverse document frequency of a word in ``n`` of ``total`` documents (``ln``: the
    logarithm of the operands' kind; ``Sql.ln`` for SQL text)."""
    return ln(1.0 + (total - n + 0.5) / (n + 0.5))


def term_score(tf: Any, length: Any, *, weight: Any, avgdl: Any) -> Any:
    """One word's BM25 score in a document of ``length`` terms where it occurs ``tf`` times;
    ``weight`` is its ``idf``. Operands: floats, Django expressions or ``Sql`` (the result is
    of their kind)."""
    return saturated(tf, weight=weight, length_part=length_part(length, avgdl=avgdl))


def length_part(length: Any, *, avgdl: Any) -> Any:
    """``term_score``'s part of a document's length, ``K1 * B * length / avgdl``."""
    return K1 * B * length / avgdl


def saturated(tf: Any, *, weight: Any, length_part: Any) -> Any:
    """``term_score`` given its ``length_part``: the same arithmetic in the same order, for a
    caller scoring many words of one length (computed once), or numpy arrays of them."""
    return weight * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B) + length_part)


class Sql(str):
    """SQL text that does arithmetic: ``Sql("p.tf") * 2.2`` is ``Sql("(p.tf * 2.2)")``.

    Floats become their ``repr`` (exact), so the SQL computes what Python computes."""

    @staticmethod
    def of(value: Any) -> Sql:
        if isinstance(value, Sql):
            return value
        if isinstance(value, int | float):
            return Sql(repr(float(value)))
        raise TypeError(f"not SQL: {value!r}")

    def _op(self, op: str, other: Any, *, right: bool = False) -> Sql:
        a, b = (Sql.of(other), self) if right else (self, Sql.of(other))
        return Sql(f"({a} {op} {b})")

    def __add__(self, other: Any) -> Sql:
        return self._op("+", other)

    def __radd__(self, other: Any) -> Sql:
        return self._op("+", other, right=True)

    def __sub__(self, other: Any) -> Sql:
        return self._op("-", other)

    def __rsub__(self, other: Any) -> Sql:
        return self._op("-", other, right=True)

    def __mul__(self, other: Any) -> Sql:
        return self._op("*", other)

    def __rmul__(self, other: Any) -> Sql:
        return self._op("*", other, right=True)

    def __truediv__(self, other: Any) -> Sql:
        return self._op("/", other)

    def __rtruediv__(self, other: Any) -> Sql:
        return self._op("/", other, right=True)

    @staticmethod
    def ln(value: Any) -> Sql:
        return Sql(f"ln({Sql.of(value)})")


def budgeted(facts: int | None) -> bool:
    """Whether keyword search in a namespace of ``facts`` facts (None: not known yet) keeps
    ``POSTINGS_BUDGET``: above ``BUDGET_ABOVE_FACTS``, and not inside ``uncapped``."""
    return _capped and (facts is None or facts > BUDGET_ABOVE_FACTS)


@contextmanager
def uncapped() -> Iterator[None]:
    """Every query word's postings read whole in the body (benchmarks: the reference ranking)."""
    global _capped
    before, _capped = _capped, False
    try:
        yield
    finally:
        _capped = before


class KeptStats:
    """BM25 statistics counted per namespace (or per namespace and word), each kept
    ``KEPT_SECONDS`` in this process (fact recall's in ``recall``, ``message_search``'s in
    ``episodes``). Past 10,000 keys it starts again."""

    def __init__(self) -> None:
        self._kept: dict[Hashable, tuple[float, tuple[Any, ...]]] = {}

    def get(self, namespace: Hashable) -> tuple[Any, ...] | None:
        """The values kept for ``namespace``, if kept less than ``KEPT_SECONDS`` ago."""
        kept = self._kept.get(namespace)
        if kept is None or kept[0] <= time.monotonic():
            return None
        return kept[1]

    def put(self, namespace: Hashable, *values: Any) -> None:
        if len(self._kept) > 10_000:
            self._kept.clear()
        self._kept[namespace] = (time.monotonic() + KEPT_SECONDS, values)

    def drop(self, namespace: Hashable) -> None:
        self._kept.pop(namespace, None)

    def clear(self) -> None:
        self._kept.clear()
