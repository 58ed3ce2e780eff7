"""What a question asks about when its words are not the facts' words: the slots it names in
other words and the synonyms of its words (the rule files' ``[[ask]]`` tables and ``[synonyms]``
groups), added to the words its keyword terms are made of.

"How should I address her?" names the ``name`` slot without saying "name"; every fact of that
slot carries the slot's words in its postings (``blind.fact_postings``), so the question asked
with two of them finds "The user's name is Marta". Only facts of the slot (or a fact whose own
text holds one of those words) gain: a question that names no slot, or a namespace without a
fact of it, gets nothing more, and recall's evidence rule still never pads the hits.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver

from ttmemory.longterm import rulebook, slots
from ttmemory.text import normalise_terms

#: How many of a slot's words a question routed to it is asked with (the first ones of the
#: slot's list, English first: every fact of the slot carries them all).
SLOT_WORDS = 2


def routed_slots(question: str) -> list[str]:
    """The slots ``question`` asks about in any shipped language's ``[[ask]]`` words."""
    found: list[str] = []
    lowered = question.lower()
    for script, asks in _asks():
        if script is not None and not script.search(question):
            continue  # none of this language's letters: none of its words
        for pattern, lower, slot in asks:
            if slot not in found and pattern.search(lowered if lower else question):
                found.append(slot)
    return found


_Asks = tuple[tuple[re.Pattern[str] | None, tuple[tuple[re.Pattern[str], bool, str], ...]], ...]
# A character class alone (Russian's Cyrillic): a language told apart by its script, not its words.
_SCRIPT = re.compile(r"\[[^\]]+\]")
# What in a pattern is no letter to match: escapes, flags, group names.
_NOT_LETTERS = re.compile(r"\\[a-zA-Z]|\\u[0-9a-fA-F]{4}|\(\?[a-zA-Z-]+[:)]|\(\?P<\w+>")


@functools.cache
def _asks() -> _Asks:
    """Each language's ``[[ask]]`` patterns, ready for ``routed_slots``: tried only on a
    question holding a letter of the language's script when its ``detect`` pattern is one
    character class (Russian's Cyrillic, Chinese's Han, Japanese's kana); a pattern without an
    upper-case letter is matched case-sensitively against the lower-cased question, which the
    regular expression engine does faster than a case-insensitive match (the same matches)."""
    table = []
    for lang in rulebook.languages():
        detect = lang.pattern("detect")
        script = detect if detect is not None and _SCRIPT.fullmatch(detect.pattern) else None
        asks = []
        for pattern, slot in lang.asks:
            letters = _NOT_LETTERS.sub("", pattern.pattern)
            lower = letters == letters.lower()
            if lower:
                pattern = re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)
            asks.append((pattern, lower, slot))
        table.append((script, tuple(asks)))
    return tuple(table)


def synonyms_of(question: str, *, language: str | None = None) -> list[str]:
    """The words of ``[synonyms]`` groups one of whose words ``question`` holds (by its terms in
    ``language``, the stemmer's), not already in it."""
    asked = set(normalise_terms(question, language=language))
    groups, by_term = _synonym_index(language)
    extra: list[str] = []
    # Only the groups with a word one of whose terms the question holds can match.
    for index in sorted({i for term in asked for i in by_term.get(term, ())}):
        group = groups[index]
        held = [word for word, terms in group if terms and terms <= asked]
        if held:
            extra.extend(word for word, _ in group if word not in held)
    return list(dict.fromkeys(extra))


_Groups = list[list[tuple[str, frozenset[str]]]]


@functools.lru_cache(maxsize=32)
def _synonym_index(language: str | None) -> tuple[_Groups, dict[str, tuple[int, ...]]]:
    """Every language's ``[synonyms]`` groups (in order) with each word's terms in ``language``,
    and for each term the groups that hold a word with it: made once per language."""
    groups: _Groups = [
        [(word, frozenset(normalise_terms(word, language=language))) for word in group]
        for lang in rulebook.languages()
        for group in lang.synonyms
    ]
    by_term: dict[str, set[int]] = {}
    for index, group in enumerate(groups):
        for _, terms in group:
            for term in terms:
                by_term.setdefault(term, set()).add(index)
    return groups, {term: tuple(sorted(ids)) for term, ids in by_term.items()}


def expanded(question: str, *, language: str | None = None) -> str:
    """``question`` with the words of the slots it asks about and its synonyms appended: the
    text recall makes its keyword terms of."""
    extra = [word for slot in routed_slots(question) for word in slots.words(slot)[:SLOT_WORDS]]
    extra += synonyms_of(question, language=language)
    return " ".join([question, *dict.fromkeys(extra)]) if extra else question


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "TTMEMORY":  # the stemmer and stop words the terms were made with
        _synonym_index.cache_clear()
