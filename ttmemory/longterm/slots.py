"""Slots: the attribute a fact sets, and whether a new value supersedes the old one.

The one place that decides it, for the offline rules and for an LLM's facts alike: the
registry is data (``longterm/slots.toml``: each slot, how many values it holds, the other names
it goes by); the words naming a slot in each language are in the language's rule file
(``[slot_words]``), so recall finds "Der Nutzer ist Lehrer" when asked for the "Beruf".

A slot about someone close to the user is ``"<who> <slot>"`` ("sister lena job"): it holds as
many values as the slot it ends with, and is never the user's own.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib import resources

from ttmemory.longterm import rulebook
from ttmemory.longterm.normalise import DEFAULT_SUBJECT, possessive
from ttmemory.text import normalise_text


@dataclass(frozen=True, slots=True)
class Slot:
    """One registered slot: its name, whether it holds one value, and its other names."""

    name: str
    single: bool
    aliases: tuple[str, ...] = ()
    stored_as: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Registry:
    slots: dict[str, Slot]
    by_alias: dict[str, str]
    single_endings: frozenset[str]
    single_prefixes: tuple[str, ...]


@functools.cache
def _registry() -> _Registry:
    raw = resources.files("ttmemory.longterm").joinpath("slots.toml").read_text("utf-8")
    data = tomllib.loads(raw)
    slots = {
        name: Slot(
            name=name,
            single=bool(item.get("single", False)),
            aliases=tuple(_words(a) for a in item.get("aliases", [])),
            stored_as=tuple(_words(a) for a in item.get("stored_as", [])),
        )
        for name, item in data.get("slot", {}).items()
    }
    by_alias = {alias: slot.name for slot in slots.values() for alias in slot.aliases}
    by_alias.update({name: name for name in slots})
    endings = data.get("single_endings", {})
    return _Registry(
        slots=slots,
        by_alias=by_alias,
        single_endings=frozenset(endings.get("words", [])),
        single_prefixes=tuple(endings.get("single_prefixes", [])),
    )


def _words(name: str) -> str:
    return " ".join(name.replace("_", " ").replace("-", " ").lower().split())


def canonical(name: str) -> str:
    """The registered name of a slot given under any of its names ("home_city", "City" ->
    "location"; "sister Lena occupation" -> "sister lena job"); an unknown slot as given,
    lower-cased; "" for none."""
    words = _words(name or "")
    if not words:
        return ""
    registry = _registry()
    if words in registry.by_alias:
        return registry.by_alias[words]
    if words.startswith(registry.single_prefixes):
        return words  # "favourite number" is not a phone number
    parts = words.split()
    for size in range(min(3, len(parts) - 1), 0, -1):  # the longest known ending first
        ending = " ".join(parts[-size:])
        if ending in registry.by_alias:
            return " ".join([*parts[:-size], registry.by_alias[ending]])
    return words


def registered(*, single: bool) -> tuple[str, ...]:
    """The registered slots holding one value (``single``) or many, in the registry's order."""
    return tuple(name for name, slot in _registry().slots.items() if slot.single == single)


def attribute(slot: str) -> str:
    """The registered slot ``slot`` ends with ("sister lena job" -> "job"), or ``slot``."""
    slot = canonical(slot)
    registry = _registry()
    parts = slot.split()
    for size in range(min(3, len(parts)), 0, -1):
        ending = " ".join(parts[-size:])
        if ending in registry.slots:
            return ending
    return slot


def is_single_valued(slot: str) -> bool:
    """True when a new value of ``slot`` supersedes the current one (a home city, an employer,
    a phone number, a favourite); False when values add up (pets, allergies, hobbies)."""
    slot = canonical(slot)
    if not slot:
        return False
    registry = _registry()
    known = registry.slots.get(attribute(slot))
    if known is not None:
        return known.single
    return slot.startswith(registry.single_prefixes) or slot.split()[-1] in registry.single_endings


def stored_names(slot: str) -> list[str]:
    """Every name facts of ``slot`` may be stored under: its own, then its aliases and the
    names earlier releases used (facts stored before slots were registered)."""
    slot = canonical(slot)
    known = _registry().slots.get(slot)
    if known is None:
        return [slot] if slot else []
    return list(dict.fromkeys([slot, *known.aliases, *known.stored_as]))


def words(slot: str) -> tuple[str, ...]:
    """The words that name ``slot``'s attribute in every shipped language ("city", "город",
    "Wohnort", "城市" for ``location``), indexed with its facts so that a question naming the
    attribute finds the value; () for a slot without words."""
    return _slot_words(attribute(slot))


@functools.cache
def _slot_words(name: str) -> tuple[str, ...]:
    found: list[str] = []
    for lang in rulebook.languages():
        found.extend(lang.slot_words.get(name, ()))
    return tuple(dict.fromkeys(found))


_NAME = re.compile(r"[^\W\d_][\w '-]{0,59}")


def clean(value: object) -> str:
    """A slot named by anyone (an LLM, the API): its registered name, or "" when not a short
    attribute name."""
    if not isinstance(value, str):
        return ""
    slot = canonical(value)
    return slot if _NAME.fullmatch(slot) else ""


def infer_slot(text: str, *, subject: str = DEFAULT_SUBJECT) -> str:
    """The attribute a statement sets (``location`` for "... lives in Porto"), or "".

    The rule files' ``[[slot]]`` tables name them: ``{S}`` is the subject, ``{POS}`` its
    possessive, ``{1}`` in a slot the pattern's first group ("favourite colour").
    """
    names = dict.fromkeys([subject, DEFAULT_SUBJECT])
    s_part = "(?:" + "|".join(re.escape(s) for s in names) + ")"
    pos_part = "(?:" + "|".join(re.escape(possessive(s)) for s in names) + ")"
    for lang in rulebook.languages():
        for pattern, slot in lang.slots:
            found = re.match(pattern.replace("{S}", s_part).replace("{POS}", pos_part), text, re.I)
            if found:
                if "{1}" in slot:
                    group = normalise_text(found.group(1)).replace("favorite", "favourite")
                    return canonical(slot.replace("{1}", group))
                return canonical(slot)
    return ""
