"""Loads the per-language rule files (``longterm/rules/<language>.toml``) into compiled rules.

The engine in ``statements`` knows no language: each file brings its patterns, templates,
lexicons and the words that make a sentence say nothing. A language is added by adding a file.
"""

from __future__ import annotations

import functools
import re
import string
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

CHANGES = frozenset({"add", "replace", "retract", "previous"})
# What a rule's template may name (see rules/en.toml's header), besides the subject's forms.
TEMPLATE_FIELDS = frozenset({"S", "v", "from", "org", "np", "name", "w", "w3", "a"})
_FRAGMENT = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Emit:
    """One statement a rule writes: its template, kind, slot, change and retraction match."""

    template: str
    kind: str = "fact"
    slot: str = ""
    change: str = "add"
    match: str = ""


@dataclass(frozen=True, slots=True)
class Rule:
    """A pattern tried on a clause and what it emits when it matches."""

    pattern: re.Pattern[str]
    emits: tuple[Emit, ...]
    when: re.Pattern[str] | None = None
    negative: bool = False


@dataclass(frozen=True, slots=True)
class Cue:
    """A looser reading of one slot, tried on a clause no rule matched: the clause says the
    slot (``when``: its words or the verbs of its change) and holds one value of the slot's
    shape (``value``, searched anywhere, group ``v``; ``previous``: an old value, group ``v``)."""

    slot: str
    when: re.Pattern[str]
    value: re.Pattern[str]
    template: str
    previous: re.Pattern[str] | None = None
    previous_template: str = ""


@dataclass(frozen=True, slots=True)
class Event:
    """A dated plan: a clause holding one of its words (``when``, group ``head`` names the
    slot) and a date is stored as ``template`` with the clause (first person ``drop``ped) as
    ``{v}``; a later date for the same head supersedes it."""

    when: re.Pattern[str]
    template: str
    drop: re.Pattern[str] | None = None


@dataclass(frozen=True, slots=True)
class Coreference:
    """A close person said again by a pronoun (``[coreference]``): ``person`` finds one named
    (group ``p`` the whole mention, said again in the pronoun's place; group ``r`` the relation
    word, whose gender ``female`` or ``male`` give), ``pronouns`` the pronoun starting a
    sentence (pattern, gender "f" / "m" / "" for either, and what replaces it, ``{p}`` the
    mention)."""

    person: re.Pattern[str]
    pronouns: tuple[tuple[re.Pattern[str], str, str], ...] = ()
    female: frozenset[str] = frozenset()
    male: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class PlainForm:
    """One shape of a plain first-person statement (``[[plain.form]]``): ``pattern`` anchored at
    the clause's start (group ``v`` the rest, ``w`` the verb), the ``template`` it is stored as;
    ``verb``: what ``w`` must be (``known``: a verb of ``[plain.verbs]``); ``transient``: refused
    when a word of ``v`` is a transient head ("I have a question"); ``own``: tried only on a
    clause detected in this language (a form holding no first-person word); ``others``: about
    someone of the user's (``w`` names them)."""

    pattern: re.Pattern[str]
    template: str
    verb: re.Pattern[str] | None = None
    known: bool = False
    transient: bool = False
    own: bool = False
    # About someone of the user's (group ``w`` names them): never given a slot of the user's.
    others: bool = False


@dataclass(frozen=True, slots=True)
class Plain:
    """What a first-person statement no rule read is stored as, in its own words (``[plain]``):
    its ``forms``, what is never kept (``refuse``: chit-chat, passing states, changes), the verb
    in third person (``verbs``, else the first ``endings`` rewrite that applies)."""

    forms: tuple[PlainForm, ...]
    refuse: re.Pattern[str] | None = None
    # Something of the user's given up ("I sold the Focus", group ``v``): ends the current facts
    # naming it.
    ended: re.Pattern[str] | None = None
    verbs: dict[str, str] = field(default_factory=dict)
    endings: tuple[tuple[re.Pattern[str], str], ...] = ()


