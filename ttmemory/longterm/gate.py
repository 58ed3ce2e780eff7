"""The quality gate: why a normalised statement must never be stored (first person left in, a
question, a hypothetical, a fragment, a vague value, about the assistant), or None."""

from __future__ import annotations

from ttmemory.longterm import rulebook
from ttmemory.longterm.values import CJK, VERBATIM

MAX_STATEMENT_CHARS = 300


def quality_problem(text: str, *, language: str | None = None) -> str | None:
    """Why a normalised statement must not be stored, or None (the quality gate).

    ``language``: the rule file whose words are checked (default: the one ``text`` is in).
    """
    lang = rulebook.load(language) if language else rulebook.detect(text)
    if not text:
        return "too short"
    # Chinese and Japanese write no spaces: count characters there.
    spaced = len(text.split()) >= 3
    if not spaced and (not CJK.search(text) or len(text) < 4):
        return "too short"
    if len(text) > MAX_STATEMENT_CHARS:
        return "too long"
    if text.rstrip().endswith(("?", "\uff1f")):
        return "a question"
    rest = text
    for name in rulebook.subjects():
        rest = rest.replace(name, "").replace(name.lower(), "")
    rest = VERBATIM.sub(" ", rest)  # "sam.r@proton.me" holds no first person
    first = lang.pattern("first_person")
    if first is not None and first.search(rest):
        return "first person left in (a clause not split, or not about the user)"
    second = lang.pattern("second_person")
    if second is not None and second.search(text):
        return "about the assistant"
    opener = lang.pattern("skip_start")
    hypothetical = lang.pattern("hypothetical_start")
    if (opener is not None and opener.match(text)) or (
        hypothetical is not None and hypothetical.match(text)
    ):
        return "hypothetical"
    refused = lang.pattern("refuse")
    if refused is not None and refused.search(text):
        return "vague, or about the assistant"
    return None
