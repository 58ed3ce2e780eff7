"""``TTMemoryStore``: a LangGraph ``BaseStore`` over ttmemory's long-term memory.

Namespace tuples map onto ttmemory namespaces, the isolation boundary:

- ``TTMemoryStore(namespace="acme/user-42")``: the store belongs to one ttmemory namespace
  and every LangGraph namespace tuple is a path inside it (``("memories", "prefs")``);
- ``TTMemoryStore(namespace_depth=1)`` (the default): the first element of each tuple is the
  ttmemory namespace (``("user-42", "memories")`` -> ``user-42``, path ``("memories",)``);
  with ``namespace_depth=2`` the first two, joined by ``/`` (``acme/user-42``). A search or
  listing must name that many elements, so no call reads across ttmemory namespaces.

Each item's value is stored encrypted (``GraphStoreItem``), bound to its namespace, path and
key. Its text (the ``index`` fields, the whole value by default) is remembered as a fact of kind
``langgraph``, so ``search(query=...)`` is ttmemory's hybrid recall (``fact_recall``: vectors
from ``TTMEMORY["EMBEDDER"]`` blended with the blind keyword index), and the same memories are
found by ``fact_recall`` and ``prompt_build``. ``namespace_erase`` removes them all.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from asgiref.sync import sync_to_async
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from ttmemory.backends.embedders import get_embedder
from ttmemory.models import GraphStoreItem, Profile
from ttmemory.selectors import fact_recall
from ttmemory.selectors.graph import graph_item_get, graph_item_paths, graph_items, graph_profiles
from ttmemory.services.graph import (
    STORE_FACT_KIND,
    graph_item_delete,
    graph_item_put,
    graph_items_sweep,
    graph_items_touch,
    graph_profile_delete,
    graph_profile_put,
)
from ttmemory.validation import clean_namespace

__all__ = ["TTMemoryStore"]

# How many recalled facts a search asks for, per result it has to return.
RECALL_POOL_FACTOR = 4
RECALL_POOL_MAX = 1000


class TTMemoryStore(BaseStore):
    """LangGraph's store on ttmemory: ``graph.compile(store=TTMemoryStore(...))``.

    ``index``: LangGraph's ``IndexConfig`` without ``embed`` (vectors come from the configured
    ``TTMEMORY["EMBEDDER"]``; ``dims``, when given, must equal its dimensions); ``fields``
    selects the text to index (default ``["$"]``, the whole value). ``index=False`` indexes
    nothing (search then only filters). ``ttl``: LangGraph's ``TTLConfig``; an item's time to
    live sets ``expires_at`` of the item and of its fact, refreshed on read unless
    ``refresh_on_read`` is False; ``sweep_ttl()`` deletes expired items. ``profiles``: a path
    (such as ``("profile",)``) whose items are ttmemory profiles, one per key (the profile's
    kind), read by ``profile_get`` and ``prompt_build``.
    """

    supports_ttl = True

    def __init__(
        self,
        *,
        namespace: str | None = None,
        namespace_depth: int = 1,
        index: IndexConfig | Literal[False] | None = None,
        ttl: TTLConfig | None = None,
        profiles: tuple[str, ...] | None = None,
    ) -> None:
        if profiles is not None and (
            not isinstance(profiles, tuple)
            or not profiles
            or not all(isinstance(p, str) and p for p in profiles)
        ):
            raise ValueError("profiles must be a non-empty tuple of strings, such as ('profile',)")
        self.profiles = profiles
        self.profile_path = _encode(profiles) if profiles is not None else None
        self.namespace = clean_namespace(namespace) if namespace is not None else None
        if self.namespace is None and (
            isinstance(namespace_depth, bool)
            or not isinstance(namespace_depth, int)
            or namespace_depth < 1
        ):
            raise ValueError("namespace_depth must be a whole number >= 1")
        self.namespace_depth = 0 if self.namespace is not None else namespace_depth
        self.index_fields = self._index_fields(index)
        self.ttl_config = ttl

    @staticmethod
    def _index_fields(index: IndexConfig | Literal[False] | None) -> list[str] | None:
        if index is False:
            return None
        if index is None:
            return ["$"]
        if index.get("embed") is not None:
            embedder = get_embedder()
            raise ValueError(
                "TTMemoryStore embeds with TTMEMORY['EMBEDDER'] (model "
                f"{embedder.model!r}, {embedder.dimensions} dimensions): leave out "
                "index['embed'] and configure the embedder in settings"
            )
        dims = index.get("dims")
        if dims is not None and dims != get_embedder().dimensions:
            raise ValueError(
                f"index['dims'] is {dims}, but TTMEMORY['EMBEDDER'] makes vectors of "
                f"{get_embedder().dimensions} dimensions"
            )
        return list(index.get("fields") or ["$"])

    # -- LangGraph's entry points ----------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order (gets, searches, puts, deletes, namespace listings)."""
        results: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await sync_to_async(self.batch, thread_sensitive=True)(list(ops))

    def sweep_ttl(self) -> int:
        """Delete items past their time to live; returns how many went."""
        return graph_items_sweep()

    async def asweep_ttl(self) -> int:
        return await sync_to_async(self.sweep_ttl, thread_sensitive=True)()

    # -- operations ------------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        namespace, path = self._split(op.namespace)
        if path == self.profile_path:
            found = graph_profiles(namespace=namespace, kind=op.key)
            return (
                self._profile_item(found[0], op.namespace[: self.namespace_depth])
                if found
                else None
            )
        row = graph_item_get(namespace=namespace, path=path, key=op.key)
        if row is None:
            return None
        if self._refresh(op.refresh_ttl) and row.ttl_minutes is not None:
            graph_items_touch(namespace=namespace, item_ids=[row.pk])
        return self._item(row, Item)

    def _put(self, op: PutOp) -> None:
        namespace, path = self._split(op.namespace)
        if path == self.profile_path:
            if op.value is None:
                graph_profile_delete(namespace=namespace, kind=op.key)
            else:
                graph_profile_put(
                    namespace=namespace, kind=op.key, data=op.value, ttl_minutes=op.ttl
                )
            return
        if op.value is None:
            graph_item_delete(namespace=namespace, path=path, key=op.key)
            return
        fields = self.index_fields if op.index is None else (op.index or None)
        graph_item_put(
            namespace=namespace,
            path=path,
            key=op.key,
            value=op.value,
            index_text=_index_text(op.value, fields) if fields else None,
            ttl_minutes=op.ttl,
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        namespace, path = self._split(op.namespace_prefix, prefix=True)
        limit, offset = max(op.limit, 0), max(op.offset, 0)
        scores: dict[int, float] | None = None
        if op.query:
            pool = min(max(50, (offset + limit) * RECALL_POOL_FACTOR), RECALL_POOL_MAX)
            recalled = fact_recall(
                # Items are documents put by key: the order they were put in means nothing,
                # so no neighbour context (fusion.py).
                namespace=namespace,
                query=op.query,
                k=pool,
                kinds=[STORE_FACT_KIND],
                context=False,
            )
            scores = {fact.pk: score for fact, score in recalled.hits}
        rows = graph_items(
            namespace=namespace,
            path_prefix=path,
            fact_ids=list(scores) if scores is not None else None,
        )
        candidates: list[GraphStoreItem | Profile] = list(rows)
        if (
            scores is None and self.profile_path is not None and self.profile_path.startswith(path)
        ):  # profiles are listed, not recalled
            candidates += graph_profiles(namespace=namespace)
            candidates.sort(key=lambda row: row.updated_at, reverse=True)
        if op.filter:
            candidates = [row for row in candidates if _matches(_value(row), op.filter)]
        if scores is not None:
            candidates.sort(key=lambda row: -_score(row, scores))
        page = candidates[offset : offset + limit]
        if self._refresh(op.refresh_ttl):
            touched = [
                row.pk
                for row in page
                if isinstance(row, GraphStoreItem) and row.ttl_minutes is not None
            ]
            if touched:
                graph_items_touch(namespace=namespace, item_ids=touched)
        head = op.namespace_prefix[: self.namespace_depth]
        found = []
        for row in page:
            if isinstance(row, Profile):
                found.append(self._profile_item(row, head, SearchItem))
                continue
            item = self._item(row, SearchItem)
            if scores is not None and row.fact_id in scores:
                item.score = scores[row.fact_id]
            found.append(item)
        return found

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefix = next((c.path for c in conditions if c.match_type == "prefix"), ())
        depth = self.namespace_depth
        if depth and (len(prefix) < depth or "*" in prefix[:depth]):
            raise InvalidNamespaceError(
                f"list_namespaces needs a prefix naming the ttmemory namespace (its first "
                f"{depth} element(s), no wildcard): namespaces are never listed across tenants"
            )
        if self.namespace is not None:
            namespace = self.namespace
        else:
            namespace, _ = self._split(tuple(prefix[:depth]), prefix=True)
        head = tuple(prefix[:depth])
        fixed = []
        for element in prefix[depth:]:
            if element == "*":
                break
            fixed.append(element)
        paths = graph_item_paths(namespace=namespace, path_prefix=_encode(fixed))
        if (
            self.profile_path is not None
            and self.profile_path.startswith(_encode(fixed))
            and graph_profiles(namespace=namespace)
        ):
            paths.append(self.profile_path)
        found: set[tuple[str, ...]] = set()
        for path in paths:
            full = head + _decode(path)
            if not all(_does_match(c, full) for c in conditions):
                continue
            if op.max_depth is not None:
                full = full[: op.max_depth]
            found.add(full)
        ordered = sorted(found)
        return ordered[op.offset : op.offset + op.limit]

    # -- helpers ---------------------------------------------------------------------------------

    def _split(self, namespace: tuple[str, ...], *, prefix: bool = False) -> tuple[str, str]:
        """(ttmemory namespace, encoded path) of a LangGraph namespace tuple."""
        if self.namespace is not None:
            return self.namespace, _encode(namespace)
        depth = self.namespace_depth
        if len(namespace) < depth:
            what = "a search prefix" if prefix else "a namespace"
            raise InvalidNamespaceError(
                f"{what} must name the ttmemory namespace (its first {depth} element(s)); got "
                f"{namespace!r}: reads never span ttmemory namespaces"
            )
        head = namespace[:depth]
        for element in head:
            if "/" in element:
                raise InvalidNamespaceError(
                    f"{element!r}: the elements naming the ttmemory namespace cannot contain '/'"
                )
        return clean_namespace("/".join(head), field="namespace"), _encode(namespace[depth:])

    def _tuple_of(self, row: GraphStoreItem) -> tuple[str, ...]:
        head: tuple[str, ...] = (
            () if self.namespace is not None else tuple(row.namespace.split("/"))
        )
        return head + _decode(row.path)

    def _item(self, row: GraphStoreItem, cls: type[Any]) -> Any:
        return cls(
            value=row.value,
            key=row.key,
            namespace=self._tuple_of(row),
            created_at=row.created_at,
            updated_at=row.updated_at,
        )

    def _profile_item(self, profile: Profile, head: tuple[str, ...], cls: type[Any] = Item) -> Any:
        assert self.profiles is not None
        return cls(
            value=dict(profile.data),
            key=profile.kind,
            namespace=tuple(head) + self.profiles,
            created_at=profile.updated_at,  # a profile keeps no creation time
            updated_at=profile.updated_at,
        )

    def _refresh(self, asked: bool | None) -> bool:
        if asked is False:
            return False
        return bool((self.ttl_config or {}).get("refresh_on_read", True))


def _score(row: GraphStoreItem | Profile, scores: dict[int, float]) -> float:
    fact_id = getattr(row, "fact_id", None)
    return scores.get(fact_id, 0.0) if fact_id is not None else 0.0


def _value(row: GraphStoreItem | Profile) -> Any:
    return row.data if isinstance(row, Profile) else row.value


def _escape(element: str) -> str:
    return element.replace("%", "%25").replace("/", "%2F")


def _unescape(element: str) -> str:
    return element.replace("%2F", "/").replace("%25", "%")


def _encode(elements: Iterable[str]) -> str:
    """Each element escaped and ended by '/': a prefix of elements is a prefix of the text."""
    return "".join(_escape(element) + "/" for element in elements)


def _decode(path: str) -> tuple[str, ...]:
    return tuple(_unescape(element) for element in path.split("/")[:-1])


def _index_text(value: Mapping[str, Any], fields: list[str]) -> str:
    """The text a fact indexes: the value's leaves for ``$`` (``key: text`` lines when there
    are several), else the text at each field path."""
    parts: list[str] = []
    for field in fields:
        if field == "$":
            leaves = list(_leaves(value, ""))
            if len(leaves) == 1:
                parts.append(leaves[0][1])
            else:
                parts.extend(f"{name}: {text}" for name, text in leaves)
        else:
            parts.extend(get_text_at_path(value, tokenize_path(field)))
    return "\n".join(part for part in parts if part.strip())


def _leaves(value: Any, name: str) -> Iterable[tuple[str, str]]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _leaves(inner, f"{name}.{key}" if name else str(key))
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _leaves(inner, name)
    elif isinstance(value, str):
        yield name, value
    elif isinstance(value, bool | int | float) and not (
        isinstance(value, float) and not math.isfinite(value)
    ):
        yield name, str(value)


def _does_match(condition: MatchCondition, key: tuple[str, ...]) -> bool:
    path = condition.path
    if len(key) < len(path):
        return False
    pairs = (
        zip(key, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(key), reversed(path), strict=False)
    )
    return all(p == "*" or k == p for k, p in pairs)


def _matches(value: Any, wanted: Mapping[str, Any]) -> bool:
    return isinstance(value, Mapping) and all(
        _compare(value.get(key), expected) for key, expected in wanted.items()
    )


def _compare(value: Any, expected: Any) -> bool:
    """LangGraph's filter semantics: equality, nested objects, ``$eq/$ne/$gt/$gte/$lt/$lte``."""
    if isinstance(expected, Mapping):
        if any(str(k).startswith("$") for k in expected):
            return all(_operator(value, op, operand) for op, operand in expected.items())
        return isinstance(value, Mapping) and all(
            _compare(value.get(k), v) for k, v in expected.items()
        )
    if isinstance(expected, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(expected)
            and all(_compare(v, e) for v, e in zip(value, expected, strict=True))
        )
    return bool(value == expected)


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if value is None:
        return False
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    if op == "$gt":
        return left > right
    if op == "$gte":
        return left >= right
    if op == "$lt":
        return left < right
    if op == "$lte":
        return left <= right
    raise ValueError(f"unsupported filter operator {op!r}")
