"""Text normalisation shared by the blind keyword index, upsert hashing and HashEmbedder."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

import snowballstemmer
from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.conf import app_settings

_WORD = re.compile(r"\w+", re.UNICODE)
# A short English stop list: these words carry no recall signal and inflate every posting list.
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
        "do",
        "does",
        "did",
        "am",
        "been",
    ]
)


def normalise_text(text: str) -> str:
    """Case-folded, NFKC, whitespace-collapsed text: equal for texts that say the same thing."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def normalise_terms(text: str) -> list[str]:
    """Words of ``text`` in order, normalised, stop words and 1-letter tokens removed, stemmed.

    Stems come from the Snowball stemmer of ``TTMEMORY["STEMMER_LANGUAGE"]`` (English by
    default; None keeps whole words), so "speed"/"speeds", "use"/"used"/"uses" and
    "note"/"notes" are one term. One fold on top: a stem's final "i" (Snowball's ending of
    words in -y/-ies) is dropped, so "allergies"/"allergy" meet "allergic". Changing this
    function (or the language) changes every blind-index term: bump ``NORMALISER_VERSION``.
    """
    stem = _stemmer()
    terms = []
    for word in _WORD.findall(normalise_text(text)):
        if len(word) < 2 or word in STOP_WORDS:
            continue
        terms.append(stem(word))
    return terms


#: What ``normalise_terms`` returns, as a version: part of every blind-index marker and of the
#: HashEmbedder's model name, so a change makes facts stale until they are rebuilt.
#: 1: hand-written suffix folding; 2: Snowball stems with the final-"i" fold.
NORMALISER_VERSION = 2
_stem_cache: dict[str, str] = {}
_stem: Callable[[str], str] | None = None
STEM_CACHE_SIZE = 65536


def normaliser_version() -> str:
    """``"2-english"``: the normaliser version and the stemmer language (``none``: no stems)."""
    return f"{NORMALISER_VERSION}-{app_settings.STEMMER_LANGUAGE or 'none'}"


def _stemmer() -> Callable[[str], str]:
    global _stem
    if _stem is None:
        language = app_settings.STEMMER_LANGUAGE
        if language is None:
            _stem = _identity
        else:
            algorithm = snowballstemmer.stemmer(language)

            def stem(word: str) -> str:
                cached = _stem_cache.get(word)
                if cached is None:
                    cached = algorithm.stemWord(word)
                    if len(cached) > 4 and cached.endswith("i"):
                        cached = cached[:-1]
                    if len(_stem_cache) >= STEM_CACHE_SIZE:
                        _stem_cache.clear()
                    _stem_cache[word] = cached
                return cached

            _stem = stem
    return _stem


def _identity(word: str) -> str:
    return word


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    global _stem
    if setting == "TTMEMORY":
        _stem = None
        _stem_cache.clear()
