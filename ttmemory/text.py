"""Text normalisation per language: the one tokenizer of the blind index, upsert keys and BM25."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import snowballstemmer
from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.conf import app_settings

_WORD = re.compile(r"\w+", re.UNICODE)
# Han (with extensions and compatibility ideographs), kana and Hangul syllables: scripts written
# without spaces between words (Korean has spaces, but particles glue onto its nouns), cut
# into overlapping character bigrams as Lucene's CJK analyzer does, plus single Han
# characters (its outputUnigrams); measured against jieba in docs/languages.md.
_CJK_CHARS = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\U00020000-\U0003134f"
)
_CJK = re.compile(f"[{_CJK_CHARS}]+")
# Russian writes yo (U+0451) as ie (U+0435) as often as not: one term for both.
_YO = str.maketrans("\u0451", "\u0435")
_DATA = Path(__file__).resolve().parent / "text_data"

# The script each Snowball language is written in (the rest: Latin). A word is analysed in the
# namespace's language when that language is written in the word's script, else in its
# script's default language (_SCRIPT_DEFAULT), so English, Russian, Greek, Arabic... words of one
# namespace each meet their own stems.
_LANGUAGE_SCRIPT = {
    "russian": "cyrillic",
    "serbian": "cyrillic",
    "greek": "greek",
    "arabic": "arabic",
    "persian": "arabic",
    "hindi": "devanagari",
    "nepali": "devanagari",
    "tamil": "tamil",
    "armenian": "armenian",
    "yiddish": "hebrew",
}
_SCRIPT_DEFAULT = {
    "latin": "english",
    "cyrillic": "russian",
    "greek": "greek",
    "arabic": "arabic",
    "devanagari": "hindi",
    "tamil": "tamil",
    "armenian": "armenian",
}
# First code point of each script's block, and the block's end (exclusive), in order.
_SCRIPT_BLOCKS = (
    (0x0370, 0x0400, "greek"),
    (0x0400, 0x0530, "cyrillic"),
    (0x0530, 0x0590, "armenian"),
    (0x0590, 0x0600, "hebrew"),
    (0x0600, 0x0700, "arabic"),
    (0x0900, 0x0980, "devanagari"),
    (0x0B80, 0x0C00, "tamil"),
    (0x1F00, 0x2000, "greek"),
)


def script_of(word: str) -> str:
    """The script of a word's first letter: "latin" for Latin, digits and any script not listed."""
    point = ord(word[0])
    if point < 0x0370:
        return "latin"
    for start, end, script in _SCRIPT_BLOCKS:
        if start <= point < end:
            return script
    return "other"


