"""Facts as short third-person statements: the offline rule engine, normalisation, slots, the gate.

Pure functions, no storage. The offline rules are data, one file per language
(``longterm/rules/<language>.toml``, loaded by ``rulebook``); this engine knows no language.
Both extractors end here: the offline rules write statements with the subject already in place;
an LLM's candidates are normalised by ``normalise_statement``. Then ``infer_slot`` names the
attribute a statement sets ("lives in" -> ``location``) and ``quality_problem`` rejects what must
never be stored (first person left in, a question, a hypothetical, a fragment).
``services.learning`` resolves the subject and applies the results.

One subject convention: the user's name when it is known (``subject``), else the language's
default subject ("The user"); the name itself is stored as "The user's name is <name>".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ttmemory.longterm import rulebook, slots
from ttmemory.text import normalise_terms, normalise_text

DEFAULT_SUBJECT = "The user"
MAX_STATEMENT_CHARS = 300
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
    match: str = ""
    language: str = ""


# -- the offline rule engine ----------------------------------------------------------------


def rule_statements(
    messages: list[dict[str, object]],
    *,
    subject: str = DEFAULT_SUBJECT,
    languages: Sequence[str] | None = None,
) -> list[Statement]:
    """Explicit statements in user messages, one per clause, about ``subject`` (the user).

    ``languages``: the rule files applied (default: every shipped one; each language's
    patterns only match its own text). A message is cut into sentences and each sentence into
    clauses where a new first-person clause starts ("... peanuts and I prefer ..." is two).
    Questions, hypotheticals ("if I were ..."), jokes marked as such, quoted and reported
    speech ("my sister says ...") give nothing. A sentence that only corrects a value ("sorry,
    I meant Tuesday") changes the statement before it, or becomes a ``correct`` statement.
    """
    codes = tuple(languages) if languages is not None else rulebook.available()
    rulebook.languages(codes)  # ValueError for an unknown language, before any work
    question = rulebook.joined(codes, "question")
    joke = rulebook.joined(codes, "joke")
    correction = rulebook.joined(codes, "correction")
    reversal = rulebook.joined(codes, "reversal")
    also = rulebook.joined(codes, "also")
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
        for sentence in _sentences(content, codes):
            if joke is not None and joke.search(sentence):
                # "I'm a billionaire, lol jk" says nothing; "Just kidding!" on its own takes
                # back the sentence before it.
                alone = _strip_prefix(joke.sub(" ", sentence), codes).strip(" ,.!?")
                if len(alone.split()) < 3 and not _CJK.search(alone):
                    found = [s for s in found if not any(s is b for b in before)]
                before = []
                continue
            if question is not None and question.search(sentence):
                continue
            said: list[Statement] = []
            for clause in _clauses(sentence, codes):
                said.extend(_carried(clause, subject, codes))
            fixed = correction.match(sentence.strip()) if correction is not None else None
            fixed_value = next(
                (v for k, v in (fixed.groupdict() if fixed else {}).items() if k[:1] == "v" and v),
                "",
            )
            if not said and not fixed_value:
                fixed_value = _loose_correction(sentence, codes)
            added = also.match(sentence.strip()) if also is not None and not said else None
            added_value = _strip(
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
                value = _strip(fixed_value)
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
            if reversal is not None and reversal.search(sentence):
                said = [
                    replace(s, change="replace")
                    if s.change == "add" and not slots.is_single_valued(s.slot)
                    else s
                    for s in said
                ]
            said = [replace(s, message_index=index) for s in said]
            found.extend(said)
            before = said
    return found


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
    for number, piece in enumerate(p.strip(" ,") for p in splitter.split(clause)):
        if not piece:
            continue
        said = clause_statements(piece, subject=subject, languages=codes)
        if (
            not said
            and number
            and not (first is not None and first.search(piece))
            and not (others is not None and others.search(piece))
        ):
            said = clause_statements(lang.carry + piece, subject=subject, languages=codes)
        found.extend(said)
    return found if len(found) > len(whole) else whole


def _loose_correction(sentence: str, codes: tuple[str, ...]) -> str:
    """The dates a sentence that only corrects puts in place, said in any words ("actually
    scratch that, he moved it to Wednesday"): the language's ``[text] corrected`` marker and
    one or more weekdays, months or days; "" otherwise."""
    for lang in rulebook.languages(codes):
        marker = lang.pattern("corrected")
        if marker is None or not marker.search(sentence):
            continue
        tokens = _class_tokens(sentence, lang)
        if tokens:
            return " ".join(dict.fromkeys(match.group(0) for _, match in tokens))
    return ""


def dated_only(value: str) -> bool:
    """Whether ``value`` is only dates (weekdays, months, days, numbers and short words): a
    correction made of them corrects a dated fact, never another one."""
    for lang in rulebook.languages():
        tokens = _class_tokens(value, lang)
        if not tokens:
            continue
        rest = value
        for _, match in tokens:
            rest = rest.replace(match.group(0), " ")
        if _CJK.search(value) or not any(len(word) > _SHORT for word in rest.split()):
            return True
    return False


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
    clause: str, *, subject: str = DEFAULT_SUBJECT, languages: Sequence[str] | None = None
) -> list[Statement]:
    """The statements one clause makes about the user (the first language whose rules match)."""
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
                return found or _fallback(written_in, clause, subject)
    return _fallback(written_in, clause, subject)


def _fallback(lang: rulebook.Language, clause: str, subject: str) -> list[Statement]:
    """What a clause no rule or cue stored still says: a dated plan (``[event]``), or a
    negated first-person statement, which ends the current fact it contradicts ("turns out
    I'm not allergic to penicillin"; a ``deny`` that must name every term of that fact)."""
    hypothetical = lang.pattern("hypothetical")
    if hypothetical is not None and hypothetical.search(clause):
        return []
    negation = lang.pattern("negation")
    negated = negation is not None and negation.search(clause) is not None
    others = lang.pattern("others")
    if negated:
        first = lang.pattern("first_person")
        if first is None or not first.search(clause) or (others and others.search(clause)):
            return []
        denied = _trim(" ".join(negation.sub(" ", clause).split()).strip(" ,."), lang)
        if len(content_terms(denied, subject=subject)) >= 2:
            return [Statement(denied, change="deny", value=DENY_ALL, language=lang.code)]
        return []
    return _event_statements(lang, clause, subject)


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
    dated = lang.pattern("dated")
    if not _class_tokens(clause, lang) and (dated is None or not dated.search(clause)):
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
    text = _tidy(event.template.format(**fields, v=value))
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
    clause = _trim(clause, lang)
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
            # "I don't really go to the gym anymore": no pattern read it, but it says something
            # stopped being true. A "deny" ends the current facts it names (services.learning).
            denied = gone.sub(" ", clause)
            denied = negation.sub(" ", denied) if negation is not None else denied
            denied = " ".join(denied.split()).strip(" ,.")
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
            "a": _article(values.get("v", "")),
        }
        found = []
        for emit in rule.emits:
            text = _tidy(emit.template.format(**fields))
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
                    or _shaped_slot(value),
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
        if not value or _is_value_class(value, lang) or value.lower() in lang.pronoun_values:
            continue
        if cue.previous is not None:
            before = cue.previous.search(clause)
            old = clean_value(before.group("v"), lang) if before else ""
            if old and old.lower() != value.lower() and not _is_value_class(old, lang):
                text = _tidy(cue.previous_template.format(**fields, v=old, a=_article(old)))
                if quality_problem(text, language=lang.code) is None:
                    found.append(
                        Statement(text, slot=cue.slot, change="previous", value=old,
                                  language=lang.code)
                    )  # fmt: skip
        text = _tidy(cue.template.format(**fields, v=value, a=_article(value)))
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


def is_dated(value: str, lang: rulebook.Language) -> bool:
    """Whether ``value`` says when: a weekday or a month, a number, or the language's
    ``[text] dated`` words ("tomorrow", "next week", "明天")."""
    if re.search(r"\d", value) or _class_tokens(value, lang):
        return True
    dated = lang.pattern("dated")
    return dated is not None and dated.search(value) is not None


def _class_tokens(value: str, lang: rulebook.Language) -> list[tuple[str, re.Match[str]]]:
    """The weekdays, months, ... (the lexicon's value classes) in ``value``, with their class."""
    found = []
    for name, alternatives in lang.value_classes.items():
        for match in _class_pattern(alternatives).finditer(value):
            found.append((name, match))
    return found


def _class_pattern(alternatives: str) -> re.Pattern[str]:
    # Chinese and Japanese words have no boundaries to look for.
    edge = "" if _CJK.search(alternatives) else r"(?<!\w)"
    return re.compile(rf"{edge}(?:{alternatives}){edge.replace('<', '')}", re.I)


def _article(value: str) -> str:
    return "an" if value[:1].lower() in "aeiou" else "a"


def _is_value_class(value: str, lang: rulebook.Language) -> bool:
    """Whether ``value`` is a weekday or a month ("on Monday" is no city, no employer)."""
    return any(
        re.fullmatch(alternatives, value, re.I) for alternatives in lang.value_classes.values()
    )


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def _shaped_slot(value: str) -> str:
    """The slot a value's shape names whatever the verb ("I mostly use mia@x.com these days"
    sets the e-mail, so it supersedes the old one), or ""."""
    return "email" if _EMAIL.fullmatch(value.strip()) else ""


def _render_match(match: str, value: str, subject: str, *, word: str = "") -> str:
    if not match:
        return ""
    names = "|".join(re.escape(s) for s in dict.fromkeys([subject, *rulebook.subjects()]))
    rendered = match.replace("{S}", f"(?:{names})").replace("{v}", re.escape(value))
    return rendered.replace("{w}", re.escape(word))


def swap_value(text: str, old: str, new: str) -> str:
    """``text`` with its value ``old`` replaced by ``new`` (the last occurrence)."""
    at = text.lower().rfind(old.lower()) if old else -1
    if at < 0:
        return text
    return text[:at] + new + text[at + len(old) :]


def correct_value(text: str, new: str, *, old: str = "", by_class_only: bool = False) -> str:
    """``text`` with the value ``new`` corrects put in place ("... on Monday" + "Tuesday").

    A weekday, month or number replaces the last word of the same class (the classes are
    lexicons of the rule files), also inside a short phrase ("Thursday at 5", "el martes": each
    dated word replaces its own class); a capitalised value the trailing capitalised words;
    anything else the ``old`` value when known, else as many trailing words as it has.
    ``by_class_only``: ``text`` unchanged unless it holds a word of ``new``'s class.
    """
    new = _strip(new)
    if not new:
        return text
    swapped = _swap_classes(text, new)
    if swapped is not None or by_class_only:
        return swapped if swapped is not None else text
    if old and old.lower() in text.lower():
        return swap_value(text, old, new)
    words = text.split()
    if new[:1].isupper():
        keep = len(words)
        while keep > 2 and words[keep - 1][:1].isupper():
            keep -= 1
        if keep < len(words):
            return " ".join([*words[:keep], new])
    count = len(new.split())
    if len(words) <= count + 2:
        return text
    return " ".join([*words[:-count], new])


_NUMBER = re.compile(r"\d[\d.,:]*")
# Words a dated correction may hold besides its dates: "at", "on the", "el", "am", "во".
_SHORT = 3


def _swap_classes(text: str, new: str) -> str | None:
    """``text`` with each dated word of ``new`` (weekday, month, number) put in place of the last
    word of the same class; None when ``new`` is not made of such words (and a few short ones)
    or ``text`` holds none of them."""
    for lang in rulebook.languages():
        tokens = _class_tokens(new, lang)
        numbers = list(_NUMBER.finditer(new))
        if not tokens and not numbers:
            continue
        rest = new
        for _, match in tokens:
            rest = rest.replace(match.group(0), " ")
        rest = _NUMBER.sub(" ", rest)
        if any(len(word) > _SHORT for word in rest.split()) and not _CJK.search(new):
            continue
        result, swapped = text, False
        for name, match in tokens:
            found = list(_class_pattern(lang.value_classes[name]).finditer(result))
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
    value = _strip(value)
    value = re.sub(r"[\U0001F000-\U0001FFFF\u2600-\u27BF]", "", value).strip()
    value = _trim(value, lang)
    # First person becomes third person only between e-mails, URLs, @handles and numbers:
    # "sam.r@proton.me" must not become "sam.r@proton.them".
    pieces = []
    at = 0
    for kept in _VERBATIM.finditer(value):
        pieces.append(_third_person(value[at : kept.start()], lang))
        pieces.append(kept.group(0))
        at = kept.end()
    pieces.append(_third_person(value[at:], lang))
    return "".join(pieces)


# Spans of a value that are never rewritten: e-mails, URLs, @handles, phone-like numbers.
_VERBATIM = re.compile(
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


def _strip(value: str) -> str:
    return value.strip(" \t,.;:!'\"\u201c\u201d\u3002\uff0c\uff01")


def _trim(text: str, lang: rulebook.Language) -> str:
    trailing = lang.pattern("trailing")
    previous = None
    while previous != text and trailing is not None:
        previous = text
        text = trailing.sub("", text).strip(" ,.;:!\u3002\uff0c\uff01")
    return text


def _strip_prefix(text: str, codes: tuple[str, ...]) -> str:
    prefix = rulebook.joined(codes, "prefix")
    text = text.strip()
    return prefix.sub("", text).strip() if prefix is not None else text


def _tidy(text: str) -> str:
    text = " ".join(text.split()).strip(" .")
    return text[:1].upper() + text[1:]


# -- normalisation of any candidate (LLM or rules) ---------------------------------------------

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
        text = _LEADING_POSSESSIVE.sub(_possessive(subject) + " ", text, count=1)
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
            if text.startswith(other + " ") or (_CJK.match(other) and text.startswith(other)):
                text = subject + text[len(other) :]
                break
    text = _INNER_FILLER.sub("", text)
    lang = rulebook.detect(text)
    tail = lang.pattern("tail")
    if tail is not None:
        text = tail.sub("", text)
    text = _trim(text, lang)
    name = re.match(rf"^{re.escape(_possessive(subject))} name is (.+)$", text, re.I)
    if name:
        text = f"The user's name is {name.group(1)}"
    return _tidy(text)


def split_statement(text: str) -> list[str]:
    """A candidate cut where a first-person clause starts ("... peanuts and I prefer ...")."""
    splitter = rulebook.joined(rulebook.available(), "clause")
    text = str(text).replace("\u2019", "'")
    parts = splitter.split(text) if splitter is not None else [text]
    return [part.strip(" ,.") for part in parts if part and part.strip(" ,.")]


def _possessive(subject: str) -> str:
    return subject + ("'" if subject.endswith("s") and subject != DEFAULT_SUBJECT else "'s")


def quality_problem(text: str, *, language: str | None = None) -> str | None:
    """Why a normalised statement must not be stored, or None (the quality gate).

    ``language``: the rule file whose words are checked (default: the one ``text`` is in).
    """
    lang = rulebook.load(language) if language else rulebook.detect(text)
    if not text:
        return "too short"
    # Chinese and Japanese write no spaces: count characters there.
    spaced = len(text.split()) >= 3
    if not spaced and (not _CJK.search(text) or len(text) < 4):
        return "too short"
    if len(text) > MAX_STATEMENT_CHARS:
        return "too long"
    if text.rstrip().endswith(("?", "\uff1f")):
        return "a question"
    rest = text
    for name in rulebook.subjects():
        rest = rest.replace(name, "").replace(name.lower(), "")
    rest = _VERBATIM.sub(" ", rest)  # "sam.r@proton.me" holds no first person
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


_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def infer_slot(text: str, *, subject: str = DEFAULT_SUBJECT) -> str:
    """The attribute a statement sets (``location`` for "... lives in Porto"), or "".

    The rule files' ``[[slot]]`` tables name them: ``{S}`` is the subject, ``{POS}`` its
    possessive, ``{1}`` in a slot the pattern's first group ("favourite colour").
    """
    names = dict.fromkeys([subject, DEFAULT_SUBJECT])
    s_part = "(?:" + "|".join(re.escape(s) for s in names) + ")"
    pos_part = "(?:" + "|".join(re.escape(_possessive(s)) for s in names) + ")"
    for lang in rulebook.languages():
        for pattern, slot in lang.slots:
            found = re.match(pattern.replace("{S}", s_part).replace("{POS}", pos_part), text, re.I)
            if found:
                if "{1}" in slot:
                    group = normalise_text(found.group(1)).replace("favorite", "favourite")
                    return slots.canonical(slot.replace("{1}", group))
                return slots.canonical(slot)
    return ""


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
            if _CJK.match(name) and key.startswith(normalise_text(name)):
                key = key[len(normalise_text(name)) :].lstrip("はの")
                break
    # Hiragana alone are endings and particles ("を", "ている"), not what a fact says.
    return {t for t in normalise_terms(key.lstrip("@")) if not _HIRAGANA.fullmatch(t)}


_HIRAGANA = re.compile("[\u3040-\u309f]+")


def similarity(a: str, b: str, *, subject: str = DEFAULT_SUBJECT) -> float:
    """Jaccard similarity of two statements' content terms (0..1)."""
    first, second = content_terms(a, subject=subject), content_terms(b, subject=subject)
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)
