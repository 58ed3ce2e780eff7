"""Facts as short third-person statements: the offline rules, normalisation, slots and the gate.

Pure functions, no storage. Both extractors end here: the offline rules write statements with
the subject already in place; an LLM's candidates are normalised by ``normalise_statement``.
Then ``infer_slot`` names the attribute a statement sets ("lives in" -> ``location``) and
``quality_problem`` rejects what must never be stored (first person left in, a question, a
hypothetical, a fragment). ``services.learning`` resolves the subject and applies the results.

One subject convention: the user's name when it is known (``subject``), else "The user"; the
name itself is always stored as "The user's name is <name>".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ttmemory.text import normalise_terms, normalise_text

DEFAULT_SUBJECT = "The user"
# Slots a new value replaces (one current value each); others (allergy, ...) only deduplicate.
SINGLE_VALUED_SLOTS = frozenset(
    {"name", "location", "employer", "job", "diet", "age", "birthday", "birthplace", "marital"}
)
# Slot names of earlier releases, still matched when looking for the current value.
SLOT_ALIASES = {"location": ("home_city",), "employer": ("work",), "job": ("work",)}
MAX_STATEMENT_CHARS = 300


@dataclass(frozen=True, slots=True)
class Statement:
    """A statement about the user found in one message: text, kind, slot, message index."""

    text: str
    kind: str = "fact"
    slot: str = ""
    message_index: int | None = None


# -- the offline rules ----------------------------------------------------------------------

_NAME = r"(?-i:[A-Z][\w'-]{1,30}(?:\s+[A-Z][\w'-]{1,30})?)"
_ADV = (
    r"(?:(?:really|also|actually|currently|now|still|usually|always|absolutely|totally|"
    r"definitely|mostly|just|only|truly|genuinely|generally|normally|often|so|very|quite|"
    r"definitely|kind of|sort of)\s+)*"
)
_I_AM = r"(?:i'm|i am|im)\s+" + _ADV
_V = r"(?P<v>.{2,120}?)"
_END = r"\s*$"
_PROFESSIONS = (
    "nurse|doctor|teacher|engineer|developer|programmer|designer|student|lawyer|accountant|"
    "architect|chef|pilot|writer|journalist|scientist|researcher|manager|consultant|dentist|"
    "pharmacist|photographer|musician|artist|farmer|electrician|plumber|mechanic|librarian|"
    "professor|firefighter|paramedic|veterinarian|vet|analyst|translator|therapist|surgeon|"
    "cook|driver|carpenter|baker|barista|waiter|waitress|cashier|entrepreneur|freelancer|"
    "economist|physicist|biologist|chemist|historian|editor|banker|pharmacist|tutor|coach"
)
_TRANSIENT = (
    "question|questions|problem|problems|meeting|meetings|appointment|idea|call|minute|"
    "second|moment|doubt|issue|request|favou?r|feeling|headache|cold|day|flight|reservation|"
    "booking|trip|plan|lot|bit|few|couple|quick|look|chance|break|deadline|presentation|"
    "interview|date|test|exam|task|reminder|suggestion|complaint|cough|fever"
)
_THIRD_PERSON = {
    "prefer": "prefers",
    "love": "loves",
    "like": "likes",
    "enjoy": "enjoys",
    "adore": "adores",
    "play": "plays",
    "use": "uses",
    "drive": "drives",
    "drink": "drinks",
    "eat": "eats",
    "read": "reads",
    "watch": "watches",
    "run": "runs",
    "cook": "cooks",
    "bake": "bakes",
    "ski": "skis",
    "swim": "swims",
    "surf": "surfs",
    "collect": "collects",
    "study": "studies",
    "teach": "teaches",
    "practice": "practices",
    "practise": "practises",
    "volunteer": "volunteers",
    "speak": "speaks",
    "have": "has",
    "own": "owns",
    "hate": "hates",
    "dislike": "dislikes",
    "live": "lives",
    "work": "works",
    "go": "goes",
    "do": "does",
    "need": "needs",
    "want": "wants",
    "wear": "wears",
    "support": "supports",
    "follow": "follows",
    "grow": "grows",
    "write": "writes",
    "take": "takes",
    "listen": "listens",
    "travel": "travels",
    "walk": "walks",
    "cycle": "cycles",
    "hike": "hikes",
    "climb": "climbs",
    "paint": "paints",
    "sing": "sings",
    "dance": "dances",
}
_HABITS = "play|use|drive|drink|eat|read|watch|run|cook|bake|ski|swim|surf|collect|study|teach|practi[cs]e|volunteer|wear|support|grow|write|listen to|cycle|hike|climb|paint|sing|dance"

# (pattern, template, kind): the template's {S} is the subject, {v} the cleaned value, {w} a
# word of the pattern. Tried in order; the first match of a clause wins.
_RULE_TABLE: list[tuple[str, str, str]] = [
    (r"^(?:my name is|my name's|call me|you can call me|i go by|i'm called|i am called)\s+"
     + r"(?P<v>" + _NAME + r")(?:\s*,.*)?" + _END, "The user's name is {v}", "fact"),
    (r"^(?:i'm|i am|im|this is)\s+(?P<v>" + _NAME + r")" + _END, "The user's name is {v}", "fact"),
    (_I_AM + r"(?:(?:very|severely|mildly|highly|deathly)\s+)?allergic to\s+" + _V + _END,
     "{S} is allergic to {v}", "fact"),
    (r"^i have (?:an?\s+)?(?:(?:severe|mild|serious)\s+)?allergy to\s+" + _V + _END,
     "{S} is allergic to {v}", "fact"),
    (r"^i have (?:an?\s+)?(?:(?:severe|mild|serious)\s+)?(?P<v>[\w-]+(?:\s+[\w-]+)?) allerg(?:y|ies)" + _END,
     "{S} is allergic to {v}", "fact"),
    (r"^i (?:don't|do not|never|dont) (?P<w>eat|drink)\s+" + _V + _END,
     "{S} does not {w} {v}", "preference"),
    (r"^i (?:don't|do not|dont) (?:really )?like\s+" + _V + _END, "{S} dislikes {v}", "preference"),
    (r"^i " + _ADV + r"(?:hate|dislike|can't stand|cannot stand|detest)\s+" + _V + _END,
     "{S} dislikes {v}", "preference"),
    (_I_AM + r"(?:an?\s+)?(?:strict\s+)?(?P<w>vegetarian|vegan|pescatarian|pescetarian|flexitarian)" + _END,
     "{S} is {w}", "preference"),
    (r"^i (?:eat|follow|am on|'m on|keep)\s+(?:an?\s+)?(?P<w>keto|paleo|vegan|vegetarian|low-carb|gluten-free|halal|kosher|mediterranean) diet" + _END,
     "{S} follows a {w} diet", "preference"),
    (r"^i (?:eat|keep) (?P<w>halal|kosher)" + _END, "{S} follows a {w} diet", "preference"),
    (_I_AM + r"(?P<w>lactose intolerant|lactose-intolerant|gluten intolerant|coeliac|celiac|diabetic|colou?r ?blind|left-handed|right-handed)" + _END,
     "{S} is {w}", "fact"),
    (r"^i " + _ADV + r"(?P<w>prefer|love|like|enjoy|adore)\s+" + _V + _END, "{S} {w3} {v}", "preference"),
    (r"^i (?:(?:currently|still|now)\s+)*(?:live|reside|am living|'m living)\s+in\s+" + _V + _END,
     "{S} lives in {v}", "fact"),
    (r"^i(?:'ve| have)?\s+(?:(?:just|recently|finally)\s+)*(?:moved|relocated)\s+(?:to|into)\s+" + _V + _END,
     "{S} lives in {v}", "fact"),
    (_I_AM + r"(?:based|living) in\s+" + _V + _END, "{S} lives in {v}", "fact"),
    (_I_AM + r"(?:originally\s+)?from\s+" + _V + _END, "{S} is from {v}", "fact"),
    (r"^i grew up in\s+" + _V + _END, "{S} grew up in {v}", "fact"),
    (r"^i was born in\s+(?P<v>(?:[12]\d{3}|(?-i:[A-Z])).{0,60}?)" + _END, "{S} was born in {v}", "fact"),
    (r"^i was born on\s+" + _V + _END, "{S} was born on {v}", "fact"),
    (r"^i (?:(?:currently|still|now)\s+)*(?:work|am working|'m working)\s+(?P<w>at|for)\s+" + _V + _END,
     "{S} works {w} {v}", "fact"),
    (r"^i (?:(?:currently|still|now)\s+)*work as\s+(?:an?\s+)?" + _V + _END, "{S} works as {a} {v}", "fact"),
    (_I_AM + r"(?:an?\s+)(?P<v>(?:[\w-]+\s+){0,2}?(?:" + _PROFESSIONS + r"))" + _END,
     "{S} is {a} {v}", "fact"),
    (_I_AM + r"(?P<w>retired|unemployed|self-employed)" + _END, "{S} is {w}", "fact"),
    (_I_AM + r"(?P<v>\d{1,3})(?:\s+(?:years?|yrs?)\s+old)?" + _END, "{S} is {v} years old", "fact"),
    (r"^i (?:just\s+)?turned\s+(?P<v>\d{1,3})" + _END, "{S} is {v} years old", "fact"),
    (_I_AM + r"(?P<w>married|single|divorced|engaged|widowed)" + _END, "{S} is {w}", "fact"),
    (_I_AM + r"(?P<w>married|engaged) to\s+(?P<v>" + _NAME + r")" + _END, "{S} is {w} to {v}", "fact"),
    (_I_AM + r"(?:a\s+(?:big|huge)\s+)?fan of\s+" + _V + _END, "{S} is a fan of {v}", "preference"),
    (r"^i " + _ADV + r"(?:have|'ve got|have got|own)\s+(?P<v>(?:an?|one|two|three|four|five|six|\d+)\s+(?!(?:" + _TRANSIENT + r")\b).{2,100}?)" + _END,
     "{S} has {v}", "fact"),
    (r"^i " + _ADV + r"(?:speak|am fluent in|'m fluent in)\s+" + _V + _END, "{S} speaks {v}", "fact"),
    (r"^i " + _ADV + r"(?P<w>" + _HABITS + r")\s+" + _V + _END, "{S} {w3} {v}", "fact"),
    (r"^my\s+(?P<np>(?:[\w-]+(?:'s)?\s+){0,2}?[\w-]+)\s+(?P<w>is|are|has|have|lives in|works at|works as|works for|expires|expires on|expire|is called|loves|likes|hates)\s+" + _V + _END,
     "{S}'s {np} {w} {v}", "fact"),
]  # fmt: skip
RULES: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(pattern, re.I), template, kind) for pattern, template, kind in _RULE_TABLE
]

_QUOTED = re.compile('"[^"]*"|\u201c[^\u201d]*\u201d')
_SENTENCE = re.compile("(?<=[.!?])\\s+|\\n+|;\\s*|\\s+[-\u2013\u2014]\\s+")
_CLAUSE = re.compile(
    r"\s*,?\s*\b(?:and|but|plus|also|so|although|though|while|whereas)\s+(?=(?:also\s+)?(?:i|i'm|im|i've|my)\b)"
    r"|\s*,\s*(?=(?:i|i'm|i've|my)\b)",
    re.I,
)
_PREFIX = re.compile(
    r"^(?:(?:hi|hello|hey|oh|ok|okay|well|so|also|actually|btw|by the way|fyi|just so you know|"
    r"for the record|for context|quick update|update|big news|news|correction|sorry|wait|no wait|"
    r"no|yes|yeah|yep|and|but|plus|anyway|as you know|note that|please note that|remember that|"
    r"please remember that|remember|keep in mind that|don't forget that|"
    r"good news|fun fact|honestly|to be honest|these days|nowadays|currently|since last \w+|"
    r"as of (?:today|now|last \w+)|from now on|these days|lately|"
    r"thanks|thank you|great|cool|nice|perfect|sure|right|i mean|i meant|"
    r"(?:ah|oh),? (?:and|also)|sorry,? i meant)\b[\s,:!.-]*)+",
    re.I,
)
# A clause about what might be, or an invitation to imagine: no fact about the user.
_HYPOTHETICAL = re.compile(
    r"\b(?:if|would|wish|imagine|suppose|supposing|maybe|might|perhaps|could|should|"
    r"i'd|pretend|hypothetically|someday|one day|thinking (?:about|of)|considering|"
    r"plan(?:ning)? to|going to|gonna|want to|wanna|hope to|hoping to|in a story|my character|"
    r"what if|let's say|dream of|dreaming of|unless)\b",
    re.I,
)
_HEARSAY = re.compile(
    r"\b(?:says?|said|thinks?|thought|told me|tells me|claims?|claimed|believes?|mentioned|"
    r"according to|asked me|wants me|insists?)\b",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no longer|don't|dont|doesn't|didn't|isn't|aren't|wasn't|can't|"
    r"cannot|won't|nor|neither|any ?more)\b|n't\b",
    re.I,
)
_TRAILING = re.compile(
    r"(?:[\s,]+(?:now|right now|these days|nowadays|at the moment|currently|anymore|any more|"
    r"too|as well|though|actually|lol|haha|please|by the way|btw|thanks|thank you|ok|okay|"
    r"you know|right|by now|already|honestly|instead|since then|again|"
    r"for (?:a|the) (?:while|long time)|now actually|from now on|since last \w+|"
    r"last (?:week|month|year|summer|winter|spring|autumn|fall|night)|yesterday|today|"
    r"recently|(?:a|one|two|three|\d+|a few|a couple of) (?:days?|weeks?|months?|years?) ago|"
    r"this (?:week|month|year|summer|winter|spring|autumn|fall)|earlier this \w+|"
    r"as of (?:today|now|last \w+|this \w+)))+$",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|you're)\b", re.I)
_PRONOUN_VALUES = frozenset(
    {"it", "that", "this", "them", "those", "these", "you", "him", "her", "one", "both", "all"}
)


def rule_statements(
    messages: list[dict[str, object]], *, subject: str = DEFAULT_SUBJECT
) -> list[Statement]:
    """Explicit statements in user messages, one per clause, about ``subject`` (the user).

    A message is cut into sentences and each sentence into clauses at a conjunction that
    starts a new first-person clause ("... peanuts and I prefer ..." is two). Questions,
    hypotheticals ("if I were ..."), what other people say ("my sister says ...") and
    negations (beyond "I don't eat ..." and "I don't like ...") give nothing.
    """
    found: list[Statement] = []
    for index, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            continue
        for clause in user_clauses(content):
            statement = clause_statement(clause, subject=subject)
            if statement is not None:
                found.append(
                    Statement(statement.text, statement.kind, statement.slot, message_index=index)
                )
    return found


def user_clauses(content: str) -> list[str]:
    """The clauses of a user message that may state a fact (questions and quotes left out)."""
    clauses: list[str] = []
    content = _QUOTED.sub(" ", content[:4000].replace("\u2019", "'"))
    for sentence in _SENTENCE.split(content):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        stripped = _strip_prefix(sentence)
        if re.match(
            r"(?:if|suppose|imagine|hypothetically|let's say|pretend|what if)\b",
            stripped,
            re.I,
        ):
            continue
        if _HEARSAY.search(stripped):
            continue
        for part in _CLAUSE.split(stripped):
            part = _strip_prefix(part.strip(" ,.!"))
            if part:
                clauses.append(part)
    return clauses


_CONTRAST = re.compile(
    r"(?:,\s*|\s+(?:and|but)\s+)not\s+(?:in\s+|at\s+|to\s+|for\s+)?[\w' -]+$", re.I
)
# Capitalised words after "I'm" that are not names.
_NOT_NAMES = frozenset(
    [
        "vegetarian",
        "vegan",
        "married",
        "single",
        "retired",
        "fine",
        "good",
        "okay",
        "ok",
        "back",
        "here",
        "ready",
        "sorry",
        "busy",
        "tired",
        "happy",
        "allergic",
        "new",
        "done",
        "home",
        "hungry",
        "sure",
        "glad",
        "excited",
        "bored",
        "sick",
        "pregnant",
        "english",
        "american",
        "british",
        "french",
        "german",
        "spanish",
        "portuguese",
        "italian",
        "irish",
        "canadian",
    ]
)
_TRANSIENT_HEADS = frozenset(_TRANSIENT.replace("favou?r", "favour").split("|")) | {
    "train", "order", "bag", "luggage", "bus", "taxi", "room", "table", "ticket", "package",
    "parcel", "delivery", "car", "laptop", "phone", "computer", "internet", "wifi", "battery",
}  # fmt: skip


def clause_statement(clause: str, *, subject: str = DEFAULT_SUBJECT) -> Statement | None:
    """The statement one clause makes about the user, or None."""
    if _HYPOTHETICAL.search(clause):
        return None
    clause = _trim(clause)
    # "I live in Porto, not Lisbon": the contrast confirms the statement, it does not negate it.
    without = _CONTRAST.sub("", clause)
    if without != clause and not _NEGATION.search(without):
        clause = without
    for pattern, template, kind in RULES:
        match = pattern.match(clause)
        if match is None:
            continue
        groups = match.groupdict()
        if "name is {v}" in template and groups["v"].split()[0].lower() in _NOT_NAMES:
            continue
        if groups.get("np") and groups["np"].split()[-1].lower() in _TRANSIENT_HEADS:
            return None
        negative = "{w} {v}" in template and "not" in template
        if not negative and "dislikes" not in template and _NEGATION.search(clause):
            return None
        value = clean_value(groups["v"]) if groups.get("v") is not None else ""
        if groups.get("v") is not None and (not value or value.lower() in _PRONOUN_VALUES):
            return None
        word = (groups.get("w") or "").lower()
        text = template.format(
            S=subject,
            v=value,
            w=word,
            w3=_THIRD_PERSON.get(word, word),
            np=_third_person_value(groups.get("np") or "", subject),
            a="an" if value[:1].lower() in "aeiou" else "a",
        )
        text = _tidy(text)
        if quality_problem(text) is not None:
            return None
        return Statement(text, kind, infer_slot(text, subject=subject))
    return None


def clean_value(value: str) -> str:
    """A value without trailing fillers ("now", "these days"), punctuation or first person."""
    value = value.strip(" \t,.;:!'\"\u201c\u201d")
    value = re.sub(r"[\U0001F000-\U0001FFFF\u2600-\u27BF]", "", value).strip()
    previous = None
    while previous != value:
        previous = value
        value = _TRAILING.sub("", value).strip(" ,.;:!")
    value = re.sub(r"\bmy\b", "their", value, flags=re.I)
    value = re.sub(r"\b(?:me|myself)\b", "them", value, flags=re.I)
    return value


def _third_person_value(value: str, subject: str) -> str:
    return re.sub(r"\bmy\b", "their", value, flags=re.I)


def _trim(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _TRAILING.sub("", text).strip(" ,.;:!")
    return text


def _strip_prefix(text: str) -> str:
    return _PREFIX.sub("", text.strip()).strip()


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
        text = f"{subject} {_THIRD_PERSON.get(verb, verb)} {' '.join(text.split()[2:])}"
    elif _LEADING_SUBJECT.match(text):
        text = _LEADING_SUBJECT.sub(subject, text, count=1)
    elif _SUBJECTLESS.match(text):
        text = f"{subject} {text[:1].lower()}{text[1:]}"
    elif subject != DEFAULT_SUBJECT and text.lower().startswith(subject.lower() + " "):
        text = subject + text[len(subject) :]
    text = _INNER_FILLER.sub("", text)
    previous = None
    while previous != text:
        previous = text
        text = _TRAILING.sub("", text).strip(" ,.;:!")
    name = re.match(rf"^{re.escape(_possessive(subject))} name is (.+)$", text, re.I)
    if name:
        text = f"The user's name is {name.group(1)}"
    return _tidy(text)


def split_statement(text: str) -> list[str]:
    """A candidate cut where a first-person clause starts ("... peanuts and I prefer ...")."""
    parts = _CLAUSE.split(str(text).replace("\u2019", "'"))
    return [part.strip(" ,.") for part in parts if part.strip(" ,.")]


def _possessive(subject: str) -> str:
    return subject + ("'" if subject.endswith("s") and subject != DEFAULT_SUBJECT else "'s")


def quality_problem(text: str) -> str | None:
    """Why a normalised statement must not be stored, or None (the quality gate)."""
    if not text or len(text.split()) < 3:
        return "too short"
    if len(text) > MAX_STATEMENT_CHARS:
        return "too long"
    if text.rstrip().endswith("?"):
        return "a question"
    if _FIRST_PERSON.search(text.replace("The user", "").replace("the user", "")):
        return "first person left in (a clause not split, or not about the user)"
    if _SECOND_PERSON.search(text):
        return "about the assistant"
    if re.match(r"^(?:if|would|maybe|perhaps|might|could|should)\b", text, re.I):
        return "hypothetical"
    if re.search(r"\b(?:the assistant|assistant)\b", text, re.I):
        return "about the assistant"
    if re.search(r"\b(?:anything|nothing|something|everything)$", text, re.I):
        return "vague"
    return None


_SLOT_PATTERNS: list[tuple[str, str]] = [
    (r"^the user's name is\b", "name"),
    (r"^{S} (?:lives|resides) in\b", "location"),
    (r"^{S} works (?:at|for)\b", "employer"),
    (r"^{S} works as\b", "job"),
    (r"^{S} is an? (?:(?:[\w-]+\s+){0,2}?(?:" + _PROFESSIONS + r"))$", "job"),
    (r"^{S} is (?:retired|unemployed|self-employed)$", "job"),
    (r"^{S} is (?:an? )?(?:vegetarian|vegan|pescatarian|pescetarian|flexitarian)$", "diet"),
    (r"^{S} follows an? [\w-]+ diet$", "diet"),
    (r"^{S} is \d{1,3} years old$", "age"),
    (r"^{S} was born on\b", "birthday"),
    (r"^{POS} birthday is\b", "birthday"),
    (r"^{S} was born in\b", "birthplace"),
    (r"^{S} is (?:married|single|divorced|engaged|widowed)\b", "marital"),
    (r"^{S} is allergic to\b", "allergy"),
    (r"^{POS} (favou?rite [\w-]+(?: [\w-]+)?) is\b", "{1}"),
    (r"^{POS} ((?:[\w-]+(?:'s)? )?(?:name|phone number|email|email address|address)) is\b", "{1}"),
]


def infer_slot(text: str, *, subject: str = DEFAULT_SUBJECT) -> str:
    """The attribute a statement sets (``location`` for "... lives in Porto"), or ""."""
    subjects = "|".join(re.escape(s) for s in dict.fromkeys([subject, DEFAULT_SUBJECT]))
    s_part = f"(?:{subjects})"
    pos_part = f"(?:{'|'.join(re.escape(_possessive(s)) for s in dict.fromkeys([subject, DEFAULT_SUBJECT]))})"
    for pattern, slot in _SLOT_PATTERNS:
        match = re.match(pattern.replace("{S}", s_part).replace("{POS}", pos_part), text, re.I)
        if match:
            if slot == "{1}":
                return normalise_text(match.group(1)).replace("favorite", "favourite")
            return slot
    return ""


def is_single_valued(slot: str) -> bool:
    """True when a new value of ``slot`` replaces the old one (a favourite, a phone number...)."""
    return (
        slot in SINGLE_VALUED_SLOTS
        or slot.startswith("favourite ")
        or (bool(slot) and slot.split()[-1] in {"name", "number", "email", "address"})
    )


def canonical(text: str, *, subject: str = DEFAULT_SUBJECT) -> str:
    """The statement with its subject replaced by "@": one key for "Ada ..." and "The user ..."."""
    normal = normalise_text(text).strip(" .")
    for name in dict.fromkeys([subject, DEFAULT_SUBJECT]):
        low = normalise_text(name)
        if normal.startswith(low + " ") or normal.startswith(low + "'s "):
            return "@" + normal[len(low) :]
    return normal


def content_terms(text: str, *, subject: str = DEFAULT_SUBJECT) -> set[str]:
    """The stemmed terms of a statement without its subject (what it says about the user)."""
    return set(normalise_terms(canonical(text, subject=subject).lstrip("@")))


def similarity(a: str, b: str, *, subject: str = DEFAULT_SUBJECT) -> float:
    """Jaccard similarity of two statements' content terms (0..1)."""
    first, second = content_terms(a, subject=subject), content_terms(b, subject=subject)
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)