@dataclass(frozen=True)
class Language:
    """The compiled rules of one language."""

    code: str
    subject: str
    rules: tuple[Rule, ...]
    patterns: dict[str, re.Pattern[str]] = field(default_factory=dict)
    third_person: dict[str, str] = field(default_factory=dict)
    not_names: frozenset[str] = frozenset()
    transient_heads: frozenset[str] = frozenset()
    # Transient heads that are kept when their value is dated: an appointment ("my dentist
    # appointment is on Monday") is a fact until it is corrected or over.
    appointment_heads: frozenset[str] = frozenset()
    pronoun_values: frozenset[str] = frozenset()
    # A value starting with one of these is a fragment ("it way more than ...", "here").
    fragment_starts: frozenset[str] = frozenset()
    # Number words ("two", "три", "两"): a statement that says again what another said with
    # only a count changed ("I have two cats" after "I have three cats") replaces it.
    numbers: frozenset[str] = frozenset()
    possessive: str = "{S}'s"
    subject_forms: dict[str, str] = field(default_factory=dict)
    value_classes: dict[str, str] = field(default_factory=dict)
    slots: tuple[tuple[str, str], ...] = ()
    # The words naming each slot's attribute ("location": "city", "home", ...): indexed with
    # its facts (``slots.words``).
    slot_words: dict[str, tuple[str, ...]] = field(default_factory=dict)
    cues: tuple[Cue, ...] = ()
    # A bare "not anymore" answering "Do you still ...?": (reply, question, clause per group).
    still: tuple[re.Pattern[str], re.Pattern[str], dict[str, str]] | None = None
    # A dated plan said in any words ("the meeting with my landlord is on Monday"): ``[event]``.
    event: Event | None = None
    # Word orders read as the rules' one order ("Seit Januar bin ich bei SAP" -> "ich bin bei
    # SAP"): ``[[reorder]]`` tables, each a pattern and its replacement, applied in order.
    reorder: tuple[tuple[re.Pattern[str], str], ...] = ()
    # A language that drops the subject of a clause after the first ("我叫王芳, 今年28岁" without
    # a second 我, "меня зовут Дима, живу в Твери"): ``[text] carry`` is the subject put back on a
    # clause (cut at ``[text] carry_split``) that holds none and says nothing without it; a list
    # is tried in order ("I ", "I'm ": "... and work as a nurse", "... and allergic to sesame").
    carry: tuple[str, ...] = ()
    # A question naming a slot in other words ("how should I address her" asks the ``name``):
    # ``[[ask]]`` tables, each a pattern searched in the question and the slot it asks about.
    asks: tuple[tuple[re.Pattern[str], str], ...] = ()
    # Words that name the same thing in questions and statements ("mum", "mother"): ``[synonyms]
    # groups``, each a list; a question holding one is also asked with the others.
    synonyms: tuple[tuple[str, ...], ...] = ()
    # What a fact's words are a kind of ("cello": "instrument", "music"): ``[[kind]]`` tables,
    # each the words naming the kind and its members; a fact naming a member is indexed with
    # the kind's words (``blind.fact_postings``), so "which instrument" finds "plays the cello".
    kinds: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    # A first-person statement no rule read, kept in its own words: ``[plain]``.
    plain: Plain | None = None
    # "She moved to York" after "My sister Anna lives in Leeds": ``[coreference]``.
    coreference: Coreference | None = None

    def pattern(self, name: str) -> re.Pattern[str] | None:
        """The language's ``[text]`` pattern ``name`` (``sentence``, ``negation``, ...), or None."""
        return self.patterns.get(name)


@functools.cache
def numbers() -> frozenset[str]:
    """The number words of every shipped rule file (``[lexicon] numbers``)."""
    return frozenset(word for lang in languages() for word in lang.numbers)


@functools.cache
def available() -> tuple[str, ...]:
    """The language codes of the shipped rule files, English first (they ship with the
    package: listed once)."""
    names = sorted(
        entry.name[:-5]
        for entry in resources.files("ttmemory.longterm.rules").iterdir()
        if entry.name.endswith(".toml")
    )
    return tuple(sorted(names, key=lambda code: (code != "en", code)))


def languages(codes: Iterable[str] | None = None) -> tuple[Language, ...]:
    """The compiled rules of ``codes`` (default: every shipped language). ValueError if unknown."""
    wanted = tuple(codes) if codes is not None else available()
    if wanted == available():
        return _all()
    unknown = sorted(set(wanted) - set(available()))
    if unknown:
        raise ValueError(f"no rule file for language(s) {', '.join(unknown)}")
    return tuple(load(code) for code in wanted)


@functools.cache
def _all() -> tuple[Language, ...]:
    return tuple(load(code) for code in available())


