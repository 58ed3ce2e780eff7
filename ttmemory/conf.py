"""Settings: one ``TTMEMORY`` dict, read through typed accessors on ``app_settings``.

Every key is declared once on ``AppSettings`` with its default and the rule that coerces and
checks a value; the accessor returns the rule's type (``app_settings.LOCK_TIMEOUT`` is a
float). ``ttmemory.checks`` reports every value that breaks its rule. Reading such a value when
code runs logs the problem and uses the default, so a bad number never crashes a write; a bad
key or backend (no safe default exists) raises ``ImproperlyConfigured``.

This module imports nothing from ttmemory: each cache built from these settings (keyring, blind
key, backends, observers, resolver) connects its own ``setting_changed`` receiver and resets
lazily, so the order receivers run in does not matter.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import os
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Generic, Literal, TypeVar, cast, overload

import snowballstemmer
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

logger = logging.getLogger(__name__)

T = TypeVar("T")

ENV_KEYS = "TTMEMORY_ENCRYPTION_KEYS"
ENV_BLIND_KEY = "TTMEMORY_BLIND_INDEX_KEY"
VALID_TRIM_MODES = ("archive", "delete")
VALID_JOB_MODES = ("inline", "celery")
VALID_EXPIRY_MODES = ("delete", "archive")
TrimMode = Literal["archive", "delete"]
# {"BACKEND": "dotted.Path", "OPTIONS": {...}}; its keys are checked by backends.load_backend.
BackendConfig = dict[str, Any]
NamespaceResolver = Callable[[Any], str | None]


class InvalidSetting(ValueError):
    """A value that breaks its setting's rule: the problem, the check id reporting it, a hint."""

    def __init__(self, problem: str, *, check_id: str, hint: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.check_id = check_id
        self.hint = hint


# Rules: each takes the configured value and returns it coerced, or raises InvalidSetting.


def _number(value: Any) -> int | float | None:
    """``value`` as a finite int or float (numeric strings too, as read from the environment)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def integer(
    *, minimum: int, maximum: int | None = None, why: str = "", meaning: str = ""
) -> Callable[[Any], int]:
    """A whole number from ``minimum`` (1: E021; 0, where 0 turns a feature off: E024).

    Above ``maximum`` (``why`` says why it is the limit) is E022.
    """
    check_id = "ttmemory.E021" if minimum >= 1 else "ttmemory.E024"
    wanted = "a positive whole number" if minimum == 1 else f"a whole number >= {minimum}"
    if meaning:
        wanted += f" ({meaning})"

    def rule(value: Any) -> int:
        number = _number(value)
        if number is None or (isinstance(number, float) and not number.is_integer()):
            raise InvalidSetting(f"must be {wanted}, not {value!r}", check_id=check_id)
        number = int(number)
        if number < minimum:
            raise InvalidSetting(f"must be {wanted}, not {value!r}", check_id=check_id)
        if maximum is not None and number > maximum:
            raise InvalidSetting(
                f"cannot exceed {maximum}{why}, not {value!r}", check_id="ttmemory.E022"
            )
        return number

    return rule


def seconds(*, positive: bool = False, meaning: str = "") -> Callable[[Any], float]:
    """A duration in seconds: >= 0, or > 0 when ``positive`` (E025)."""
    wanted = "a number of seconds " + ("> 0" if positive else ">= 0")
    if meaning:
        wanted += f" ({meaning})"

    def rule(value: Any) -> float:
        number = _number(value)
        if number is None or number < 0 or (positive and number == 0):
            raise InvalidSetting(f"must be {wanted}, not {value!r}", check_id="ttmemory.E025")
        return float(number)

    return rule


def optional_fraction(value: Any) -> float | None:
    """None, or a number from 0 to 1 (E026)."""
    if value is None:
        return None
    number = _number(value)
    if number is None or not 0 <= number <= 1:
        raise InvalidSetting(
            f"must be a fraction from 0 to 1, or None, not {value!r}", check_id="ttmemory.E026"
        )
    return float(number)


def fraction(value: Any) -> float:
    """A number from 0 to 1 (E026)."""
    number = _number(value)
    if number is None or not 0 <= number <= 1:
        raise InvalidSetting(
            f"must be a fraction from 0 to 1, not {value!r}", check_id="ttmemory.E026"
        )
    return float(number)


def score(value: Any) -> float:
    """A recall score threshold: a number >= 0 (E029)."""
    number = _number(value)
    if number is None or number < 0:
        raise InvalidSetting(
            f"must be a number >= 0 (recall scores run from 0 up), not {value!r}",
            check_id="ttmemory.E029",
        )
    return float(number)


def boolean(value: Any) -> bool:
    """True or False (E027); other truthy values are refused rather than guessed."""
    if not isinstance(value, bool):
        raise InvalidSetting(f"must be True or False, not {value!r}", check_id="ttmemory.E027")
    return value


def model_prices(value: Any) -> dict[str, dict[str, float]]:
    """``{model: {"input": USD, "output": USD}}`` per million tokens; None is {} (E060)."""
    if value is None:
        return {}
    problem = InvalidSetting(
        "must map model names to {'input': USD, 'output': USD} per million tokens",
        check_id="ttmemory.E060",
        hint='For example TTMEMORY["TELEMETRY_MODEL_PRICES"] = '
        '{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}.',
    )
    if not isinstance(value, dict):
        raise problem
    prices: dict[str, dict[str, float]] = {}
    for model, price in value.items():
        if not isinstance(model, str) or not isinstance(price, dict):
            raise problem
        numbers = {key: _number(price.get(key, 0)) for key in ("input", "output")}
        if set(price) - {"input", "output"} or any(n is None or n < 0 for n in numbers.values()):
            raise problem
        prices[model] = {key: float(n or 0) for key, n in numbers.items()}
    return prices


def trim_mode(value: Any) -> TrimMode:
    """One of VALID_TRIM_MODES (E023)."""
    if value not in VALID_TRIM_MODES:
        raise InvalidSetting(
            f"is {value!r}; use one of: {', '.join(VALID_TRIM_MODES)}", check_id="ttmemory.E023"
        )
    return cast(TrimMode, value)


def optional_lifetime(value: Any) -> timedelta | None:
    """None (kept forever), or a lifetime: a ``timedelta`` or a number of seconds, > 0 (E036)."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        if value > timedelta(0):
            return value
    else:
        number = _number(value)
        if number is not None and number > 0:
            try:
                return timedelta(seconds=number)
            except OverflowError:
                pass
    raise InvalidSetting(
        f"must be a lifetime > 0 (a timedelta or a number of seconds) or None (keep forever), "
        f"not {value!r}",
        check_id="ttmemory.E036",
    )


def expiry_mode(value: Any) -> str:
    """One of VALID_EXPIRY_MODES (E037)."""
    if value not in VALID_EXPIRY_MODES:
        raise InvalidSetting(
            f"is {value!r}; use one of: {', '.join(VALID_EXPIRY_MODES)}", check_id="ttmemory.E037"
        )
    return cast(str, value)


def job_mode(value: Any) -> str | None:
    """None (choose: Celery when a Celery app with a broker is configured) or one of
    VALID_JOB_MODES (E034)."""
    if value is not None and value not in VALID_JOB_MODES:
        raise InvalidSetting(
            f"is {value!r}; use None (choose), {' or '.join(map(repr, VALID_JOB_MODES))}",
            check_id="ttmemory.E034",
        )
    return cast("str | None", value)


def encoding_name(value: Any) -> str:
    """A tokenizer name (E020; which names this install supports is checked by ttmemory.checks)."""
    if not isinstance(value, str) or not value:
        raise InvalidSetting(
            f"must be a tokenizer name such as 'o200k_base', not {value!r}",
            check_id="ttmemory.E020",
        )
    return value


#: Languages whose words are written without spaces: segmented into character bigrams whatever
#: the language, so naming one only chooses English and Russian for Latin and Cyrillic words.
SEGMENTED_LANGUAGES = ("chinese", "japanese", "korean")


def language_names() -> list[str]:
    """Every language a namespace can have: Snowball's and the segmented ones."""
    return sorted({*snowballstemmer.algorithms(), *SEGMENTED_LANGUAGES})


def stemmer_language(value: Any) -> str | None:
    """A language such as "english" (Snowball's or a segmented one) or None (no stems) (E045)."""
    if value is None:
        return None
    if not isinstance(value, str) or value.lower() not in language_names():
        raise InvalidSetting(
            f"is {value!r}, which is no language ttmemory knows; use None (no stemming) or one "
            "of: " + ", ".join(language_names()),
            check_id="ttmemory.E045",
        )
    return value.lower()


def namespace_languages(value: Any) -> dict[str, str]:
    """Namespace (or prefix ending in "*") -> language, each one ``stemmer_language`` accepts
    (E048)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidSetting(
            f"must be a dict of namespace -> language, not {value!r}", check_id="ttmemory.E048"
        )
    languages: dict[str, str] = {}
    for key, language in value.items():
        if not isinstance(key, str) or not key or "*" in key[:-1]:
            raise InvalidSetting(
                f"has the key {key!r}: use a namespace, or a prefix followed by one '*'",
                check_id="ttmemory.E048",
            )
        if not isinstance(language, str) or language.lower() not in language_names():
            raise InvalidSetting(
                f"maps {key!r} to {language!r}, which is no language ttmemory knows; use one "
                "of: " + ", ".join(language_names()),
                check_id="ttmemory.E048",
            )
        languages[key] = language.lower()
    return languages


# DRF's rate syntax, as SimpleRateThrottle.parse_rate reads it: "<count>/<s|m|h|d...>".
_RATE = re.compile(r"\s*\d+\s*/[smhd]\w*")


def optional_rate(value: Any) -> str | None:
    """None (no throttle) or a DRF rate such as "600/min" (E028)."""
    if value is None:
        return None
    if not isinstance(value, str) or not _RATE.fullmatch(value):
        raise InvalidSetting(
            f"must be a rate such as '600/min' (requests per s, m, h or d) or None, not {value!r}",
            check_id="ttmemory.E028",
        )
    return value


# Hash partitions of the message table: enough to keep each one small at tens of millions of
# messages, few enough that a scan of every partition (namespace exports, the admin) stays cheap.
PARTITIONS_MIN, PARTITIONS_MAX = 2, 256


def partitioning(value: Any) -> dict[str, Any] | None:
    """None (one message table), or ``{"by": "hash", "partitions": N}`` (E038).

    Only hashing by session is offered: every statement of a chat turn names its session, so
    it touches one partition, and the (session, seq) unique constraint, which includes the
    partition key, still makes seqs unique. Time ranges could not enforce that constraint
    (a unique key must include the partition key) and would split a session's window.
    """
    if value is None:
        return None
    hint = (
        f'{{"by": "hash", "partitions": N}} with N from {PARTITIONS_MIN} to {PARTITIONS_MAX}, '
        "or None"
    )
    if not isinstance(value, dict) or set(value) - {"by", "partitions"}:
        raise InvalidSetting(f"must be {hint}, not {value!r}", check_id="ttmemory.E038")
    if value.get("by", "hash") != "hash":
        raise InvalidSetting(
            f"'by' is {value.get('by')!r}: only 'hash' (by session) is supported",
            check_id="ttmemory.E038",
            hint="Time ranges cannot keep (session, seq) unique across partitions; use "
            '{"by": "hash", "partitions": 16}.',
        )
    count = value.get("partitions")
    if isinstance(count, bool) or not isinstance(count, int):
        raise InvalidSetting(f"must be {hint}, not {value!r}", check_id="ttmemory.E038")
    if not PARTITIONS_MIN <= count <= PARTITIONS_MAX:
        raise InvalidSetting(
            f"'partitions' is {count}; use {PARTITIONS_MIN} to {PARTITIONS_MAX}",
            check_id="ttmemory.E038",
        )
    return {"by": "hash", "partitions": count}


QUEUE_FAMILIES = ("learn", "summarise", "embed", "delivery", "maintenance")


def queue_map(value: Any) -> dict[str, str] | None:
    """None (Celery's default queue for every job) or {family: queue name} (E046).

    Families are QUEUE_FAMILIES; a family left out goes to Celery's default queue.
    """
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        family in QUEUE_FAMILIES and isinstance(name, str) and name
        for family, name in value.items()
    ):
        raise InvalidSetting(
            "must be None or a dict mapping job families "
            f"({', '.join(QUEUE_FAMILIES)}) to queue names, not {value!r}",
            check_id="ttmemory.E046",
        )
    return dict(value)


def rate_parts(rate: str) -> tuple[int, float]:
    """``"30/m"`` -> (30, 60.0): DRF's rate syntax as (count, window in seconds)."""
    count, unit = rate.replace(" ", "").split("/", 1)
    return int(count), {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}[unit[0]]


def key_list(value: Any) -> list[str]:
    """Encryption key entries: a list of strings, or one string (E002; the format: crypto)."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(entry, str) for entry in value):
        return list(value)
    raise InvalidSetting(f"must be a list of strings, not {value!r}", check_id="ttmemory.E002")


def network_list(value: Any) -> list[str]:
    """IP networks in CIDR notation ("10.0.0.0/8", "127.0.0.1"), E073 otherwise."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidSetting(
            f"must be a list of networks such as ['10.0.0.0/8'], not {value!r}",
            check_id="ttmemory.E073",
        )
    for entry in value:
        try:
            ipaddress.ip_network(str(entry), strict=False)
        except ValueError:
            raise InvalidSetting(
                f"{entry!r} is not an IP network (CIDR)", check_id="ttmemory.E073"
            ) from None
    return [str(entry) for entry in value]


def optional_text(check_id: str) -> Callable[[Any], str | None]:
    """None, or a string (its format is checked where it is used)."""

    def rule(value: Any) -> str | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise InvalidSetting(f"must be a string, not {value!r}", check_id=check_id)
        return value

    return rule


def backend(check_id: str) -> Callable[[Any], BackendConfig]:
    """``{"BACKEND": ..., "OPTIONS": {...}}``; its keys are checked by the backend loader."""

    def rule(value: Any) -> BackendConfig:
        if not isinstance(value, dict):
            raise InvalidSetting(
                f"must be a dict {{'BACKEND': 'dotted.Path', 'OPTIONS': {{...}}}}, not {value!r}",
                check_id=check_id,
            )
        return value

    return rule


def optional_backend(check_id: str) -> Callable[[Any], BackendConfig | None]:
    """None, or a backend dict."""
    required = backend(check_id)

    def rule(value: Any) -> BackendConfig | None:
        return None if value is None else required(value)

    return rule


def backend_list(value: Any) -> list[BackendConfig]:
    """A list of backend dicts; None is the empty list (E032)."""
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(c, dict) for c in value):
        raise InvalidSetting(
            f"must be a list of {{'BACKEND': ..., 'OPTIONS': {{...}}}} dicts, not {value!r}",
            check_id="ttmemory.E032",
        )
    return list(value)


