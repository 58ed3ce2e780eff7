"""A statement's value: cleaned of fillers and first person, dated, corrected (pure functions).

The words come from the rule files (``rulebook``): each language's trailing fillers, value
classes (weekdays, months, days) and first-person forms.
"""

from __future__ import annotations

import functools
import re

from ttmemory.longterm import rulebook
from ttmemory.text import normalise_terms


def dated_only(value: str) -> bool:
    """Whether ``value`` is only dates (weekdays, months, days, numbers and short words): a
    correction made of them corrects a dated fact, never another one."""
    for lang in rulebook.languages():
        tokens = class_tokens(value, lang)
        if not tokens:
            continue
        rest = value
        for _, match in tokens:
            rest = rest.replace(match.group(0), " ")
        if CJK.search(value) or not any(len(word) > _SHORT for word in rest.split()):
            return True
    return False


def is_dated(value: str, lang: rulebook.Language) -> bool:
    """Whether ``value`` says when: a weekday or a month, a number, or the language's
    ``[text] dated`` words ("tomorrow", "next week", "明天")."""
    if re.search(r"\d", value) or class_tokens(value, lang):
        return True
    dated = lang.pattern("dated")
    return dated is not None and dated.search(value) is not None


def class_tokens(value: str, lang: rulebook.Language) -> list[tuple[str, re.Match[str]]]:
    """The weekdays, months, ... (the lexicon's value classes) in ``value``, with their class."""
    found = []
    for name, alternatives in lang.value_classes.items():
        for match in class_pattern(alternatives).finditer(value):
            found.append((name, match))
    return found


def class_pattern(alternatives: str) -> re.Pattern[str]:
    """One value class's words as a pattern, bounded as words where the script has them."""
    # Chinese and Japanese words have no boundaries to look for.
    edge = "" if CJK.search(alternatives) else r"(?<!\w)"
    return re.compile(rf"{edge}(?:{alternatives}){edge.replace('<', '')}", re.I)


def article(value: str) -> str:
    """ "a" or "an" before ``value`` (English templates' ``{a}``)."""
    return "an" if value[:1].lower() in "aeiou" else "a"


def is_value_class(value: str, lang: rulebook.Language) -> bool:
    """Whether ``value`` is a weekday or a month ("on Monday" is no city, no employer)."""
    return any(
        re.fullmatch(alternatives, value, re.I) for alternatives in lang.value_classes.values()
    )


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def shaped_slot(value: str) -> str:
    """The slot a value's shape names whatever the verb ("I mostly use mia@x.com these days"
    sets the e-mail, so it supersedes the old one), or ""."""
    return "email" if _EMAIL.fullmatch(value.strip()) else ""


def swap_value(text: str, old: str, new: str) -> str:
    """``text`` with its value ``old`` replaced by ``new`` (the last occurrence)."""
    at = text.lower().rfind(old.lower()) if old else -1
    if at < 0:
        return text
    return text[:at] + new + text[at + len(old) :]


def replace_named(text: str, old: str, new: str) -> str:
    """``text`` with the old value a correction names ("tuesday, not monday", "不是北京")
    replaced by ``new``; the words of ``new`` that already follow ``old`` in ``text`` are not
    said twice ("hat zwei Katzen" + "drei Katzen, nicht zwei" -> "hat drei Katzen"). ``text``
    unchanged when it does not hold ``old`` as a whole word."""
    old, new = strip_value(old), strip_value(new)
    if not old or not new:
        return text
    edge = "" if CJK.search(old) else r"(?<!\w)"
    # The last one: a statement's value comes after its subject.
    every = list(re.finditer(edge + re.escape(old) + edge.replace("<", ""), text, re.I))
    if not every:
        return text
    found = every[-1]
    before, after = text[: found.start()], text[found.end() :]
    # Words (characters, in a language written without spaces) of ``new`` the fact already says
    # around the old value: "a Honda Jazz" for "Civic" in "drives a Honda Civic" is "Jazz".
    cjk = bool(CJK.search(new))
    parts = list(new) if cjk else new.split()
    joiner = "" if cjk else " "
    said_before = list(before.rstrip().casefold()) if cjk else before.casefold().split()
    said_after = list(after.lstrip().casefold()) if cjk else after.casefold().split()
    for keep in range(len(parts) - 1, 0, -1):
        head = [p.casefold() for p in parts[:keep]]
        if said_before[len(said_before) - keep :] == head:
            parts = parts[keep:]
            break
    for keep in range(1, len(parts)):
        rest = [p.casefold() for p in parts[keep:]]
        if said_after[: len(rest)] == rest:
            parts = parts[:keep]
            break
    return before + joiner.join(parts) + after


