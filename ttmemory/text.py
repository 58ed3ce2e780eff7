"""Text normalisation shared by the blind keyword index, upsert hashing and HashEmbedder."""

from __future__ import annotations

import re
import unicodedata

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
    """Words of ``text`` in order, normalised, with stop words and 1-letter tokens removed.

    A light suffix folding (plural "s", "ing", "ed") lets "allergies" match "allergy" and
    "booking" match "booked" without a stemmer dependency.
    """
    terms = []
    for word in _WORD.findall(normalise_text(text)):
        if len(word) < 2 or word in STOP_WORDS:
            continue
        terms.append(_fold(word))
    return terms


def _fold(word: str) -> str:
    if not word.isascii():
        return word
    if len(word) > 4 and not word.endswith(("ss", "us", "is")):
        for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)] + replacement
    # "move"/"moved" and "live"/"living" share a stem only without the final e.
    return word[:-1] if len(word) >= 4 and word.endswith("e") else word