def resolver(value: Any) -> str | NamespaceResolver:
    """A dotted path to a callable, or the callable itself (E033)."""
    if (isinstance(value, str) and value) or callable(value):
        return cast("str | NamespaceResolver", value)
    raise InvalidSetting(
        f"must be a dotted path to a callable taking the request, not {value!r}",
        check_id="ttmemory.E033",
    )


def alias_list(value: Any) -> list[str]:
    """DATABASES aliases: a list of strings (E047; that each alias exists: ttmemory.checks)."""
    if value is None:
        return []
    if isinstance(value, list | tuple) and all(isinstance(a, str) and a for a in value):
        return list(value)
    raise InvalidSetting(
        f"must be a list of DATABASES aliases such as ['replica'], not {value!r}",
        check_id="ttmemory.E047",
    )


def alias(value: Any) -> str:
    """One DATABASES alias (E047)."""
    if isinstance(value, str) and value:
        return value
    raise InvalidSetting(
        f"must be a DATABASES alias such as 'default', not {value!r}", check_id="ttmemory.E047"
    )


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
    # message_search scores at most this many messages not yet indexed per search (the newest
    # sessions' newest; each costs its decryption and term hashing, about 80 us here). When
    # more wait (the job is behind: no worker, a backlog), the older ones are found once the
    # message_index job has indexed them, and the search queues that job.
    MESSAGE_SEARCH_PENDING_LIMIT = Setting(1000, integer(minimum=0))
    # A query term found in more messages than this (a word used everywhere: low weight) adds
    # to the score of its newest N messages only; its weight still counts every message.
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
    # REST API: seconds a checked DRF token is trusted without reading it again (0: read on
    # every request). Deleting it or saving its user takes effect at once in the process that
    # does it; in other processes within this bound. An API key's row is read on every request
    # (REST and MCP): only the proof that its secret matched is kept this long.
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


# Connected here, at import, before any module that builds a cache from these settings (they
# all import this one), so it runs first; the caches reset lazily, so it need not.
@receiver(setting_changed)
def _reload_settings(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        app_settings.clear()