def swap_kind(text: str, new: str) -> str | None:
    """``text`` with its word of the same kind as ``new`` replaced by it ("用户会弹钢琴" + "吉他",
    "L'utilisateur a un chien" + "deux chats", "говорит по-английски" + "по-немецки"): the kinds
    are the rule files' ``[[kind]]`` members, compared by their stems; ``new`` must be one member
    and nothing more (a count or article may go with it, and replaces the one before the word).
    None when it is not, or ``text`` holds no other member of its kind."""
    cjk = bool(CJK.search(new))
    for lang in rulebook.languages():
        counts = lang.numbers
        said = [w for w in new.split() if w.lower() not in counts and not w.isdigit()]
        new_terms = set(normalise_terms(" ".join(said)))
        if not new_terms and not cjk:
            continue
        for _, members in lang.kinds:
            if cjk:
                if new not in members:
                    continue
                others = sorted((m for m in members if m != new and m in text), key=len)
                if others:
                    return replace_named(text, others[-1], new)
                continue
            stems = [set(normalise_terms(m)) for m in members]
            if new_terms not in stems:
                continue
            words = list(re.finditer(r"[\w'-]+", text))
            for index in range(len(words) - 1, 0, -1):
                word = words[index]
                terms = set(normalise_terms(word.group(0)))
                if not terms or terms == new_terms or terms not in stems:
                    continue
                old = word.group(0)
                before = words[index - 1].group(0)
                if len(said) < len(new.split()) and (before.lower() in counts or before.isdigit()):
                    old = text[words[index - 1].start() : word.end()]  # "un chien" -> "deux chats"
                replaced = replace_named(text, old, new)
                return replaced if replaced != text else None
    return None


def correct_value(text: str, new: str, *, old: str = "", by_class_only: bool = False) -> str:
    """``text`` with the value ``new`` corrects put in place ("... on Monday" + "Tuesday").

    A weekday, month or number replaces the last word of the same class (the classes are
    lexicons of the rule files), also inside a short phrase ("Thursday at 5", "el martes": each
    dated word replaces its own class); the ``old`` value when known; a word of the same kind
    (``swap_kind``); a capitalised value the trailing capitalised words;
    anything else as many trailing words as it has.
    ``by_class_only``: ``text`` unchanged unless it holds a word of ``new``'s class.
    """
    new = strip_value(new)
    if not new:
        return text
    swapped = _swap_classes(text, new)
    if swapped is not None or by_class_only:
        return swapped if swapped is not None else text
    if old and old.lower() in text.lower():
        return swap_value(text, old, new)
    kind = swap_kind(text, new)
    if kind is not None:
        return kind
    for lang in rulebook.languages():
        # A language written without spaces names where a statement's value sits
        # ("用户住在苏州": after 住在): ``[text] value_tail``, group ``old``.
        tail = lang.pattern("value_tail")
        found = tail.search(text) if tail is not None else None
        if found is not None and found.group("old") and CJK.search(new):
            return text[: found.start("old")] + new + text[found.end("old") :]
    words = text.split()
    if new[:1].isupper():
        keep = len(words)
        while keep > 2 and words[keep - 1][:1].isupper():
            keep -= 1
        if keep < len(words):
            return " ".join([*words[:keep], new])
        # Else the one capitalised run inside it ("The user is from Dublin originally" + "Cork").
        runs = [
            i
            for i in range(2, len(words))
            if words[i][:1].isupper() and not words[i - 1][:1].isupper()
        ]
        if len(runs) == 1:
            end = runs[0]
            while end < len(words) and words[end][:1].isupper():
                end += 1
            return " ".join([*words[: runs[0]], new, *words[end:]])
    count = len(new.split())
    if len(words) <= count + 2:
        return text
    return " ".join([*words[:-count], new])


def recount(text: str, value: str) -> str:
    """``text`` with the count of what ``value`` counts put in place ("Der Nutzer hat drei
    Kinder" + "zwei Kinder" -> "Der Nutzer hat zwei Kinder"): the number before a word of the
    same stem as ``value``'s last word, or the first count when ``value`` is a count alone;
    ``text`` unchanged when it holds none."""
    words = value.split()
    if len(words) == 1 and (words[0].isdigit() or words[0].lower() in rulebook.numbers()):
        # A count said alone ("hmm four actually"): the first count in ``text`` takes it.
        found = _counted_words().search(text)
        if found is None:
            return text
        return text[: found.start()] + words[0] + text[found.start(1) - 1 :]
    if len(words) < 2:
        return text
    counted = set(normalise_terms(words[-1]))
    for found in _counted_words().finditer(text):
        if counted and set(normalise_terms(found.group(1))) == counted:
            return text[: found.start()] + value + text[found.end() :]
    return text


