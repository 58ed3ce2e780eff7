"""The settings declaration: every ``TTMEMORY`` key with its default and rule, on ``AppSettings``.

``app_settings`` merges ``settings.TTMEMORY`` (and the environment, for keys) over the defaults
and parses each value once, until the setting changes (``ttmemory.conf.reset``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast, overload

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

from ttmemory.conf.rules import (
    InvalidSetting,
    alias,
    alias_list,
    backend,
    backend_list,
    boolean,
    encoding_name,
    expiry_mode,
    fraction,
    integer,
    job_mode,
    key_list,
    model_prices,
    namespace_languages,
    network_list,
    optional_backend,
    optional_fraction,
    optional_lifetime,
    optional_rate,
    optional_text,
    partitioning,
    queue_map,
    resolver,
    score,
    seconds,
    stemmer_language,
    trim_mode,
)

# Named after the package: what a logging config (or a test) filters on.
logger = logging.getLogger("ttmemory.conf")

T = TypeVar("T")

ENV_KEYS = "TTMEMORY_ENCRYPTION_KEYS"
ENV_BLIND_KEY = "TTMEMORY_BLIND_INDEX_KEY"


class Setting(Generic[T]):
    """One key of ``TTMEMORY``: its default and the rule that coerces and checks a value.

    ``strict``: no safe default exists (keys, backends), so a bad value raises
    ImproperlyConfigured when read instead of falling back.
    """

    name: str

    def __init__(self, default: Any, rule: Callable[[Any], T], *, strict: bool = False) -> None:
        self.default = default
        self.rule = rule
        self.strict = strict

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Setting[T]: ...

    @overload
    def __get__(self, instance: AppSettings, owner: type | None = None) -> T: ...

    def __get__(self, instance: AppSettings | None, owner: type | None = None) -> Setting[T] | T:
        if instance is None:
            return self
        return instance.value(self)


class AppSettings:
    """``settings.TTMEMORY`` merged over the defaults, parsed once until the setting changes."""

    # Encryption keyring: a list of "key_id:base64(32 bytes)" strings, the first encrypts and all
    # decrypt. When unset, the TTMEMORY_ENCRYPTION_KEYS environment variable (comma-separated)
    # is read.
    ENCRYPTION_KEYS = Setting(None, key_list, strict=True)
    # Tokenizer used for budgets: "o200k_base" (GPT-4o/4.1/o-series/GPT-5), "cl100k_base"
    # (GPT-4/3.5) or "heuristic" (bytes/4, no dependency).
    TOKENIZER = Setting("o200k_base", encoding_name)
    # Largest message accepted, as compact UTF-8 JSON.
    MAX_MESSAGE_BYTES = Setting(2 * 1024 * 1024, integer(minimum=1))
    # Longest namespace and session key.
    MAX_NAMESPACE_LENGTH = Setting(255, integer(minimum=1, maximum=255, why=", the column width"))
    # What session_trim does with messages outside the budget: "archive" keeps them out of every
    # read (exports still see them), "delete" removes them.
    TRIM_MODE = Setting("archive", trim_mode)
    # Rows per batch for long-running commands (key rotation, re-embedding).
    BATCH_SIZE = Setting(500, integer(minimum=1))
    # Session lock backend, {"BACKEND": ..., "OPTIONS": {...}}. None: PostgresAdvisoryLock on
    # PostgreSQL, DatabaseLeaseLock elsewhere; RedisLock for Redis (falls back to those).
    LOCK = Setting(None, optional_backend("ttmemory.E030"), strict=True)
    # Seconds a writer waits for a session's lock before LockTimeout (0: try once).
    LOCK_TIMEOUT = Setting(10.0, seconds())
    # Seconds a lease (Redis key or lease row) lives without renewal; a dead holder's lease
    # is taken over after this.
    LOCK_LEASE = Setting(30.0, seconds(positive=True))
    # Snapshots kept per session (oldest removed first; the newest safety snapshot never).
    MAX_SNAPSHOTS_PER_SESSION = Setting(20, integer(minimum=0))
    # Take an automatic snapshot every N appended messages (0: never).
    AUTO_SNAPSHOT_EVERY = Setting(0, integer(minimum=0, meaning="0: never"))
    # Key of the blind keyword index ("base64 of 32 bytes"), separate from the encryption keys.
    # When unset, TTMEMORY_BLIND_INDEX_KEY is read.
    BLIND_INDEX_KEY = Setting(None, optional_text("ttmemory.E004"), strict=True)
    # Embedder backend, {"BACKEND": ..., "OPTIONS": {...}}.
    EMBEDDER = Setting(
        {"BACKEND": "ttmemory.backends.embedders.HashEmbedder", "OPTIONS": {"dimensions": 384}},
        backend("ttmemory.E030"),
        strict=True,
    )
    # Seconds recall skips a failing embedder before trying it again (circuit breaker).
    EMBEDDER_BREAKER_SECONDS = Setting(30.0, seconds())
    # Language of the stemmer that folds words to keyword terms (blind index, HashEmbedder):
    # a Snowball language ("english", "portuguese", "german", ...) or None (whole words).
    # Changing it makes every fact's keyword index stale (ttmemory.W040): run ttmemory_reindex.
    # The default language of keyword terms (stems, stop words; docs/languages.md).
    STEMMER_LANGUAGE = Setting("english", stemmer_language)
    # Per-namespace languages: {"user-42": "german", "acme/*": "russian"}; a change makes those
    # namespaces' blind index stale (W040) until ttmemory_reindex has rebuilt it.
    NAMESPACE_LANGUAGES = Setting({}, namespace_languages)
    # Hybrid recall: weight of the vector score in the blend of normalised scores (0..1).
    # None: the embedder's own (0.1 for every shipped embedder; chosen to generalise: tuned on
    # two sets, reported on two others, bench/fusion_generalise.py and docs/benchmarks.md).
    RECALL_VECTOR_WEIGHT = Setting(None, optional_fraction)
    # Recall drops hits scoring at or below this (0: drop only hits that matched nothing, which
    # prompt_build would otherwise put into the prompt).
    RECALL_MIN_SCORE = Setting(0.0, score)
    # Recall drops hits scoring below this fraction of the best hit's score (0: keep all), so
    # a prompt is not padded with memories far weaker than the best (docs/benchmarks.md).
    RECALL_MIN_RELATIVE = Setting(0.0, fraction)
    # Absolute relevance floor: recall returns no hits when no candidate's cosine similarity to
    # the query reaches this (a question about nothing stored gets no memory). None: off. It
    # depends on the embedder: calibrated values per embedder and what they cost answerable
    # questions are in docs/benchmarks.md ("Fusion study"). Keyword-only recall is not gated.
    RECALL_MIN_SIMILARITY = Setting(None, optional_fraction)
    # Evidence floor: a recall hit matches the query by itself (a keyword in common, or a cosine
    # similarity at least this) or sits in a passage about it (two facts within the neighbour
    # window match by themselves), so neighbour context never pads the list with facts that
    # merely sit next to one match: fewer than k hits instead. None: the embedder's own
    # (recall_evidence_similarity: 1.0 for HashEmbedder, a keyword only; 0.16 WordLlama; 0.3
    # others), docs/benchmarks.md.
    RECALL_EVIDENCE_SIMILARITY = Setting(None, optional_fraction)
    # Neighbour context: a fact also scores RECALL_CONTEXT_WEIGHT x the scores of the
    # RECALL_CONTEXT_WINDOW facts remembered just before and after it in its namespace (the
    # turn that answers "which one?" is found by the question it answers). 0: off.
    RECALL_CONTEXT_WINDOW = Setting(
        2, integer(minimum=0, maximum=10, why=" (neighbours each side)")
    )
    # None: the embedder's own (0.5 for HashEmbedder and WordLlama, 0.25 for sentence embedders).
    RECALL_CONTEXT_WEIGHT = Setting(None, optional_fraction)
    # Feedback: the words of the two best blended facts that the query did not use are asked
    # again (BM25), and a candidate gains RECALL_FEEDBACK_WEIGHT x its blended score x its share
    # of the best such match: the turn that names what the first answer only mentions
    # ("my sister Lena ... started a new job as a nurse"). The best five facts without it keep
    # their places (fusion.FEEDBACK_PROTECTED): it fills the ranks after them, and a recall of
    # k <= 5 is unchanged and skips it. None: the embedder's own (0.75 for sentence embedders,
    # where it helps multi-hop questions at recall@10 though it lowered the synthetic set's by
    # 0.009; 0 for HashEmbedder and WordLlama: docs/benchmarks.md, fusion study). 0: off.
    RECALL_FEEDBACK_WEIGHT = Setting(None, optional_fraction)
    # Recall statistics (recall_count, last_recalled_at) are buffered and written at most this
    # often per process, off the hot path (0: write on every recall).
    RECALL_TOUCH_SECONDS = Setting(2.0, seconds(meaning="0: write at once"))
    # Namespaces with more facts than this use the HNSW index (approximate) on PostgreSQL.
    RECALL_EXACT_LIMIT = Setting(20000, integer(minimum=0))
    # Megabytes of fact vectors each process keeps in memory for exact vector recall (namespaces
    # up to RECALL_EXACT_LIMIT on PostgreSQL, all on SQLite), least recently used namespaces
    # dropped first; checked on every recall against the namespace's generation, which
    # triggers change with every change to its facts (ttmemory/longterm/vector_cache.py).
    # 1,000 facts of 384 dimensions take 1.6 MB, 50,000 take 78 MB. 0: off.
    RECALL_VECTOR_CACHE_MB = Setting(128, integer(minimum=0, meaning="0: off"))
    # Index every stored message for message_search (blind postings by the message_index job,
    # off the append path; vectors by the message_embed job). Until a message is indexed,
    # message_search scores it from the stored message, so results are complete at once.
    # Off: nothing new is indexed or scored (ttmemory_reindex indexes it later).
    MESSAGE_SEARCH_INDEX = Setting(True, boolean)
    # Queue the message_index job when a session's first message is stored and then every N
    # appended messages (1: after every append). Messages not yet indexed cost message_search
    # their decryption and term hashing on each search, at most about N per active session.
    MESSAGE_INDEX_EVERY = Setting(32, integer(minimum=1))
    # Where jobs run inline (no Celery worker): run the jobs that only bring message_search's
    # index up to date (message_index, message_embed) on one background thread of this process,
    # so no append waits for them (what is not indexed yet is scored from the stored messages,
    # so results are complete at once). False: in the caller's thread after commit, like every
    # other inline job. ttmemory.jobs.drain() waits for them (scripts that exit at once).
    INDEX_IN_BACKGROUND = Setting(True, boolean)
    # message_search scores at most this many messages not yet indexed per search (the newest
    # sessions' newest; each costs its decryption and term hashing: bench/ has the figure). When
    # more wait (the job is behind: no worker, a backlog), the older ones are found once the
    # message_index job has indexed them, and the search queues that job.
    MESSAGE_SEARCH_PENDING_LIMIT = Setting(1000, integer(minimum=0))
    # A query term found in more messages than this (a word used everywhere: low weight) makes
    # the search pick the messages it scores by every posting of the rarest query words
    # (episodes.FREQUENT_CANDIDATES), not by reading all of that word's; its weight still
    # counts every message.
    MESSAGE_SEARCH_TERM_LIMIT = Setting(2000, integer(minimum=1))
    # message_search: weight of the vector score in the blend (0..1). None: the embedder's own
    # (0 for HashEmbedder and WordLlama: keyword only, and messages are not embedded; 0.8 for
    # sentence embedders).
    MESSAGE_SEARCH_VECTOR_WEIGHT = Setting(None, optional_fraction)
    # Characters of each recalled memory shown by prompt_build before it is cut.
    PROMPT_MEMORY_CHARS = Setting(128, integer(minimum=1))
    # PostgreSQL only: keep messages in a table partitioned by hash of session, e.g.
    # {"by": "hash", "partitions": 16} (docs/scaling.md, "Partitioned history"). Read when
    # `migrate` creates the table and by `manage.py ttmemory_partition`, which converts an
    # existing one; the check ttmemory.W060 reports a table that does not match. None: one table.
    PARTITIONED_HISTORY = Setting(None, partitioning)
    # Where content-free events go after commit: a list of {"BACKEND": ..., "OPTIONS": {...}}.
    EVENT_OBSERVERS = Setting(
        [{"BACKEND": "ttmemory.backends.events.SignalObserver"}], backend_list, strict=True
    )
    # LLM for extraction and summaries, {"BACKEND": ..., "OPTIONS": {...}}; None: offline rules.
    LLM = Setting(None, optional_backend("ttmemory.E031"), strict=True)
    # Where background jobs (learn, summarise, embed, ...) run: "inline" (in this process, after
    # the transaction commits), "celery" (Celery tasks; `check` errors when no Celery app with a
    # broker is configured), or None: Celery when a Celery app with a broker (or
    # CELERY_TASK_ALWAYS_EAGER) is configured, else inline. Nothing is ever sent to Celery's
    # default broker by accident.
    JOBS = Setting(None, job_mode)
    # Queue fact extraction every N appended messages of a session (0: never automatically).
    LEARN_EVERY = Setting(0, integer(minimum=0, meaning="0: never"))
    # The periodic task ttmemory.learn_idle queues extraction for sessions with unlearned
    # messages and no activity for this many seconds (0: off).
    LEARN_IDLE_SECONDS = Setting(0, seconds(meaning="0: off"))
    # The offline rules keep a first-person statement no rule reads in its own words ("I
    # commute by bike" -> "The user commutes by bike"; each rule file's [plain]). False: only what a
    # rule reads is stored (fewer facts, and none left current by a change said in a way no
    # rule reads; docs/extraction.md).
    LEARN_PLAIN_STATEMENTS = Setting(True, boolean)
    # Queue summarisation when a session's live tokens exceed this (0: never automatically);
    # the session is trimmed to SUMMARY_KEEP_TOKENS and what left is merged into the summary.
    SUMMARISE_AT_TOKENS = Setting(0, integer(minimum=0, meaning="0: never"))
    SUMMARY_KEEP_TOKENS = Setting(2000, integer(minimum=0))
    # Token budget of the rolling summary itself.
    SUMMARY_MAX_TOKENS = Setting(400, integer(minimum=1))
    # Celery queue per job family, e.g. {"learn": "ttmemory-learn", "summarise":
    # "ttmemory-summarise", "embed": "ttmemory-embed", "delivery": "ttmemory-delivery",
    # "maintenance": "ttmemory-maintenance"} (docs/scaling.md); None: Celery's default queue.
    QUEUES = Setting(None, queue_map)
    # LLM calls (extraction, summaries) one namespace may start per window, in DRF's rate syntax
    # ("30/m"); None: no limit. Over it, a queued job is retried when the window has room.
    LLM_RATE_LIMIT = Setting(None, optional_rate)
    # Tokens a namespace may spend on LLM calls per UTC day (0: no limit); extraction is
    # skipped (and the skip recorded) once it is spent.
    DAILY_TOKEN_BUDGET = Setting(0, integer(minimum=0, meaning="0: no limit"))
    # Admin console: show message and fact content masked until a staff member with the
    # reveal permission reveals it, giving a reason (recorded in the audit log).
    ADMIN_MASK_CONTENT = Setting(True, boolean)
    # Seconds a reveal lasts for the staff member who asked for it.
    ADMIN_REVEAL_SECONDS = Setting(15 * 60, integer(minimum=1))
    # REST API: who the caller's namespace is. A dotted path to a callable taking the request
    # and returning a namespace (or None: no namespace, 403). Default: "user-<pk>" per user.
    API_NAMESPACE_RESOLVER = Setting(
        "ttmemory.api.namespaces.user_namespace", resolver, strict=True
    )
    # REST API: largest request body in bytes (413 above it).
    API_MAX_REQUEST_BYTES = Setting(4 * 1024 * 1024, integer(minimum=1))
    # REST API: most messages in one append request.
    API_MAX_BATCH = Setting(500, integer(minimum=1))
    # REST API: write throttle per caller (DRF rate syntax, e.g. "600/min"); None: no throttle.
    API_WRITE_RATE = Setting("1200/min", optional_rate)
    # No longer used (issue 34, revocation at once): API keys, DRF tokens and their users are
    # read on every request (REST and MCP), so nothing is trusted from a cache. Accepted so
    # that projects which set it still start.
    API_AUTH_CACHE_SECONDS = Setting(5, seconds(meaning="0: off"))
    # REST API: seconds an Idempotency-Key is remembered.
    API_IDEMPOTENCY_SECONDS = Setting(24 * 3600, seconds(positive=True))
    # Data lifecycle (docs/retention.md), applied by the periodic job ttmemory.prune_expired
    # (and `manage.py ttmemory_prune`). Each is a timedelta or seconds; None keeps forever.
    # A RetentionPolicy row overrides them per namespace; a LegalHold suspends every deletion.
    # Idle time (since a session's last write) after which a session expires.
    SESSION_TTL = Setting(None, optional_lifetime)
    # What expiry does: "delete" the session with its messages and snapshots, or "archive"
    # its live messages (out of every read; ARCHIVED_MESSAGE_TTL then deletes them).
    SESSION_EXPIRY = Setting("delete", expiry_mode)
    # Archived (trimmed or expired) messages are deleted this long after they were archived.
    ARCHIVED_MESSAGE_TTL = Setting(None, optional_lifetime)
    # Snapshots (manual, safety, automatic) are deleted this long after they were taken.
    SNAPSHOT_TTL = Setting(None, optional_lifetime)
    # Audit entries are deleted this long after they were written.
    AUDIT_TTL = Setting(None, optional_lifetime)
    # Cost/operations ledger entries are deleted this long after they were written.
    LEDGER_TTL = Setting(None, optional_lifetime)
    # OpenTelemetry (docs/observability.md). Put the recall/search query text on spans
    # (gen_ai.memory.query.text): off, since a query is content.
    TELEMETRY_CAPTURE_QUERY = Setting(False, boolean)
    # Put the namespace on spans (gen_ai.memory.store.id) and metrics: off, since a namespace
    # per user makes one metric series per user (cardinality) and may identify a person.
    TELEMETRY_NAMESPACE_ATTRIBUTE = Setting(False, boolean)
    # USD per million tokens by model, {"model": {"input": 0.15, "output": 0.6}}: prices the
    # ttmemory.cost metric (spend per day on the dashboard); models not listed cost nothing.
    TELEMETRY_MODEL_PRICES = Setting(None, model_prices)
    # Prometheus' /metrics (ttmemory.telemetry.prometheus.metrics_view): 404 unless enabled;
    # enabled, it answers only a request bearing METRICS_TOKEN ("Authorization: Bearer ...")
    # or coming from METRICS_ALLOWED_NETWORKS (CIDRs, matched on REMOTE_ADDR); 403 otherwise.
    METRICS_ENABLED = Setting(False, boolean)
    METRICS_TOKEN = Setting(None, optional_text("ttmemory.E073"))
    METRICS_ALLOWED_NETWORKS = Setting(None, network_list)
    # Webhook delivery refuses targets whose address is private, loopback, link-local,
    # reserved or a cloud metadata address, checked on the connected socket. True allows them
    # (development, tests); never in production.
    WEBHOOK_ALLOW_PRIVATE_TARGETS = Setting(False, boolean)

    # The databases are reached through a pooler in transaction mode (PgBouncer's
    # pool_mode = transaction): `check` then warns about options that break there
    # (ttmemory.W061, W062). ttmemory itself keeps no session state (docs/scaling.md).
    POOLED = Setting(False, boolean)
    # ttmemory.routers.ReplicaRouter: the alias that takes every write, and the aliases of the
    # streaming replicas ttmemory's reads may use (empty: every read goes to the primary).
    PRIMARY_DATABASE = Setting("default", alias)
    READ_REPLICAS = Setting([], alias_list)
    # Read-your-writes: a read by a caller (request, task, thread) that has written waits at
    # most this long for a replica to replay the primary's WAL up to that write, then reads
    # the primary instead (0: read the primary at once while the replica is behind).
    REPLICA_WAIT_SECONDS = Setting(0.05, seconds())
    # A replica that failed (connection refused, dropped mid-query) is skipped for this long:
    # its reads go to the primary meanwhile.
    REPLICA_RETRY_SECONDS = Setting(5.0, seconds(positive=True))

    def __init__(self) -> None:
        self._cache: dict[str, Any] | None = None
        self._values: dict[str, Any] = {}

    @property
    def user_settings(self) -> dict[str, Any]:
        value = getattr(settings, "TTMEMORY", None) or {}
        if not isinstance(value, dict):
            return {}
        return value

    def _merged(self) -> dict[str, Any]:
        if self._cache is None:
            merged = dict(DEFAULTS)
            merged.update(self.user_settings)
            if not merged.get("ENCRYPTION_KEYS") and os.environ.get(ENV_KEYS):
                merged["ENCRYPTION_KEYS"] = [
                    part.strip() for part in os.environ[ENV_KEYS].split(",") if part.strip()
                ]
            if not merged.get("BLIND_INDEX_KEY") and os.environ.get(ENV_BLIND_KEY):
                merged["BLIND_INDEX_KEY"] = os.environ[ENV_BLIND_KEY].strip()
            self._cache = merged
        return self._cache

    def raw(self, name: str) -> Any:
        """The configured value of ``name`` as written (default and environment applied)."""
        return self._merged()[name]

    def problem(self, name: str) -> InvalidSetting | None:
        """What is wrong with the configured value of ``name``, or None (for system checks)."""
        try:
            SETTINGS[name].rule(self.raw(name))
        except InvalidSetting as exc:
            return exc
        return None

    def value(self, spec: Setting[T]) -> T:
        """``spec``'s value, coerced; a bad one falls back to the default (or raises if strict)."""
        values = self._values
        if spec.name in values:
            return cast(T, values[spec.name])
        try:
            parsed = spec.rule(self.raw(spec.name))
        except InvalidSetting as exc:
            message = f"TTMEMORY[{spec.name!r}] {exc.problem}"
            if spec.strict:
                raise ImproperlyConfigured(message) from exc
            # Logged once per settings change; the system check reports it as an error too.
            logger.error("%s; using the default, %r (%s)", message, spec.default, exc.check_id)
            parsed = spec.rule(spec.default)
        values[spec.name] = parsed
        return parsed

    def clear(self) -> None:
        """Forget the merged and parsed settings (they are read again on next use)."""
        self._cache = None
        self._values = {}

    def reload(self) -> None:
        """Re-read ``TTMEMORY`` and the environment, and reset every cache built from them.

        Sends ``setting_changed`` for TTMEMORY, exactly as ``override_settings`` does, so the
        keyring, blind key, backends and observers reset through their own receivers.
        """
        setting_changed.send(
            sender=AppSettings,
            setting="TTMEMORY",
            value=getattr(settings, "TTMEMORY", None),
            enter=False,
        )


SETTINGS: dict[str, Setting[Any]] = {
    name: spec for name, spec in vars(AppSettings).items() if isinstance(spec, Setting)
}
DEFAULTS: dict[str, Any] = {name: spec.default for name, spec in SETTINGS.items()}

app_settings = AppSettings()
