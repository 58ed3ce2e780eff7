"""The offline rule engine: user messages cut into sentences and clauses, read by each
language's rules into ``Statement``s about the user (pure functions, no storage).

The rules are data, one file per language (``longterm/rules/<language>.toml``, loaded by
``rulebook``); this engine knows no language. A statement's value is cleaned and corrected in
``values``, an LLM's candidates are normalised in ``normalise``, ``slots.infer_slot`` names the
attribute a statement sets and ``gate.quality_problem`` rejects what must never be stored; the
names used elsewhere stay importable from here. ``services.learning`` applies the results.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ttmemory.conf import app_settings
from ttmemory.longterm import rulebook, slots
from ttmemory.longterm.gate import MAX_STATEMENT_CHARS, quality_problem
from ttmemory.longterm.normalise import (
    DEFAULT_SUBJECT,
    canonical,
    content_terms,
    count_changed,
    normalise_statement,
    reframed,
    similarity,
    split_statement,
)
from ttmemory.longterm.slots import infer_slot
from ttmemory.longterm.values import (
    CJK,
    article,
    class_pattern,
    class_tokens,
    clean_value,
    correct_value,
    dated_only,
    is_dated,
    is_value_class,
    recount,
    replace_named,
    shaped_slot,
    strip_value,
    swap_value,
    tidy,
    trim,
)
from ttmemory.text import normalise_terms

__all__ = [
    "CHANGES",
    "DEFAULT_SUBJECT",
    "DENY_ALL",
    "MAX_STATEMENT_CHARS",
    "Statement",
    "canonical",
    "clause_statement",
    "clause_statements",
    "clean_value",
    "content_terms",
    "correct_value",
    "count_changed",
    "dated_only",
    "infer_slot",
    "is_dated",
    "normalise_statement",
    "quality_problem",
    "recount",
    "reframed",
    "replace_named",
    "rule_statements",
    "similarity",
    "split_statement",
    "swap_value",
    "user_clauses",
]

# What a statement does to the facts stored before it (see rules/en.toml's header).
CHANGES = ("add", "replace", "retract", "previous", "correct", "deny", "also")


@dataclass(frozen=True, slots=True)
class Statement:
    """A statement found in one message: text, kind, slot, message index, and how it changes
    what is stored (``change``; ``value`` is its value, ``match`` the facts a retraction ends)."""

    text: str
    kind: str = "fact"
    slot: str = ""
    message_index: int | None = None
    change: str = "add"
    value: str = ""
    # A retraction's pattern of the facts it ends; a correction's old value ("not monday").
    match: str = ""
    language: str = ""
    # Kept in the statement's own words because no rule read it (``[plain]``).
    plain: bool = False


def rule_statements(
    messages: list[dict[str, object]],
    *,
    subject: str = DEFAULT_SUBJECT,
    languages: Sequence[str] | None = None,
    context: Sequence[str] = (),
) -> list[Statement]:
    """Explicit statements in user messages, one per clause, about ``subject`` (the user).

    ``languages``: the rule files applied (default: every shipped one; each language's
    patterns only match its own text). A message is cut into sentences and each sentence into
    clauses where a new first-person clause starts ("... peanuts and I prefer ..." is two).
    Questions, hypotheticals ("if I were ..."), jokes marked as such, quoted and reported
    speech ("my sister says ...") give nothing. A sentence that only corrects a value ("sorry,
    I meant Tuesday") changes the statement before it, or becomes a ``correct`` statement.
    A sentence starting with a pronoun ("She moved to York last year") is read about the close
    person it refers to, the last one named ("My sister Anna lives in Leeds") in an earlier
    sentence, message or ``context`` (the user's earlier messages, read for that only, never
    learned from); with none, or two it could be, it says nothing about the user.
    """
    codes = tuple(languages) if languages is not None else rulebook.available()
    rulebook.languages(codes)  # ValueError for an unknown language, before any work
    people = [
        person
        for number, text in enumerate(context, start=-len(context))
        for person in _people(_QUOTED.sub(" ", text), number, codes)
    ]
    question = rulebook.joined(codes, "question")
    joke = rulebook.joined(codes, "joke")
    correction = rulebook.joined(codes, "correction")
    reversal = rulebook.joined(codes, "reversal")
    corrected = rulebook.joined(codes, "corrected")
    additive = rulebook.joined(codes, "additive")
    also = rulebook.joined(codes, "also")
    swap = rulebook.joined(codes, "swap")
    found: list[Statement] = []
    for index, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            continue
        taken_back = _still_taken_back(content, messages[index - 1] if index else None, codes)
        if taken_back:
            found.extend(
                replace(s, change="retract", message_index=index)
                for s in clause_statements(taken_back, subject=subject, languages=codes)
            )
            continue
        before: list[Statement] = []
        start = len(found)
        for sentence in _marker_joined(_sentences(content, codes), codes):
            sentence = _resolved(sentence, people, codes)
            people.extend(_people(sentence, index, codes))
            if joke is not None and joke.search(sentence):
                # "I'm a billionaire, lol jk" says nothing; "Just kidding!" on its own takes
                # back the sentence before it.
                alone = _strip_prefix(joke.sub(" ", sentence), codes).strip(" ,.!?")
                if len(alone.split()) < 3 and not CJK.search(alone):
                    found = [s for s in found if not any(s is b for b in before)]
                before = []
                continue
            if question is not None and question.search(sentence):
                continue
            everything: list[Statement] = []
            for clause in _clauses(sentence, codes):
                everything.extend(_carried(clause, subject, codes))
            # A plain statement beside a correction or an addition is its aside ("same for
            # Dutch, I grew up near the border"): only what a rule read decides what the
            # sentence is.
            said = [s for s in everything if not s.plain]
            named = swap.match(sentence.strip()) if swap is not None else None
            lead = _correcting(sentence, codes)
            if (
                named is not None
                and lead is not None
                and any(
                    named.group(group) and named.start(group) < lead[0]
                    for group in named.groupdict()
                    if group.startswith("new")
                )
            ):
                named = None  # "Moment, stimmt nicht - am Freitag": "stimmt" is no new value
            new, old = _swap_values(named.groupdict() if named is not None else {})
            if not said:
                paired = _contrasted(sentence, codes)
                if old:
                    if paired[1].casefold() == old.casefold() and _said(paired[0], new):
                        new = paired[0]  # "sorry, ich bin 29, nicht 27": not "ich bin 29"
                elif paired[1] and _said_before(
                    paired[1], sentence, context, messages[:index], codes
                ):
                    # "ach, sie ist schon 7, nicht 6", "oops 4, not 3": a pair said anywhere in a
                    # sentence no rule read, a correction of what the user just said.
                    new, old = paired
            # What the rules read of it is a denial or says the new value again ("sorry, I'm in
            # Nanjing, not in Suzhou", in Chinese); else the sentence says more than a correction.
            if (
                old
                and all(s.change == "deny" or new in s.text for s in said)
                and _swapped(found, new, old, index)
            ):
                # "no wait, it's tuesday not monday", "Miso, not Mochi": the old value is named.
                continue
            fixed = correction.match(sentence.strip()) if correction is not None else None
            fixed_value = next(
                (v for k, v in (fixed.groupdict() if fixed else {}).items() if k[:1] == "v" and v),
                "",
            )
            restated = None if fixed_value else _restated(sentence, subject, people, codes)
            if restated is not None and restated[0]:
                # "Sorry, Tippfehler: Yannick", "ugh no, the 15th, I always mix that up": the
                # value after the words that announce a correction, its aside dropped.
                fixed_value, said = restated[0], []
            elif restated is not None and restated[1]:
                # "更正一下: 她六岁了", "uy, me equivoqué: vivo en Cádiz": what follows the
                # words is the statement said again; it replaces the one it contradicts.
                everything = restated[1]
                said = [s for s in everything if not s.plain]
            if not said and not fixed_value:
                # A count only when the sentence states nothing else a rule read ("wait, two
                # cats, not three", "hmm four actually, I keep forgetting my half-brother"; not
                # "pardon, j'ai trois chiens", which says it again in full).
                fixed_value = _loose_correction(sentence, codes, counts=not said)
            added = also.match(sentence.strip()) if also is not None and not said else None
            added_value = strip_value(
                next((v for k, v in (added.groupdict() if added else {}).items() if v), "")
            )
            if added_value and not fixed_value:
                # "oh and to shellfish as well": the statement before it, with this value too.
                earlier = next(
                    (s for s in reversed(found) if s.change in {"add", "replace"} and s.value),
                    None,
                )
                if earlier is not None:
                    text = correct_value(earlier.text, added_value, old=earlier.value)
                    if text != earlier.text:
                        found.append(replace(earlier, text=text, value=added_value, change="add"))
                else:
                    found.append(
                        Statement(
                            added_value, change="also", value=added_value, message_index=index
                        )
                    )
                continue
            if not said and fixed_value:
                value = strip_value(fixed_value)
                earlier = next(
                    (s for s in reversed(found) if s.change in {"add", "replace"} and s.value),
                    None,
                )
                if earlier is not None and value:
                    text = correct_value(earlier.text, value, old=earlier.value)
                    found[found.index(earlier)] = replace(earlier, text=text, value=value)
                elif value:
                    found.append(
                        Statement(value, change="correct", value=value, message_index=index)
                    )
                continue
            said = everything
            changes = restated is not None or any(
                p is not None and p.search(sentence) for p in (reversal, corrected)
            )
            if changes and not (
                additive is not None and additive.search(sentence)
            ):  # "these days I take the bike", "sorry, I have three kids"; not "I also volunteer"
                said = [
                    replace(s, change="replace")
                    if s.change == "add" and not slots.is_single_valued(s.slot)
                    else s
                    for s in said
                ]
            said = [replace(s, message_index=index) for s in said]
            found.extend(said)
            before = said
        if any(not s.plain and s.change not in {"retract", "deny"} for s in found[start:]):
            # A message the rules read a fact from is understood: what they left is its detail
            # ("I'm a nurse; I work night shifts"). Plain statements fill messages they missed
            # (a retraction is no fact: "I gave up badminton, now I do yoga").
            found[start:] = [s for s in found[start:] if not s.plain]
    return found


def _swap_values(groups: dict[str, str | None]) -> tuple[str, str]:
    """The new and the old value a correction names (``[text] swap``: groups ``new`` and
    ``old``), or ("", "") when it names no two different values."""
    new = strip_value(next((v for k, v in groups.items() if k.startswith("new") and v), ""))
    old = strip_value(next((v for k, v in groups.items() if k.startswith("old") and v), ""))
    if not new or not old or new.casefold() == old.casefold():
        return "", ""
    return new, old


_NUMBER = re.compile(r"\d+(?:[ .:/-]?\d+)*")
_NAME = re.compile(r"[^\W\d_][\w'-]*")


def _contrasted(sentence: str, codes: tuple[str, ...]) -> tuple[str, str]:
    """The new and the old value of "NEW, not OLD" said anywhere in ``sentence`` ("sie ist
    schon 7, nicht 6, sie hatte Geburtstag", "c'est le 06 12 34 56 87, pas 78"): ``[text]
    contrast_value`` is what stands between them, the old value comes right after it and the
    new one is the value of the same shape that ends the words before it (a number, a word of
    the same value class such as a weekday, or a capitalised name). ("", "") when the sentence
    holds no such pair."""
    for lang in rulebook.languages(codes):
        between = lang.pattern("contrast_value")
        if between is None:
            continue
        for found in between.finditer(sentence):
            new, old = _value_pair(sentence[: found.start()], sentence[found.end() :], lang)
            if new and old and new.casefold() != old.casefold():
                return new, old
    return "", ""


def _value_pair(head: str, tail: str, lang: rulebook.Language) -> tuple[str, str]:
    """(new, old): ``tail``'s leading value and the value of its shape that ends ``head`` (the
    two side by side: "2 sugars in my coffee, not 3" pairs nothing)."""
    head = head.rstrip(" ,.;:!\u3001\uff0c")

    def ending(matches: Sequence[re.Match[str]]) -> str:
        last = max(matches, key=lambda m: m.end(), default=None)
        return last.group(0) if last is not None and last.end() == len(head) else ""

    number = _NUMBER.match(tail)
    if number is not None:
        return ending(list(_NUMBER.finditer(head))), number.group(0)
    for name, match in class_tokens(tail, lang):
        if match.start() == 0:
            return ending([m for n, m in class_tokens(head, lang) if n == name]), match.group(0)
    word = _NAME.match(tail)
    if word is not None and word.group(0)[:1].isupper():
        names = [m for m in _NAME.finditer(head) if m.group(0)[:1].isupper() and m.start() > 0]
        return ending(names), word.group(0)
    return "", ""


def _said_before(
    value: str,
    sentence: str,
    context: Sequence[str],
    earlier: Sequence[dict[str, object]],
    codes: tuple[str, ...],
) -> bool:
    """Whether the user said ``value`` just before ``sentence`` (``context``, their messages
    already learned, or an ``earlier`` user message of the batch) about the same party
    (``[text] others``): never the user's own "Leeds" for "my brother lives in York, not
    Leeds"."""
    others = rulebook.joined(codes, "others")

    def about_others(text: str) -> bool:
        return others is not None and others.search(text) is not None

    party = about_others(sentence)
    texts = [*context, *(m.get("content") for m in earlier if m.get("role") == "user")]
    return any(
        isinstance(text, str) and _said(value, text) and about_others(text) == party
        for text in texts
    )


def _said(value: str, text: str) -> bool:
    """Whether ``text`` holds ``value`` as a whole word, any case (``values.class_pattern``)."""
    return class_pattern(re.escape(value)).search(text) is not None


def _swapped(found: list[Statement], new: str, old: str, index: int) -> bool:
    """A correction naming the value it replaces applied: the statement before it that holds
    the old value rewritten, else a ``correct`` statement whose ``match`` is the old value
    (``services.learning`` finds the fact holding it)."""
    for number in range(len(found) - 1, -1, -1):
        earlier = found[number]
        if earlier.change in {"add", "replace"}:
            text = replace_named(earlier.text, old, new)
            if text != earlier.text:
                found[number] = replace(earlier, text=text, value=new)
                return True
    found.append(Statement(new, change="correct", value=new, match=old, message_index=index))
    return True


@dataclass(frozen=True, slots=True)
class _Person:
    """A close person named in a user message: the mention as said ("My sister Anna"), its
    language, gender ("f", "m" or "" for either) and message (context before 0)."""

    language: str
    mention: str
    gender: str
    message: int


def _people(text: str, message: int, codes: tuple[str, ...]) -> list[_Person]:
    """The close persons ``text`` names, in order (each language's ``[coreference] person``)."""
    found: list[_Person] = []
    for lang in rulebook.languages(codes):
        known = lang.coreference
        if known is None:
            continue
        for match in known.person.finditer(text):
            relation = (match.group("r") or "").lower()
            gender = "f" if relation in known.female else "m" if relation in known.male else ""
            found.append(_Person(lang.code, " ".join(match.group("p").split()), gender, message))
    return found


def _resolved(sentence: str, people: list[_Person], codes: tuple[str, ...]) -> str:
    """``sentence`` with the pronoun starting it ("She moved to York") replaced by the close
    person it refers to: the last one named in its language whose gender fits. Unchanged when
    it starts with no pronoun, names a person itself, or when the last message naming one that
    fits names two (the engine then reads nothing about the user from it)."""
    stripped = _strip_prefix(sentence, codes)
    for lang in rulebook.languages(codes):
        known = lang.coreference
        if known is None:
            continue
        for pattern, gender, replacement in known.pronouns:
            found = pattern.match(stripped)
            if found is None:
                continue
            rest = stripped[found.end() :]
            if known.person.search(rest):
                return sentence
            fits = [
                p
                for p in people
                if p.language == lang.code and (not gender or not p.gender or p.gender == gender)
            ]
            if not fits:
                return sentence
            last = {p.mention.casefold() for p in fits if p.message == fits[-1].message}
            if len(last) > 1:
                return sentence
            # Other groups of the pronoun's pattern (a time said before it, a verb before it in
            # German) are put back where the replacement names them.
            kept = {k: v.strip() if v else "" for k, v in found.groupdict().items()}
            said = replacement.format(**kept, p=fits[-1].mention)
            return re.sub(" {2,}", " ", said).lstrip() + rest
    return sentence


def _carried(clause: str, subject: str, codes: tuple[str, ...]) -> list[Statement]:
    """The statements of a clause, cut further where its language drops the subject of the
    clauses after the first; each such piece that says nothing alone is read with the subject
    put back (the language's ``[text] carry``). The pieces win only when they say more than
    the whole clause (a cue may span the cut: "携帯の番号が変わりました、090-...です")."""
    whole = clause_statements(clause, subject=subject, languages=codes)
    lang = rulebook.detect(clause, codes)
    splitter = lang.pattern("carry_split")
    if not lang.carry or splitter is None:
        return whole
    found: list[Statement] = []
    first = lang.pattern("first_person")
    others = lang.pattern("others")
    # A clause about someone else ("my sister is vegan and allergic to nuts") drops *their*
    # subject: nothing after it is read as the user's.
    theirs = False
    for number, piece in enumerate(p.strip(" ,") for p in splitter.split(clause)):
        if not piece:
            continue
        said = clause_statements(piece, subject=subject, languages=codes)
        if others is not None and others.search(piece):
            theirs = True
        elif first is not None and first.search(piece):
            theirs = False
        if not said and number and not theirs and not (first is not None and first.search(piece)):
            for carried in lang.carry:
                # Put back, the subject reads only as a rule reads it, never as a plain
                # statement ("I have two kids, a boy and a girl" is not "The user is a girl").
                said = clause_statements(
                    carried + piece, subject=subject, languages=codes, plain=False
                )
                opened = _strip_prefix(piece, codes)
                if not said and opened != piece:
                    # After the words a clause may open with ("теперь фрилансер": "я фрилансер").
                    said = clause_statements(
                        carried + opened, subject=subject, languages=codes, plain=False
                    )
                if said:
                    break
        found.extend(said)
    if found and len(found) == len(whole) and all(s.change == "deny" for s in whole):
        # "started eating fish again, so not vegetarian anymore": the piece says what stopped;
        # the whole clause denies all of its words, what started with what stopped.
        return found
    return found if len(found) > len(whole) else whole


#: Punctuation a sentence that announces a correction may end with.
_CLOSING = frozenset(".!?,:;\u3002\uff01\uff1f\uff0c\u3001\uff1a\uff1b")

#: A sentence this short that only says a correction is coming ("Sorry, my mistake.").
_MARKER_ONLY = 30


def _marker_joined(sentences: list[str], codes: tuple[str, ...]) -> list[str]:
    """``sentences`` with a sentence that only announces a correction ("すみません、間違えました。",
    "Sorry, my mistake.": the language's ``[text] corrected`` word and nothing the rules read)
    joined to the sentence after it, which says the value ("京都です")."""
    joined: list[str] = []
    pending = ""
    for sentence in sentences:
        if pending:
            # Where a dash cut them ("Moment, stimmt nicht - am Freitag"), a comma keeps the
            # announcement apart from the value (else "stimmt" reads as the new value).
            mark = "" if pending[-1:] in _CLOSING else ","
            sentence = f"{pending}{mark} {sentence}"
            pending = ""
        if len(sentence) <= _MARKER_ONLY and _only_marker(sentence, codes):
            pending = sentence
            continue
        joined.append(sentence)
    if pending:
        joined.append(pending)
    return joined


def _only_marker(sentence: str, codes: tuple[str, ...]) -> bool:
    lang = rulebook.detect(sentence, codes)
    marker = lang.pattern("corrected")
    if marker is None or not marker.search(sentence):
        return False
    if class_tokens(sentence, lang):
        return False  # "sorry, Friday": a value of its own
    fixed = lang.pattern("correction")
    found = fixed.match(sentence.strip()) if fixed is not None else None
    if found is not None and any(v for k, v in found.groupdict().items() if k[:1] == "v"):
        return False  # "Sorry, Cork, not Dublin.": it says the value
    return not any(clause_statements(c, languages=codes) for c in _clauses(sentence, codes))


# Where the words after a correction's announcement stop being its value: "the 15th, I always
# mix that up", "am Freitag - sorry".
_PIECE = re.compile(r"\s*[,;:\u2013\u2014\uff0c\uff1b\uff1a\u3001]\s*|\s+-\s+")
#: The most words a value said alone after a correction's announcement has ("New York City").
_VALUE_WORDS = 3
#: The most characters of a Chinese or Japanese one ("黑龙江哈尔滨").
_VALUE_CHARS = 8


def _correcting(sentence: str, codes: tuple[str, ...]) -> tuple[int, rulebook.Language] | None:
    """Where the words announcing a correction that ``sentence`` opens with end (``[text]
    correcting``), in the language whose words announce the most of it ("Sorry, Tippfehler:"
    is German); None when it opens with none."""
    stripped = sentence.strip()
    leads = [
        (found.end(), lang)
        for lang in rulebook.languages(codes)
        for lead in [lang.pattern("correcting")]
        for found in [lead.match(stripped) if lead is not None else None]
        if found is not None
    ]
    return max(leads, key=lambda lead: lead[0]) if leads else None


def _restated(
    sentence: str, subject: str, people: list[_Person], codes: tuple[str, ...]
) -> tuple[str, list[Statement]] | None:
    """What a sentence opening with the words that announce a correction (the language's
    ``[text] correcting``: "ugh no,", "Moment, stimmt nicht -", "uy, me equivoqué,", "更正一下")
    says after them: a value said alone (its ``[text] correcting_value`` words dropped: "am
    Freitag", "se llama Bruno") and "", or "" and the statements of the clause said again
    ("更正一下: 她六岁了" read about the daughter); None when it opens with no such words."""
    stripped = sentence.strip()
    lead = _correcting(stripped, codes)
    if lead is not None:
        end, lang = lead
        rest = stripped[end:].strip(" .!\u3002\uff01")
        if not rest:
            return None
        piece = _PIECE.split(rest, maxsplit=1)[0].strip(" .!\u3002\uff01")
        drop = lang.pattern("correcting_value")
        value = drop.sub("", piece, count=1).strip() if drop is not None else piece
        clause_like = [
            pattern
            for name in ("first_person", "second_person", "others", "negation", "question")
            for pattern in [lang.pattern(name)]
            if pattern is not None
        ]
        short = (
            len(value) <= _VALUE_CHARS if CJK.search(value) else len(value.split()) <= _VALUE_WORDS
        )
        # Said alone, a value is a name, a number or a date ("Yannick", "the 15th", "am
        # Freitag"), not "no, thanks" (any Chinese or Japanese word after 更正 or 訂正).
        valued = CJK.search(value) or any(c.isupper() or c.isdigit() for c in value)
        marker = lang.pattern("corrected")
        if (
            value
            and short
            and (valued or class_tokens(value, lang))
            and not (marker is not None and marker.fullmatch(value))
            and not any(p.search(value) for p in clause_like)
            and (content_terms(value, subject=subject) or value.isdigit())
            and not clause_statements(value, subject=subject, languages=codes, plain=False)
        ):
            return value, []
        rest = _resolved(rest, people, codes)
        return "", [s for clause in _clauses(rest, codes) for s in _carried(clause, subject, codes)]
    return None


def _loose_correction(sentence: str, codes: tuple[str, ...], *, counts: bool = True) -> str:
    """The dates or the count a sentence that only corrects puts in place, said in any words
    ("actually scratch that, he moved it to Wednesday", "wait, two cats, not three"): the
    language's ``[text] corrected`` marker and one or more weekdays, months or days, else its
    first number and the word it counts; "" otherwise."""
    for lang in rulebook.languages(codes):
        marker = lang.pattern("corrected")
        if marker is None or not marker.search(sentence):
            continue
        tokens = class_tokens(sentence, lang)
        if tokens:
            # With the day said beside a month ("march 13th I mean", "am 13. März").
            dated = [
                found.group(0) if found is not None else match.group(0)
                for _, match in tokens
                for found in [
                    re.search(
                        rf"(?:\b\d{{1,2}}(?:st|nd|rd|th|\.)?\s+)?{re.escape(match.group(0))}"
                        rf"(?:\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\b)?",
                        sentence,
                        re.I,
                    )
                ]
            ]
            return " ".join(dict.fromkeys(dated))
        if counts and lang.numbers and not CJK.search(sentence):
            words = "|".join(
                re.escape(word) for word in sorted(lang.numbers, key=len, reverse=True)
            )
            counted = re.search(rf"(?<!\w)(?:\d+|{words})\s+\w[\w'-]*", sentence, re.I)
            if counted is not None:
                # Not a word the language drops after a value ("oh 5 actually": the count).
                trailing = lang.pattern("trailing")
                found = counted.group(0)
                return trailing.sub("", found) if trailing is not None else found
    return ""


def _still_taken_back(
    content: str, previous: dict[str, object] | None, codes: tuple[str, ...]
) -> str:
    """The clause a bare "not anymore" takes back from the assistant's "Do you still ...?"."""
    asked = previous.get("content") if previous and previous.get("role") == "assistant" else None
    if not isinstance(asked, str):
        return ""
    for lang in rulebook.languages(codes):
        if lang.still is None:
            continue
        reply, question, clauses = lang.still
        if not reply.match(content.strip().replace("\u2019", "'")):
            continue
        for found in question.finditer(asked.replace("\u2019", "'")):
            for group, value in found.groupdict().items():
                if value and group in clauses:
                    return clauses[group].format(x=value.strip())
    return ""


def user_clauses(content: str, *, languages: Sequence[str] | None = None) -> list[str]:
    """The clauses of a user message that may state a fact (questions and quotes left out)."""
    codes = tuple(languages) if languages is not None else rulebook.available()
    question = rulebook.joined(codes, "question")
    return [
        clause
        for sentence in _sentences(content, codes)
        if question is None or not question.search(sentence)
        for clause in _clauses(sentence, codes)
    ]


# Quoted speech in any of the shipped languages' quotation marks: "...", “...”, «...»,
# 「...」, „...“.
_QUOTED = re.compile(
    '"[^"]*"|\u201c[^\u201d]*\u201d|\u00ab[^\u00bb]*\u00bb|\u300c[^\u300d]*\u300d'
    "|\u201e[^\u201c\u201d]*[\u201c\u201d]"
)


def _sentences(content: str, codes: tuple[str, ...]) -> list[str]:
    content = _QUOTED.sub(" ", content[:4000].replace("\u2019", "'"))
    splitter = rulebook.joined(codes, "sentence")
    parts = splitter.split(content) if splitter is not None else [content]
    return [part.strip() for part in parts if part and part.strip()]


def _clauses(sentence: str, codes: tuple[str, ...]) -> list[str]:
    stripped = _strip_prefix(sentence, codes)
    opener = rulebook.joined(codes, "skip_start")
    hearsay = rulebook.joined(codes, "hearsay")
    if (opener is not None and opener.match(stripped)) or (
        hearsay is not None and hearsay.search(stripped)
    ):
        return []
    splitter = rulebook.joined(codes, "clause")
    parts = splitter.split(stripped) if splitter is not None else [stripped]
    clauses = []
    for part in parts:
        part = _strip_prefix((part or "").strip(" ,.!\u3002\uff01"), codes)
        if part:
            clauses.append(part)
    return clauses


def clause_statements(
    clause: str,
    *,
    subject: str = DEFAULT_SUBJECT,
    languages: Sequence[str] | None = None,
    plain: bool = True,
) -> list[Statement]:
    """The statements one clause makes about the user (the first language whose rules match;
    with ``plain`` and ``LEARN_PLAIN_STATEMENTS``, a first-person statement no rule read, in
    its own words)."""
    codes = tuple(languages) if languages is not None else rulebook.available()
    langs = rulebook.languages(codes)
    written_in = rulebook.detect(clause, codes)
    # The rules of every language first, then the looser cues, the clause's own language first
    # (a Russian clause holding an e-mail in Latin letters is Russian).
    own_first = sorted(langs, key=lambda lang: lang is not written_in)
    for cues, order in ((False, langs), (True, own_first)):
        for lang in order:
            script = lang.pattern("script") or lang.pattern("detect")
            if script is not None and not script.search(clause):
                continue  # not this language's letters or words: none of its rules can match
            found = _clause_in(lang, clause, subject, cues=cues)
            if found is not None:
                # A clause a rule refused ("I have a question") is no plain statement either.
                return found or _fallback(written_in, clause, subject, plain=())
    plain = plain and app_settings.LEARN_PLAIN_STATEMENTS
    return _fallback(written_in, clause, subject, plain=own_first if plain else ())


def _fallback(
    lang: rulebook.Language,
    clause: str,
    subject: str,
    *,
    plain: Sequence[rulebook.Language] = (),
) -> list[Statement]:
    """What a clause no rule or cue stored still says: a dated plan (``[event]``), a negated
    first-person statement, which ends the current fact it contradicts ("turns out I'm not
    allergic to penicillin"; a ``deny`` that must name every term of that fact), or, read by
    the ``plain`` languages (``lang`` first), a plain statement in its own words."""
    hypothetical = lang.pattern("hypothetical")
    if hypothetical is not None and hypothetical.search(clause):
        return []
    ended = lang.plain.ended if lang.plain is not None else None
    given = ended.match(clause) if ended is not None else None
    if given is not None:
        # "quit smoking in March, not touched one since": what was given up, whatever the
        # aside after it denies.
        return _given_up(lang, next((v for v in given.groupdict().values() if v), ""), subject)
    negation = lang.pattern("negation")
    negated = negation is not None and negation.search(clause) is not None
    others = lang.pattern("others")
    if negated and negation is not None:
        first = lang.pattern("first_person")
        if first is None or not first.search(clause) or (others and others.search(clause)):
            return []
        denied = trim(" ".join(negation.sub(" ", clause).split()).strip(" ,."), lang)
        if len(content_terms(denied, subject=subject)) >= 2:
            return [Statement(denied, change="deny", value=DENY_ALL, language=lang.code)]
        return []
    return _event_statements(lang, clause, subject) or next(
        (
            found
            for other in plain
            if other is lang or lang.code == "en"
            for found in [_plain_statements(other, clause, subject, own=other is lang)]
            if found
        ),
        [],
    )


def _plain_statements(
    lang: rulebook.Language, clause: str, subject: str, *, own: bool = True
) -> list[Statement]:
    """A first-person statement no rule read, stored in its own words in third person ("I work
    night shifts at the hospital" -> "The user works night shifts at the hospital", "我戴眼镜"
    -> "用户戴眼镜"): the first of the language's ``[[plain.form]]`` that matches.

    Never chit-chat, a passing state or a change (``[plain] refuse``: "I'm fine", "I think so",
    "I moved from Paris to Berlin"), a request, a hypothetical, a transient thing ("I have a
    question") or a value saying nothing ("I have it"); someone of the user's only through a
    form marked ``others`` ("my daughter plays the violin"), never as the user's. ``own``:
    ``clause`` was detected in ``lang`` (a form marked ``own`` needs it). The slot is inferred
    from the statement, so a later value of it supersedes it.
    """
    plain = lang.plain
    if plain is None:
        return []
    gone = plain.ended.match(clause) if plain.ended is not None else None
    if gone is not None:
        return _given_up(lang, next((v for v in gone.groupdict().values() if v), ""), subject)
    for refused in (plain.refuse, lang.pattern("request"), lang.pattern("hypothetical")):
        if refused is not None and refused.search(clause):
            return []
    tail = lang.pattern("tail")
    text = trim(tail.sub("", clause) if tail is not None else clause, lang)
    if plain.refuse is not None and plain.refuse.search(text):
        return []
    for form in plain.forms:
        match = form.pattern.match(text)
        if match is None:
            continue
        groups = match.groupdict()
        word = (groups.get("w") or "").strip()
        low = word.lower()
        if (form.own and not own) or (form.known and low not in plain.verbs):
            continue
        if form.verb is not None and not form.verb.fullmatch(word):
            return []
        value = clean_value(groups.get("v") or "", lang)
        first = value.split()[0].lower() if value.split() else ""
        if (
            not value
            or value.lower() in lang.pronoun_values
            or first in lang.fragment_starts
            or not content_terms(value, subject=subject)
        ):
            return []
        if form.transient and any(
            w in lang.transient_heads for w in re.findall(r"[\w'-]+", value.lower())
        ):
            return []
        fields = {
            "S": subject if subject != DEFAULT_SUBJECT else lang.subject,
            **{
                key: subject if subject != DEFAULT_SUBJECT else form_
                for key, form_ in lang.subject_forms.items()
            },
        }
        third = plain.verbs.get(low) or lang.third_person.get(low)
        if third is None and "{w3}" in form.template:
            # A verb form the language's endings do not know is no statement this form reads.
            third = next(
                (
                    ending.sub(replacement, word, count=1)
                    for ending, replacement in plain.endings
                    if ending.search(word)
                ),
                None,
            )
            if third is None:
                return []
        # Another part put in the template ("Jeden Tag" of "Jeden Tag fahre ich ...") loses
        # the capital the start of the sentence gave it.
        extra = {
            key: clean_value(part[:1].lower() + part[1:] if match.start(key) == 0 else part, lang)
            for key, part in groups.items()
            if key not in {"v", "w"} and part is not None
        }
        text = tidy(form.template.format(**fields, **extra, v=value, w=word, w3=third or word))
        if quality_problem(text, language=lang.code) is not None:
            return []
        slot = infer_slot(text, subject=fields["S"])
        if form.others and not slot.startswith(low):
            slot = ""  # "Дочь пользователя играет на скрипке" is not the user's hobby
        return [
            Statement(
                text,
                slot=slot,
                # What follows the verb: a reversal ("these days I commute by bike") replaces
                # the fact with the same verb ("commutes by bus", services.learning._replaced).
                value=value,
                language=lang.code,
                plain=True,
            )
        ]
    return []


def _given_up(lang: rulebook.Language, said: str, subject: str) -> list[Statement]:
    """What a clause saying something of the user's is gone ends ("I sold the Focus last
    month", "gave up badminton", "dejé de ser camarero"): the current facts about the user
    naming its last word (in another case ending too: "продал машину" ends "ездит на машине")."""
    value = clean_value(said, lang)
    words = value.split()
    if not words:
        return []
    last = words[-1] if not CJK.search(value) else value
    if last.lower() in lang.pronoun_values or not content_terms(last, subject=subject):
        return []
    stems = [] if CJK.search(last) else normalise_terms(last)
    stem = stems[0] if len(stems) == 1 else ""
    # What the word and its stem start with ("smoking", "smoke": "smok" also ends "smoker").
    shared = next(
        (i for i, (a, b) in enumerate(zip(stem, last.lower(), strict=False)) if a != b),
        min(len(stem), len(last)),
    )
    stem = stem[:shared]
    if len(stem) >= 3:
        # Its stem and any ending ("шахматами" ends "играет в шахматы").
        core = re.escape(stem) + r"\w{0,4}"
    elif len(last) >= 6 and not CJK.search(last):
        core = re.escape(last[:-2]) + r"\w{0,3}"
    else:
        core = re.escape(last)
    edge = "" if CJK.search(last) else r"\b"
    names = "|".join(re.escape(s) for s in dict.fromkeys([subject, *rulebook.subjects()]))
    return [
        Statement(
            value,
            change="retract",
            match=f"^(?:{names}).*{edge}{core}{edge}",
            value=value,
            language=lang.code,
        )
    ]


# The ``value`` of a ``deny`` read from a plain negation: it ends a fact only when it names all
# of the fact's terms (a "no longer" clause may miss one).
DENY_ALL = "*all*"


def _event_statements(lang: rulebook.Language, clause: str, subject: str) -> list[Statement]:
    """A dated plan in a clause ("the meeting with my landlord is on Monday", "周二我要去看牙医"):
    one statement whose slot is the plan's head word, so a new date supersedes it."""
    event = lang.event
    found = event.when.search(clause) if event is not None else None
    if event is None or found is None:
        return []
    request = lang.pattern("request")
    if request is not None and request.search(clause):  # "book me a flight on Friday"
        return []
    dated = lang.pattern("dated")
    if not class_tokens(clause, lang) and (dated is None or not dated.search(clause)):
        return []
    value = event.drop.sub("", clause) if event.drop is not None else clause
    value = clean_value(value, lang)
    fields = {
        "S": subject if subject != DEFAULT_SUBJECT else lang.subject,
        **{
            key: subject if subject != DEFAULT_SUBJECT else form
            for key, form in lang.subject_forms.items()
        },
    }
    text = tidy(event.template.format(**fields, v=value))
    if not value or quality_problem(text, language=lang.code) is not None:
        return []
    head = (found.groupdict().get("head") or found.group(0)).lower()
    return [Statement(text, slot=f"{head} appointment", value=value, language=lang.code)]


def clause_statement(
    clause: str, *, subject: str = DEFAULT_SUBJECT, languages: Sequence[str] | None = None
) -> Statement | None:
    """The first statement one clause makes about the user, or None."""
    found = clause_statements(clause, subject=subject, languages=languages)
    return found[0] if found else None


def _clause_in(
    lang: rulebook.Language, clause: str, subject: str, *, cues: bool = False
) -> list[Statement] | None:
    """What ``lang``'s rules (with ``cues``: its cues) read in ``clause``: statements, []
    (refused) or None (nothing read)."""
    raw = clause
    tail = lang.pattern("tail")
    if tail is not None:
        # Cut first: "I'm vegetarian, if that matters" states a fact; "if" is in the tail.
        clause = tail.sub("", clause)
    for pattern, replacement in lang.reorder:
        clause = pattern.sub(replacement, clause)
    hypothetical = lang.pattern("hypothetical")
    if hypothetical is not None and hypothetical.search(clause):
        return None
    clause = trim(clause, lang)
    for pattern, replacement in lang.reorder:
        clause = pattern.sub(replacement, clause)
    negation = lang.pattern("negation")
    contrast = lang.pattern("contrast")
    if contrast is not None:
        without = contrast.sub("", clause)
        if without != clause and (negation is None or not negation.search(without)):
            clause = without
    if cues:
        gone = lang.pattern("gone")
        if gone is not None and gone.search(raw):
            ended = lang.plain.ended if lang.plain is not None else None
            given = ended.match(clause) if ended is not None else None
            if given is not None:
                # "Mit dem Handball hab ich aufgehört": what was given up, named by its word.
                said = next((v for v in given.groupdict().values() if v), "")
                return _given_up(lang, said, subject) or None
            # "I don't really go to the gym anymore": no pattern read it, but it says something
            # stopped being true. A "deny" ends the current facts it names (services.learning).
            denied = gone.sub(" ", clause)
            denied = negation.sub(" ", denied) if negation is not None else denied
            pronoun = lang.pattern("first_person")
            if pronoun is not None and CJK.search(denied):
                denied = pronoun.sub(" ", denied)  # "我 喜欢打篮球": named as the fact writes it
            # The fact says the verb in the third person ("Кофе я больше не пью" ends "Пользователь
            # пьёт кофе"): the language's lexicon of verb forms names it so.
            denied = " ".join(lang.third_person.get(w.lower(), w) for w in denied.split())
            denied = denied.strip(" ,.")
            if content_terms(denied, subject=subject):
                return [Statement(denied, change="deny", language=lang.code)]
            return None
        if negation is not None and negation.search(clause):
            return None
        return _cue_statements(lang, clause, raw, subject)
    aside = lang.pattern("value_tail")
    shorter = aside.sub("", clause) if aside is not None else clause
    # A clause is read whole; else, without an aside after its value ("я вегетарианка, мясо не ем
    # уже два года"), by the rules of a single-valued slot only.
    attempts = [(clause, False)] + ([(shorter, True)] if shorter != clause else [])
    for (read, cut), rule in ((a, r) for a in attempts for r in lang.rules):
        match = rule.pattern.match(read)
        if match is None or (rule.when is not None and not rule.when.search(raw)):
            continue
        single = any(slots.is_single_valued(e.slot) for e in rule.emits)
        if cut and not single:
            continue
        groups = {key: value for key, value in match.groupdict().items() if value is not None}
        if any(e.slot == "name" for e in rule.emits) and (
            groups["v"].split()[0].lower() in lang.not_names
        ):
            continue
        if groups.get("np") and _transient(groups["np"], groups.get("v", ""), lang):
            return []
        # "I quit Lidl last week, taking some time off": the employer is "Lidl", and a negation
        # in the aside ("я вегетарианка, мясо не ем") does not negate the statement.
        judged = shorter if single else clause
        if not rule.negative and negation is not None and negation.search(judged):
            return []
        if single and aside is not None:
            groups = {k: aside.sub("", v) if k in {"v", "org"} else v for k, v in groups.items()}
        values = {key: clean_value(value, lang) for key, value in groups.items() if key != "w"}
        for key, value in values.items():
            if key != "np" and (not value or value.lower() in lang.pronoun_values):
                return []
            # A fragment, not a value: "it way more than accounting", "here", "that one".
            first = value.split()[0].lower() if value.split() else ""
            if key in {"v", "org"} and first in lang.fragment_starts:
                return []
        word = (groups.get("w") or "").lower()
        fields = {
            "S": subject if subject != DEFAULT_SUBJECT else lang.subject,
            **{
                key: subject if subject != DEFAULT_SUBJECT else form
                for key, form in lang.subject_forms.items()
            },
            "v": values.get("v", ""),
            "from": values.get("from", ""),
            "org": values.get("org", ""),
            "name": values.get("name", ""),
            "np": values.get("np", ""),
            "w": word,
            "w3": lang.third_person.get(word, word),
            "a": article(values.get("v", "")),
        }
        found = []
        for emit in rule.emits:
            text = tidy(emit.template.format(**fields))
            if emit.change != "retract" and quality_problem(text, language=lang.code) is not None:
                return []
            value = values.get("from" if emit.change == "previous" else "v", "")
            if "{org}" in emit.template:
                value = values.get("org", "")
            found.append(
                Statement(
                    text,
                    emit.kind,
                    slots.canonical(emit.slot)
                    or infer_slot(text, subject=fields["S"])
                    or shaped_slot(value),
                    change=emit.change,
                    value=value,
                    match=_render_match(emit.match, value, subject, word=word),
                    language=lang.code,
                )
            )
        return found
    return None


def _cue_statements(
    lang: rulebook.Language, clause: str, raw: str, subject: str
) -> list[Statement] | None:
    """What ``lang``'s cues read in a clause no rule matched (one statement a slot), or None
    (``raw``: the clause before its time words were cut, which ``when`` reads: "I'm in
    Edinburgh now").

    A cue is a slot said loosely: the clause names the slot or its change (``when``) and holds a
    value of the slot's shape (``value``): "big news, I accepted an offer from Stripe", "we
    relocated to Austin over the summer", "我们上个月搬到了深圳". Never about someone else (the
    language's ``others`` pattern: "my mom moved to Florida"), never a weekday or a month.
    """
    others = lang.pattern("others")
    if others is not None and others.search(clause):
        return None
    fields = {
        "S": subject if subject != DEFAULT_SUBJECT else lang.subject,
        **{
            key: subject if subject != DEFAULT_SUBJECT else form
            for key, form in lang.subject_forms.items()
        },
    }
    found: list[Statement] = []
    for cue in lang.cues:
        if any(s.slot == cue.slot for s in found) or not cue.when.search(raw):
            continue
        match = cue.value.search(clause)
        value = clean_value(match.group("v"), lang) if match else ""
        if not value or is_value_class(value, lang) or value.lower() in lang.pronoun_values:
            continue
        if cue.previous is not None:
            before = cue.previous.search(clause)
            old = clean_value(before.group("v"), lang) if before else ""
            if old and old.lower() != value.lower() and not is_value_class(old, lang):
                text = tidy(cue.previous_template.format(**fields, v=old, a=article(old)))
                if quality_problem(text, language=lang.code) is None:
                    found.append(
                        Statement(text, slot=cue.slot, change="previous", value=old,
                                  language=lang.code)
                    )  # fmt: skip
        text = tidy(cue.template.format(**fields, v=value, a=article(value)))
        if quality_problem(text, language=lang.code) is not None:
            continue
        found.append(Statement(text, slot=cue.slot, value=value, language=lang.code))
    return found or None


def _transient(np: str, value: str, lang: rulebook.Language) -> bool:
    """Whether a noun phrase names something passing ("a question", "my flight"): never a fact,
    unless it is an appointment with its date ("my dentist appointment is on Monday": a fact
    until corrected, its slot the appointment's name)."""
    head = np.split()[-1].lower()
    if head not in lang.transient_heads:
        return False
    return not (head in lang.appointment_heads and is_dated(value, lang))


def _render_match(match: str, value: str, subject: str, *, word: str = "") -> str:
    if not match:
        return ""
    names = "|".join(re.escape(s) for s in dict.fromkeys([subject, *rulebook.subjects()]))
    rendered = match.replace("{S}", f"(?:{names})").replace("{v}", re.escape(value))
    return rendered.replace("{w}", re.escape(word))


def _strip_prefix(text: str, codes: tuple[str, ...]) -> str:
    prefix = rulebook.joined(codes, "prefix")
    text = text.strip()
    return prefix.sub("", text).strip() if prefix is not None else text