@functools.cache
def _counted_words() -> re.Pattern[str]:
    """A number (digits or a number word of any shipped language) and the word it counts."""
    words = "|".join(re.escape(w) for w in sorted(rulebook.numbers(), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:\d+|{words})\s+(\w[\w'-]*)", re.I)


# A number, with its ordinal ending ("13th" replaces "3rd" whole).
_NUMBER = re.compile(r"\d[\d.,:]*(?:(?:st|nd|rd|th)\b)?")


# Words a dated correction may hold besides its dates: "at", "on the", "el", "am", "во".
_SHORT = 3


def _swap_classes(text: str, new: str) -> str | None:
    """``text`` with each dated word of ``new`` (weekday, month, number) put in place of the last
    word of the same class; None when ``new`` is not made of such words (and a few short ones)
    or ``text`` holds none of them."""
    for lang in rulebook.languages():
        tokens = class_tokens(new, lang)
        numbers = list(_NUMBER.finditer(new))
        if not tokens and not numbers:
            continue
        rest = new
        for _, match in tokens:
            rest = rest.replace(match.group(0), " ")
        rest = _NUMBER.sub(" ", rest)
        if any(len(word) > _SHORT for word in rest.split()) and not CJK.search(new):
            continue
        result, swapped = text, False
        for name, match in tokens:
            found = list(class_pattern(lang.value_classes[name]).finditer(result))
            if found:
                last = found[-1]
                result = result[: last.start()] + match.group(0) + result[last.end() :]
                swapped = True
        # A number replaces one of about its length: "28" an age of 29, never a phone number.
        width = max((len(n.group(0)) for n in numbers), default=0)
        found = [n for n in _NUMBER.finditer(result) if abs(len(n.group(0)) - width) <= 1]
        found = found[-len(numbers) :] if numbers else []
        for number, there in reversed(list(zip(numbers[-len(found) :], found, strict=False))):
            result = result[: there.start()] + number.group(0) + result[there.end() :]
            swapped = True
        if swapped:
            return result
    return None


def clean_value(value: str, lang: rulebook.Language | None = None) -> str:
    """A value without trailing fillers ("now", "last month"), punctuation or first person."""
    lang = lang or rulebook.load("en")
    value = strip_value(value)
    value = re.sub(r"[\U0001F000-\U0001FFFF\u2600-\u27BF]", "", value).strip()
    value = trim(value, lang)
    # First person becomes third person only between e-mails, URLs, @handles and numbers:
    # "sam.r@proton.me" must not become "sam.r@proton.them".
    pieces = []
    at = 0
    for kept in VERBATIM.finditer(value):
        pieces.append(_third_person(value[at : kept.start()], lang))
        pieces.append(kept.group(0))
        at = kept.end()
    pieces.append(_third_person(value[at:], lang))
    return "".join(pieces)


# Spans of a value that are never rewritten: e-mails, URLs, @handles, phone-like numbers.
VERBATIM = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:https?://|www\.)\S+|[\w-]+(?:\.[\w-]+)+(?:/\S*)?"
    r"|(?<![\w@])@\w+|\+?\d[\d ().-]*\d"
)


def _third_person(text: str, lang: rulebook.Language) -> str:
    rewrite = lang.pattern("my")
    if rewrite is not None:
        text = rewrite.sub(lang.third_person.get("my", "their"), text)
    rewrite = lang.pattern("me")
    if rewrite is not None:
        text = rewrite.sub(lang.third_person.get("me", "them"), text)
    return text


def strip_value(value: str) -> str:
    """``value`` without surrounding spaces, quotes and punctuation."""
    return value.strip(" \t,.;:!'\"\u201c\u201d\u3002\uff0c\uff01")


def trim(text: str, lang: rulebook.Language) -> str:
    """``text`` without the language's trailing fillers ("now", "last month", "了")."""
    trailing = lang.pattern("trailing")
    previous = None
    while previous != text and trailing is not None:
        previous = text
        text = trailing.sub("", text).strip(" ,.;:!\u3002\uff0c\uff01")
    return text


def tidy(text: str) -> str:
    """One space between words, no trailing full stop, a capital first letter."""
    text = " ".join(text.split()).strip(" .")
    return text[:1].upper() + text[1:]


CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
