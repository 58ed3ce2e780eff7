"""Any candidate as one short third-person statement, and the key and terms that identify it.

An LLM's candidates ("User is allergic to peanuts", "I'm allergic to peanuts") become
"<subject> is allergic to peanuts"; ``canonical`` and ``content_terms`` say when two statements
are the same fact under either subject, ``similarity`` how alike two are.

One subject convention: the user's name when it is known (``subject``), else the language's
default subject ("The user"); the name itself is stored as "The user's name is <name>".
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from ttmemory.longterm import rulebook
from ttmemory.longterm.values import CJK, tidy, trim
from ttmemory.text import normalise_terms, normalise_text, normaliser_version

DEFAULT_SUBJECT = "The user"


_LEADING_SUBJECT = re.compile(
    r"^(?:the\s+user|user|the\s+customer|customer|the\s+human|i)\b(?!')", re.I
)


_LEADING_POSSESSIVE = re.compile(r"^(?:the\s+user's|user's|my)\s+", re.I)


_LEADING_I_AM = re.compile(r"^(?:i'm|i am)\s+", re.I)


_LEADING_I_HAVE = re.compile(r"^(?:i've)\s+", re.I)


_SUBJECTLESS = re.compile(
    r"^(?:is|has|prefers|likes|loves|enjoys|lives|works|dislikes|hates|speaks|owns|plays|"
    r"uses|drives|was|follows|does)\b",
    re.I,
)


_INNER_FILLER = re.compile(r"\s+(?:currently|now|still|actually)(?=\s)", re.I)


def normalise_statement(text: str, *, subject: str = DEFAULT_SUBJECT) -> str:
    """A candidate as one short third-person statement about ``subject``.

    "User is allergic to peanuts", "I'm allergic to peanuts" and "is allergic to peanuts" all
    become "<subject> is allergic to peanuts"; "I live in Porto now" becomes "<subject> lives in
    Porto". The user's name is kept as "The user's name is <name>".
    """
    text = " ".join(str(text).replace("\u2019", "'").split()).strip(" .!")
    if not text:
        return ""
    if _LEADING_I_AM.match(text):
        text = _LEADING_I_AM.sub(subject + " is ", text, count=1)
    elif _LEADING_I_HAVE.match(text):
        text = _LEADING_I_HAVE.sub(subject + " has ", text, count=1)
    elif _LEADING_POSSESSIVE.match(text):
        text = _LEADING_POSSESSIVE.sub(possessive(subject) + " ", text, count=1)
    elif re.match(r"^i\s+(\w+)", text, re.I):
        verb = text.split()[1].lower()
        third = rulebook.load("en").third_person
        text = f"{subject} {third.get(verb, verb)} {' '.join(text.split()[2:])}"
    elif _LEADING_SUBJECT.match(text):
        text = _LEADING_SUBJECT.sub(subject, text, count=1)
    elif _SUBJECTLESS.match(text):
        text = f"{subject} {text[:1].lower()}{text[1:]}"
    elif subject != DEFAULT_SUBJECT and text.lower().startswith(subject.lower() + " "):
        text = subject + text[len(subject) :]
    elif subject != DEFAULT_SUBJECT:
        for other in rulebook.subjects():
            # Chinese writes no space after the subject ("用户住在北京").
            if text.startswith(other + " ") or (CJK.match(other) and text.startswith(other)):
                text = subject + text[len(other) :]
                break
    text = _INNER_FILLER.sub("", text)
    lang = rulebook.detect(text)
    tail = lang.pattern("tail")
    if tail is not None:
        text = tail.sub("", text)
    text = trim(text, lang)
    name = re.match(rf"^{re.escape(possessive(subject))} name is (.+)$", text, re.I)
    if name:
        text = f"The user's name is {name.group(1)}"
    return tidy(text)


def split_statement(text: str) -> list[str]:
    """A candidate cut where a first-person clause starts ("... peanuts and I prefer ...")."""
    splitter = rulebook.joined(rulebook.available(), "clause")
    text = str(text).replace("\u2019", "'")
    parts = splitter.split(text) if splitter is not None else [text]
    return [part.strip(" ,.") for part in parts if part and part.strip(" ,.")]


def possessive(subject: str) -> str:
    """The subject's possessive ("The user's", "Ada's", "James'")."""
    return subject + ("'" if subject.endswith("s") and subject != DEFAULT_SUBJECT else "'s")


def canonical(text: str, *, subject: str = DEFAULT_SUBJECT) -> str:
    """The statement with its subject replaced by "@": one key for "Ada ..." and "The user ..."."""
    normal = normalise_text(text).strip(" .")
    for name in dict.fromkeys([subject, DEFAULT_SUBJECT, *rulebook.subjects()]):
        low = normalise_text(name)
        if normal.startswith(low + " ") or normal.startswith(low + "'s "):
            return "@" + normal[len(low) :]
    return normal