@functools.cache
def load(code: str) -> Language:
    """One language's rule file, compiled (cached: the files ship with the package)."""
    raw = resources.files("ttmemory.longterm.rules").joinpath(f"{code}.toml").read_text("utf-8")
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"rules/{code}.toml: {exc}") from exc
    fragments = {
        name: "|".join(value) if isinstance(value, list) else str(value)
        for name, value in data.get("fragments", {}).items()
    }

    def expand(pattern: str) -> str:
        for _ in range(5):  # fragments may use fragments
            expanded = _FRAGMENT.sub(lambda m: fragments.get(m.group(1), m.group(0)), pattern)
            if expanded == pattern:
                break
            pattern = expanded
        return pattern

    def compiled(pattern: str, where: str) -> re.Pattern[str]:
        try:
            return re.compile(expand(pattern), re.I)
        except re.error as exc:
            raise ValueError(f"rules/{code}.toml: {where}: {exc}") from exc

    text = dict(data.get("text", {}))
    for name in ("detect", "script"):
        if name in data:
            text[name] = data[name]
    patterns = {
        name: compiled(value, f"[text] {name}")
        for name, value in text.items()
        if isinstance(value, str) and name not in {"possessive", "carry"}
    }
    rules = []
    for number, item in enumerate(data.get("rule", []), start=1):
        emits = []
        for emit in item.get("emit") or [item]:
            change = emit.get("change", "add")
            if change not in CHANGES:
                raise ValueError(f"rules/{code}.toml: rule {number}: unknown change {change!r}")
            named = {f for _, f, _, _ in string.Formatter().parse(emit["template"]) if f}
            unknown = named - TEMPLATE_FIELDS - set(data.get("subject_forms", {}))
            if unknown:
                # Found when the file loads, not when a user's sentence first matches the rule.
                raise ValueError(
                    f"rules/{code}.toml: rule {number}: template names {sorted(unknown)}"
                )
            emits.append(
                Emit(
                    template=emit["template"],
                    kind=emit.get("kind", item.get("kind", "fact")),
                    slot=emit.get("slot", ""),
                    change=change,
                    match=expand(emit.get("match", "")),
                )
            )
        rules.append(
            Rule(
                pattern=compiled(item["pattern"], f"rule {number}"),
                emits=tuple(emits),
                when=compiled(item["when"], f"rule {number} when") if item.get("when") else None,
                negative=bool(item.get("negative", False)),
            )
        )
    lexicon: dict[str, Any] = data.get("lexicon", {})
    return Language(
        code=code,
        subject=data["subject"],
        rules=tuple(rules),
        patterns=patterns,
        third_person=dict(lexicon.get("third_person", {})),
        not_names=frozenset(w.lower() for w in lexicon.get("not_names", [])),
        transient_heads=frozenset(w.lower() for w in lexicon.get("transient_heads", [])),
        appointment_heads=frozenset(w.lower() for w in lexicon.get("appointment_heads", [])),
        pronoun_values=frozenset(w.lower() for w in lexicon.get("pronoun_values", [])),
        fragment_starts=frozenset(w.lower() for w in lexicon.get("fragment_starts", [])),
        numbers=frozenset(w.lower() for w in lexicon.get("numbers", [])),
        possessive=text.get("possessive", "{S}'s"),
        carry=tuple(
            [str(text["carry"])] if isinstance(text.get("carry"), str) else text.get("carry", [])
        ),
        subject_forms=dict(data.get("subject_forms", {})),
        slots=tuple((expand(item["pattern"]), item["slot"]) for item in data.get("slot", [])),
        cues=tuple(
            Cue(
                slot=item["slot"],
                when=compiled(item["when"], f"cue {number} when"),
                value=compiled(item["value"], f"cue {number} value"),
                template=item["template"],
                previous=compiled(item["previous"], f"cue {number} previous")
                if item.get("previous")
                else None,
                previous_template=item.get("previous_template", item["template"]),
            )
            for number, item in enumerate(data.get("cue", []), start=1)
        ),
        slot_words={
            name: tuple(str(word) for word in words)
            for name, words in data.get("slot_words", {}).items()
        },
        still=(
            (
                compiled(data["still"]["reply"], "[still] reply"),
                compiled(data["still"]["question"], "[still] question"),
                {k: v for k, v in data["still"].items() if k not in {"reply", "question"}},
            )
            if "still" in data
            else None
        ),
        event=(
            Event(
                when=compiled(data["event"]["when"], "[event] when"),
                template=data["event"]["template"],
                drop=compiled(data["event"]["drop"], "[event] drop")
                if data["event"].get("drop")
                else None,
            )
            if "event" in data
            else None
        ),
        reorder=tuple(
            (compiled(item["pattern"], f"reorder {number}"), item["replace"])
            for number, item in enumerate(data.get("reorder", []), start=1)
        ),
        asks=tuple(
            (compiled(item["when"], f"ask {number} when"), str(item["slot"]))
            for number, item in enumerate(data.get("ask", []), start=1)
        ),
        synonyms=tuple(
            tuple(str(word) for word in group)
            for group in data.get("synonyms", {}).get("groups", [])
        ),
        kinds=tuple(
            (tuple(str(w) for w in item["names"]), tuple(str(w) for w in item["members"]))
            for item in data.get("kind", [])
        ),
        value_classes={
            name: "|".join(re.escape(word) for word in words)
            for name, words in lexicon.get("value_classes", {}).items()
        },
        plain=_plain(data.get("plain"), compiled),
        coreference=_coreference(data.get("coreference"), compiled),
    )


