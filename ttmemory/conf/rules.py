"""Setting rules: each takes a configured value and returns it coerced, or raises InvalidSetting.

A rule names the check id that reports its value (``ttmemory.E0xx``) and a hint; the
declaration (``ttmemory.conf.settings``) pairs every ``TTMEMORY`` key with one rule.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any, Literal, cast

import snowballstemmer

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
    return _fraction(value, ", or None")


def fraction(value: Any) -> float:
    """A number from 0 to 1 (E026)."""
    return _fraction(value, "")


def _fraction(value: Any, alternative: str) -> float:
    number = _number(value)
    if number is None or not 0 <= number <= 1:
        raise InvalidSetting(
            f"must be a fraction from 0 to 1{alternative}, not {value!r}",
            check_id="ttmemory.E026",
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


def _one_of(value: Any, valid: Sequence[str], check_id: str) -> str:
    if value not in valid:
        raise InvalidSetting(f"is {value!r}; use one of: {', '.join(valid)}", check_id=check_id)
    return cast(str, value)


def trim_mode(value: Any) -> TrimMode:
    """One of VALID_TRIM_MODES (E023)."""
    return cast(TrimMode, _one_of(value, VALID_TRIM_MODES, "ttmemory.E023"))


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
    return _one_of(value, VALID_EXPIRY_MODES, "ttmemory.E037")


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