def content_terms(text: str, *, subject: str = DEFAULT_SUBJECT) -> set[str]:
    """The stemmed terms of a statement without its subject (what it says about the user)."""
    key = canonical(text, subject=subject)
    if not key.startswith("@"):
        # Chinese and Japanese write no space after the subject ("用户养了一只猫"): its
        # characters would make two different facts look alike.
        for name in rulebook.subjects():
            if CJK.match(name) and key.startswith(normalise_text(name)):
                key = key[len(normalise_text(name)) :].lstrip("はの")
                break
    # The subject in another case ("Hund des Nutzers", Russian "u polzovatelya") is no
    # more what a fact says than the subject starting it: else any two facts so worded share it.
    forms = _subject_form_terms(normaliser_version())
    # Hiragana alone are endings and particles ("を", "ている"), not what a fact says.
    return {
        t for t in normalise_terms(key.lstrip("@")) if not _HIRAGANA.fullmatch(t) and t not in forms
    }


_HIRAGANA = re.compile("[\u3040-\u309f]+")


@functools.cache
def _subject_form_terms(version: str) -> frozenset[str]:
    """The terms of every rule file's subject forms, once per normaliser ``version``
    (``normaliser_version()``: the terms follow ``STEMMER_LANGUAGE``). Building them on each
    ``content_terms`` call was half its cost."""
    return frozenset(
        term
        for lang in rulebook.languages()
        for form in lang.subject_forms.values()
        for term in normalise_terms(form)
    )


def similarity(a: str, b: str, *, subject: str = DEFAULT_SUBJECT) -> float:
    """Jaccard similarity of two statements' content terms (0..1)."""
    first, second = content_terms(a, subject=subject), content_terms(b, subject=subject)
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)


# What two statements sharing a frame may differ in: up to this many words (characters in a
# language written without spaces) on each side.
REFRAMED_WORDS = 3
REFRAMED_CHARACTERS = 4


class Reframed(NamedTuple):
    """Where two statements sharing a frame differ (``reframed``): the new and the old value,
    and how many words (characters) they share besides the subject and its predicate."""

    new: str
    old: str
    beyond: int


def reframed(new: str, old: str, *, subject: str = DEFAULT_SUBJECT) -> Reframed | None:
    """The values two statements about the same one differ in when they say it in the same words
    around them ("@ has two cats" / "@ has three cats": "two", "three"; "用户有三个孩子" /
    "用户有两个孩子": "三", "两"), else None.

    The words they share must hold their subject and the word after it (the predicate: "@'s
    sister has two kids" and "@ has two kids" share no frame), and each side differs in at most
    ``REFRAMED_WORDS`` words (``REFRAMED_CHARACTERS`` characters in Chinese and Japanese).
    """
    first, second = canonical(new, subject=subject), canonical(old, subject=subject)
    cjk = bool(CJK.search(first) or CJK.search(second))
    a = list(first.replace(" ", "")) if cjk else first.split()
    b = list(second.replace(" ", "")) if cjk else second.split()
    shared = 0
    while shared < min(len(a), len(b)) and a[shared] == b[shared]:
        shared += 1
    ending = 0
    while ending < min(len(a), len(b)) - shared and a[-1 - ending] == b[-1 - ending]:
        ending += 1
    left, right = a[shared : len(a) - ending], b[shared : len(b) - ending]
    widest = REFRAMED_CHARACTERS if cjk else REFRAMED_WORDS
    # The subject and its predicate: "@ has" (two words), "用户有" (the subject and one character).
    frame = (
        2
        if not cjk
        else next(
            (len(n) + 1 for n in map(normalise_text, rulebook.subjects()) if first.startswith(n)), 3
        )
    )
    if shared < frame or not (0 < len(left) <= widest and 0 < len(right) <= widest):
        return None
    join = "".join if cjk else " ".join
    return Reframed(join(left), join(right), shared + ending - frame)


def count_changed(new: str, old: str) -> bool:
    """Whether two values ``reframed`` found say one thing with another count ("two" / "three",
    "два кота" / "три кота", "两" / "三"): a number in each, the rest the same terms."""

    numbers = rulebook.numbers()

    def split(value: str) -> tuple[bool, list[str]]:
        words = list(value) if CJK.search(value) else value.split()
        counted = [w for w in words if w in numbers or _DIGITS.fullmatch(w)]
        rest = " ".join(w for w in words if w not in counted)
        return bool(counted), sorted(normalise_terms(rest)) if rest else []

    (has_new, rest_new), (has_old, rest_old) = split(new), split(old)
    return has_new and has_old and rest_new == rest_old


_DIGITS = re.compile(r"\d+(?:[.,]\d+)?")