def _coreference(
    data: dict[str, Any] | None, compiled: Callable[[str, str], re.Pattern[str]]
) -> Coreference | None:
    """The ``[coreference]`` table of a rule file, compiled (None when the file has none)."""
    if not data:
        return None
    return Coreference(
        person=compiled(data["person"], "[coreference] person"),
        pronouns=tuple(
            (
                compiled(item["pattern"], f"coreference pronoun {number}"),
                str(item.get("gender", "")),
                str(item.get("replace", "{p}")),
            )
            for number, item in enumerate(data.get("pronoun", []), start=1)
        ),
        female=frozenset(w.lower() for w in data.get("female", [])),
        male=frozenset(w.lower() for w in data.get("male", [])),
    )


def _plain(
    data: dict[str, Any] | None, compiled: Callable[[str, str], re.Pattern[str]]
) -> Plain | None:
    """The ``[plain]`` table of a rule file, compiled (None when the file has none)."""
    if not data:
        return None
    return Plain(
        forms=tuple(
            PlainForm(
                pattern=compiled(item["pattern"], f"plain form {number}"),
                template=item["template"],
                verb=compiled(item["verb"], f"plain form {number} verb")
                if item.get("verb")
                else None,
                known=bool(item.get("known", False)),
                transient=bool(item.get("transient", False)),
                own=bool(item.get("own", False)),
                others=bool(item.get("others", False)),
            )
            for number, item in enumerate(data.get("form", []), start=1)
        ),
        refuse=compiled(data["refuse"], "[plain] refuse") if data.get("refuse") else None,
        ended=compiled(data["ended"], "[plain] ended") if data.get("ended") else None,
        verbs={str(k).lower(): str(v) for k, v in data.get("verbs", {}).items()},
        endings=tuple(
            (compiled(pattern, "[plain] endings"), str(replacement))
            for pattern, replacement in data.get("endings", [])
        ),
    )


@functools.cache
def joined(codes: tuple[str, ...], name: str) -> re.Pattern[str] | None:
    """One pattern matching where any of the languages' ``[text] name`` patterns matches."""
    parts = [
        # Each language's named groups get its index: "v" becomes "v_0", "v_1", ...
        re.sub(r"\(\?P<(\w+)>", rf"(?P<\1_{index}>", lang.patterns[name].pattern)
        for index, lang in enumerate(languages(codes))
        if name in lang.patterns
    ]
    return re.compile("|".join(f"(?:{part})" for part in parts), re.I) if parts else None


def subjects() -> tuple[str, ...]:
    """The default subject of every shipped language ("The user", "Пользователь", ...)."""
    return tuple(load(code).subject for code in available())


def detect(text: str, codes: tuple[str, ...] | None = None) -> Language:
    """The language a statement is written in: the first non-English file whose ``detect``
    pattern finds it, else English (or the first of ``codes``)."""
    langs = languages(codes)
    for lang in langs:
        found = lang.pattern("detect")
        if lang.code != "en" and found is not None and found.search(text):
            return lang
    return next((lang for lang in langs if lang.code == "en"), langs[0])
