"""Settings: one ``TTMEMORY`` dict, read lazily through ``app_settings``, reset on change."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

DEFAULTS: dict[str, Any] = {
    # Encryption keyring: a list of "key_id:base64(32 bytes)" strings, the first encrypts and all
    # decrypt. When unset, the TTMEMORY_ENCRYPTION_KEYS environment variable (comma-separated)
    # is read.
    "ENCRYPTION_KEYS": None,
    # Tokenizer used for budgets: "o200k_base" (GPT-4o/4.1/o-series/GPT-5), "cl100k_base"
    # (GPT-4/3.5) or "heuristic" (bytes/4, no dependency).
    "TOKENIZER": "o200k_base",
    # Largest message accepted, as compact UTF-8 JSON.
    "MAX_MESSAGE_BYTES": 2 * 1024 * 1024,
    # Longest namespace and session key.
    "MAX_NAMESPACE_LENGTH": 255,
    # What session_trim does with messages outside the budget: "archive" keeps them out of every
    # read (exports still see them), "delete" removes them.
    "TRIM_MODE": "archive",
    # Rows per batch for long-running commands (key rotation, re-embedding).
    "BATCH_SIZE": 500,
    # Session lock backend, {"BACKEND": ..., "OPTIONS": {...}}. None: PostgresAdvisoryLock on
    # PostgreSQL, DatabaseLeaseLock elsewhere; RedisLock for Redis (falls back to those).
    "LOCK": None,
    # Seconds a writer waits for a session's lock before LockTimeout.
    "LOCK_TIMEOUT": 10.0,
    # Seconds a lease (Redis key or lease row) lives without renewal; a dead holder's lease
    # is taken over after this.
    "LOCK_LEASE": 30.0,
    # Snapshots kept per session (oldest removed first; the newest safety snapshot never).
    "MAX_SNAPSHOTS_PER_SESSION": 20,
    # Take an automatic snapshot every N appended messages (0: never).
    "AUTO_SNAPSHOT_EVERY": 0,
    # Key of the blind keyword index ("base64 of 32 bytes"), separate from the encryption keys.
    # When unset, TTMEMORY_BLIND_INDEX_KEY is read.
    "BLIND_INDEX_KEY": None,
    # Embedder backend, {"BACKEND": ..., "OPTIONS": {...}}.
    "EMBEDDER": {
        "BACKEND": "ttmemory.backends.embedders.HashEmbedder",
        "OPTIONS": {"dimensions": 384},
    },
    # Seconds recall skips a failing embedder before trying it again (circuit breaker).
    "EMBEDDER_BREAKER_SECONDS": 30.0,
    # Hybrid recall: weight of the vector score in the blend of normalised scores (0..1).
    # None: the embedder's own (0.8 for sentence embedders, 0.3 for the lexical HashEmbedder),
    # tuned on the evaluation set in docs/benchmarks.md.
    "RECALL_VECTOR_WEIGHT": None,
    # Recall statistics (recall_count, last_recalled_at) are buffered and written at most this
    # often per process, off the hot path (0: write on every recall).
    "RECALL_TOUCH_SECONDS": 2.0,
    # Namespaces with more facts than this use the HNSW index (approximate) on PostgreSQL.
    "RECALL_EXACT_LIMIT": 20000,
    # Characters of each recalled memory shown by prompt_build before it is cut.
    "PROMPT_MEMORY_CHARS": 128,
    # Where content-free events go after commit: a list of {"BACKEND": ..., "OPTIONS": {...}}.
    "EVENT_OBSERVERS": [{"BACKEND": "ttmemory.backends.events.SignalObserver"}],
    # LLM for extraction and summaries, {"BACKEND": ..., "OPTIONS": {...}}; None: offline rules.
    "LLM": None,
    # Queue fact extraction every N appended messages of a session (0: never automatically).
    "LEARN_EVERY": 0,
    # The periodic task ttmemory.learn_idle queues extraction for sessions with unlearned
    # messages and no activity for this many seconds (0: off).
    "LEARN_IDLE_SECONDS": 0,
    # Queue summarisation when a session's live tokens exceed this (0: never automatically);
    # the session is trimmed to SUMMARY_KEEP_TOKENS and what left is merged into the summary.
    "SUMMARISE_AT_TOKENS": 0,
    "SUMMARY_KEEP_TOKENS": 2000,
    # Token budget of the rolling summary itself.
    "SUMMARY_MAX_TOKENS": 400,
    # Tokens a namespace may spend on LLM calls per UTC day (0: no limit); extraction is
    # skipped (and the skip recorded) once it is spent.
    "DAILY_TOKEN_BUDGET": 0,
    # Admin console: show message and fact content masked until a staff member with the
    # reveal permission reveals it, giving a reason (recorded in the audit log).
    "ADMIN_MASK_CONTENT": True,
    # Seconds a reveal lasts for the staff member who asked for it.
    "ADMIN_REVEAL_SECONDS": 15 * 60,
    # REST API: who the caller's namespace is. A dotted path to a callable taking the request
    # and returning a namespace (or None: no namespace, 403). Default: "user-<pk>" per user.
    "API_NAMESPACE_RESOLVER": "ttmemory.api.namespaces.user_namespace",
    # REST API: largest request body in bytes (413 above it).
    "API_MAX_REQUEST_BYTES": 4 * 1024 * 1024,
    # REST API: most messages in one append request.
    "API_MAX_BATCH": 500,
    # REST API: write throttle per caller (DRF rate syntax, e.g. "600/min"); None: no throttle.
    "API_WRITE_RATE": "1200/min",
    # REST API: seconds an Idempotency-Key is remembered.
    "API_IDEMPOTENCY_SECONDS": 24 * 3600,
}

ENV_KEYS = "TTMEMORY_ENCRYPTION_KEYS"
ENV_BLIND_KEY = "TTMEMORY_BLIND_INDEX_KEY"
VALID_TRIM_MODES = ("archive", "delete")


class AppSettings:
    """``settings.TTMEMORY`` merged over ``DEFAULTS``, cached until the setting changes."""

    def __init__(self) -> None:
        self._cache: dict[str, Any] | None = None

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

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in DEFAULTS:
            raise AttributeError(f"Invalid ttmemory setting: {name!r}")
        return self._merged()[name]

    def reload(self) -> None:
        self._cache = None
        from ttmemory import crypto, events
        from ttmemory.backends import embedders, llm, locks
        from ttmemory.longterm import blind

        crypto.reset_keyring()
        blind.reset_blind_key()
        locks.reset_lock()
        embedders.reset_embedder()
        llm.reset_llm()
        events.reset_observers()


app_settings = AppSettings()


@receiver(setting_changed)
def _reload_settings(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        app_settings.reload()