def normalise_text(text: str) -> str:
    """Case-folded, NFKC, whitespace-collapsed text: equal for texts that say the same thing."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def normalise_terms(text: str, *, language: str | None = None) -> list[str]:
    """Words of ``text`` in order, normalised, stop words and 1-letter tokens removed, stemmed.

    ``language`` (default ``TTMEMORY["STEMMER_LANGUAGE"]``, English unless set; see
    ``namespace_language``) chooses the analysis of words in its script; a word of another
    script gets its script's language: Cyrillic Russian, Latin English, Greek Greek, and so on.
    So an English and a Russian text in one namespace both meet their queries. Each language
    has its Snowball stems and, for English, Russian, German, Spanish and French, a stop list
    (``ttmemory/text_data/stopwords``). Runs of Chinese, Japanese or Korean characters become
    overlapping character bigrams plus each Han character off the stop list ("我对花生过敏" ->
    我对 对 对花 花 花生 生 ...), so the queries 花生 and 猫 meet the facts that say them.
    English folds one more thing: a stem's final "i" (Snowball's ending of words in -y/-ies)
    is dropped, so "allergies" meets "allergic". ``STEMMER_LANGUAGE`` None keeps whole words
    (stop words still go). Changing what this returns changes every blind-index term: bump
    ``NORMALISER_VERSION``.
    """
    analyse = _analyser(_language(language))
    normal = normalise_text(text)
    terms: list[str] = []
    if normal.isascii() or _CJK.search(normal) is None:
        for word in _WORD.findall(normal):
            term = analyse(word)
            if term is not None:
                terms.append(term)
        return terms
    for word in _WORD.findall(normal):
        for part in _split_cjk(word):
            if _CJK.match(part):
                terms.extend(_cjk_terms(part))
            else:
                term = analyse(part)
                if term is not None:
                    terms.append(term)
    return terms


def _split_cjk(word: str) -> list[str]:
    """``word`` cut into its runs of CJK characters and the text between them."""
    parts: list[str] = []
    start = 0
    for match in _CJK.finditer(word):
        if match.start() > start:
            parts.append(word[start : match.start()])
        parts.append(match.group())
        start = match.end()
    if start < len(word):
        parts.append(word[start:])
    return parts


def _cjk_terms(run: str) -> list[str]:
    """A run's overlapping bigrams and, between them, each Han character not on the stop list.

    Many Chinese words and Japanese kanji are one character (猫 cat, 茶 tea), which bigrams alone
    never match; kana and Hangul alone are mostly particles and stay out, as does a lone one.
    """
    stop = _han_stop()
    terms: list[str] = []
    last = len(run) - 1
    for i, char in enumerate(run):
        if _is_han(char) and char not in stop:
            terms.append(char)
        if i < last:
            terms.append(run[i : i + 2])
    return terms


def _is_han(char: str) -> bool:
    point = ord(char)
    return (
        0x3400 <= point <= 0x4DBF
        or 0x4E00 <= point <= 0x9FFF
        or 0xF900 <= point <= 0xFAFF
        or 0x20000 <= point <= 0x3134F
    )


#: What ``normalise_terms`` returns, as a version: part of every blind-index marker and of the
#: HashEmbedder's model name, so a change makes facts stale until they are rebuilt.
#: 1: hand-written suffix folding; 2: Snowball stems with the final-"i" fold; 3: a language per
#: script (Cyrillic Russian...), stop lists per language, CJK bigrams, the "i" fold English only.
NORMALISER_VERSION = 3
STEM_CACHE_SIZE = 65536
_NONE = "none"


def normaliser_version(language: str | None = None) -> str:
    """``"3-english"``: the normaliser version and the language (``none``: no stems).

    ``language`` defaults to ``STEMMER_LANGUAGE``, as ``normalise_terms``'s does.
    """
    return f"{NORMALISER_VERSION}-{_language(language)}"


def namespace_language(namespace: str) -> str:
    """The language of ``namespace``: its entry in ``NAMESPACE_LANGUAGES``, else the default.

    A key names one namespace, or ends in ``*`` to name every namespace starting with what
    comes before it (``"acme/*"``); an exact key wins, then the longest prefix. The default is
    ``STEMMER_LANGUAGE`` ("none" when it is None).
    """
    overrides = app_settings.NAMESPACE_LANGUAGES
    if overrides:
        exact = overrides.get(namespace)
        if exact is not None:
            return str(exact)
        best = ""
        chosen = None
        for key, value in overrides.items():
            if key.endswith("*") and namespace.startswith(key[:-1]) and len(key) > len(best):
                best, chosen = key, value
        if chosen is not None:
            return str(chosen)
    return _language(None)


def _language(language: str | None) -> str:
    if language is None:
        return app_settings.STEMMER_LANGUAGE or _NONE
    return language


@dataclass(frozen=True)
class _Script:
    """How the words of one script are analysed: stop words and stemmer (None: whole words)."""

    stop: frozenset[str]
    stem: Callable[[str], str] | None


@cache
def stop_words(language: str) -> frozenset[str]:
    """The stop list of ``language`` from ``text_data/stopwords`` (empty when it has none)."""
    path = _DATA / "stopwords" / f"{language}.txt"
    if not path.is_file():
        return frozenset()
    words = (line.split("#", 1)[0].strip() for line in path.read_text("utf-8").splitlines())
    return frozenset(normalise_text(w).translate(_YO) for w in words if w)


def _han_stop() -> frozenset[str]:
    return stop_words("chinese")


#: The English stop list (the first release's; kept as a name for callers).
STOP_WORDS = stop_words("english")

_analysers: dict[str, Callable[[str], str | None]] = {}


def _analyser(language: str) -> Callable[[str], str | None]:
    """word -> term (None: a stop word or too short) for a namespace of ``language``."""
    analyse = _analysers.get(language)
    if analyse is None:
        analyse = _analysers[language] = _build_analyser(language)
    return analyse


def _build_analyser(language: str) -> Callable[[str], str | None]:
    stemming = language != _NONE
    own_script = _LANGUAGE_SCRIPT.get(language, "latin")
    scripts: dict[str, _Script] = {}
    for script, default in _SCRIPT_DEFAULT.items():
        chosen = language if own_script == script and language in _SNOWBALL else default
        scripts[script] = _Script(
            stop=stop_words(chosen), stem=_stemmer(chosen) if stemming else None
        )
    if own_script not in scripts:  # hebrew: Yiddish is its only Snowball language
        scripts[own_script] = _Script(
            stop_words(language), _stemmer(language) if stemming else None
        )
    plain = _Script(frozenset(), None)
    latin, cyrillic = scripts["latin"], scripts["cyrillic"]
    cache_: dict[str, str | None] = {}

    def analyse(word: str) -> str | None:
        term = cache_.get(word, "")
        if term != "":
            return term
        if len(word) < 2:
            return None
        script = latin if ord(word[0]) < 0x0370 else scripts.get(script_of(word), plain)
        folded = word.translate(_YO) if script is cyrillic else word
        if folded in script.stop:
            result = None
        elif script.stem is None:
            result = folded
        else:
            result = script.stem(folded)
        if len(cache_) >= STEM_CACHE_SIZE:
            cache_.clear()
        cache_[word] = result
        return result

    return analyse


_SNOWBALL = frozenset(snowballstemmer.algorithms())


def _stemmer(language: str) -> Callable[[str], str] | None:
    """``language``'s Snowball stem of a word. A Snowball stemmer keeps the word it works on in
    the object, so two threads stemming with one object read each other's words (wrong stems,
    or an IndexError from inside it): each thread has its own (the index thread stems while
    requests do)."""
    if language not in _SNOWBALL:
        return None
    own = threading.local()

    def algorithm() -> Any:
        found = getattr(own, "algorithm", None)
        if found is None:
            found = own.algorithm = snowballstemmer.stemmer(language)
        return found

    if language != "english":
        return lambda word: algorithm().stemWord(word)

    def stem(word: str) -> str:
        stemmed = algorithm().stemWord(word)
        if len(stemmed) > 4 and stemmed.endswith("i"):
            stemmed = stemmed[:-1]
        return stemmed

    return stem


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":
        _analysers.clear()
