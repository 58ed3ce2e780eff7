"""The natural-conversation set: fed through ``turn_add``, scored on what memory serves.

The set (``conversations.jsonl`` beside this file, schema in bench/README.md) is written by hand in
several languages. Each conversation is fed, one user message and its reply per ``turn_add``,
into a fresh namespace with the offline learner; then, from another session of that namespace,
each question is asked of ``fact_recall`` (top 5) and ``prompt_build``. What is scored:

- current: a fact holding every answer term is in the top 5 and in the prompt's memories;
- stale: no fact recalled or rendered for the question serves the old value as current (and a
  change is followed when, besides, the new value is served: a learner that stores nothing
  serves no stale value, but follows no change);
- never: no fact, current or superseded, holds what must never be stored;
- the namespace's active facts, each classified as true (an expected fact), stale (an old value
  still active), forbidden (a "never" item) or invented (matches nothing expected):
  extraction precision is true / active, the invented rate invented / active.

Scoring reads only the texts that memory returns, never the learner's code or metadata, so the
same set measures any learner.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "conversations.jsonl"
CATEGORIES = (
    "plain",
    "relocation",
    "job",
    "contact",
    "reversal",
    "addition",
    "correction",
    "others",
    "never",
)
NAMESPACE_PREFIX = "bench-natural-"
TOP_K = 5
PROMPT_TOKENS = 2000
# The targets (issue 35, part 4).
TARGETS = {"current": 0.9, "stale_ok": 0.95, "invented": 0.02, "precision": 0.9}

# A fact holding the old value with one of these says it is past or negated ("no longer lives
# in Paris", "бросил курить", "不再喝咖啡"): true now, so not the old value served as current. A
# stale item's own "unless" list replaces these. All languages apply to every fact, since a
# learner may write a Russian conversation's facts in English. Each is a whole word or phrase
# (a trailing "*": a stem, any ending); Chinese and Japanese ones match anywhere.
PAST_MARKERS = (
    # English
    "no longer",
    "not",
    "never",
    "no",
    "don't",
    "doesn't",
    "isn't",
    "aren't",
    "wasn't",
    "didn't",
    "won't",
    "anymore",
    "any more",
    "used to",
    "formerly",
    "previously",
    "former",
    "before",
    "moved from",
    "left",
    "quit*",
    "stopped",
    "gave up",
    "instead of",
    "was",
    "were",
    "ex-",
    # Russian
    "больше не",
    "уже не",
    "не",
    "раньше",
    "прежде",
    "бывш*",
    "прежн*",
    "бросил*",
    "ушёл",
    "ушел",
    "ушла",
    "вместо",
    "был",
    "была",
    "были",
    # German
    "nicht mehr",
    "nicht",
    "kein*",
    "früher",
    "ehemalig*",
    "vorher",
    "aufgehört",
    "gekündigt",
    "statt",
    "war",
    "waren",
    # Spanish
    "ya no",
    "antes",
    "dejé",
    "dejó",
    "en vez de",
    "era",
    "fui",
    # French
    "ne",
    "n'",
    "plus",
    "avant",
    "ancien*",
    "au lieu de",
    "étais",
    "était",
    # Japanese
    "以前",
    "前は",
    "もう",
    "やめ",
    "ではな",
    "じゃな",
    "ません",
    # Chinese
    "不再",
    "不",
    "没",
    "以前",
    "之前",
    "原来",
    "曾经",
    "戒",
    "离开",
    "辞职",
)

_CJK_RANGES = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_RANGES}]")
# Not after a letter or digit of a spaced script (a CJK character before a term is a boundary).
_WORD_START = f"(?<![^\\W{_CJK_RANGES}])"


class SetError(ValueError):
    """A line of the set breaks the schema; the message names the line and the field."""


def _fold(text: str) -> str:
    return text.casefold().replace("\u0451", "\u0435")  # Russian yo is often written as ye


def term_in(term: str, text: str) -> bool:
    """Whether ``term`` occurs in ``text``, case-insensitively.

    A term starting with a letter or digit of a spaced script must start a word ("Kazan"
    matches "Kazan's", "Казан" matches "Казани", "cat" does not match "education"); one ending
    in a digit must not be followed by another ("June 5" does not match "June 15"). Chinese and
    Japanese have no word boundaries, so their terms match anywhere, and a term after a CJK
    character starts a word ("36" in "我36了").
    """
    folded, needle = _fold(text), _fold(term.strip())
    if not needle:
        return False
    left = _WORD_START if re.match(r"\w", needle) and not _CJK.match(needle) else ""
    right = r"(?!\d)" if needle[-1].isdigit() else ""
    return re.search(left + re.escape(needle) + right, folded) is not None


def holds(terms: Sequence[str], text: str) -> bool:
    """Whether ``text`` holds every term (a term lists alternatives separated by ``|``)."""
    return bool(terms) and all(
        any(term_in(option, text) for option in term.split("|")) for term in terms
    )


def word_in(word: str, text: str) -> bool:
    """Whether the whole word or phrase ``word`` occurs in ``text`` ("not" is not in "notes",
    "ne" not in "phone"); a trailing ``*`` makes it a stem, and Chinese and Japanese words
    match anywhere."""
    stem = word.endswith("*")
    needle = _fold(word.rstrip("*").strip())
    if not needle:
        return False
    left = _WORD_START if re.match(r"\w", needle) and not _CJK.match(needle) else ""
    spaced_end = re.search(r"\w$", needle) is not None and not _CJK.search(needle[-1])
    right = r"(?!\w)" if spaced_end and not stem else ""
    return re.search(left + re.escape(needle) + right, _fold(text)) is not None


def any_in(words: Iterable[str], text: str) -> bool:
    """Whether any of ``words`` (``word_in``) occurs in ``text``."""
    return any(word_in(word, text) for word in words)


# Loading.


def load(
    path: Path = DATA,
    *,
    ids: Iterable[str] = (),
    languages: Iterable[str] = (),
    categories: Iterable[str] = (),
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The conversations of ``path``, checked, filtered (each filter empty: all), at most
    ``limit`` of them per language in file order. ``SetError`` names a bad line."""
    wanted_ids, wanted_langs, wanted_cats = set(ids), set(languages), set(categories)
    conversations: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            conv = json.loads(line)
        except json.JSONDecodeError as error:
            raise SetError(f"{path.name}:{number}: not JSON ({error})") from error
        check(conv, where=f"{path.name}:{number}")
        if conv["id"] in seen:
            raise SetError(f"{path.name}:{number}: id {conv['id']!r} repeated")
        seen.add(conv["id"])
        conversations.append(conv)
    unknown = wanted_ids - seen
    if unknown:
        raise SetError(f"no conversation with id {', '.join(sorted(unknown))}")
    chosen = [
        conv
        for conv in conversations
        if (not wanted_ids or conv["id"] in wanted_ids)
        and (not wanted_langs or conv["lang"] in wanted_langs)
        and (not wanted_cats or conv["category"] in wanted_cats)
    ]
    if limit is not None:
        per_language: dict[str, int] = {}
        kept = []
        for conv in chosen:
            per_language[conv["lang"]] = per_language.get(conv["lang"], 0) + 1
            if per_language[conv["lang"]] <= limit:
                kept.append(conv)
        chosen = kept
    return chosen


def check(conv: Any, *, where: str) -> None:
    """Raise ``SetError`` unless ``conv`` follows the schema of bench/README.md."""

    def fail(message: str) -> None:
        raise SetError(f"{where}: {message}")

    if not isinstance(conv, dict):
        fail("a conversation is a JSON object")
    for key, kind in (("id", str), ("lang", str), ("category", str), ("turns", list)):
        if not isinstance(conv.get(key), kind):
            fail(f"{key!r} missing or not a {kind.__name__}")
    if conv["category"] not in CATEGORIES:
        fail(f"category {conv['category']!r} is not one of {', '.join(CATEGORIES)}")
    turns = conv["turns"]
    if not 2 <= len(turns) <= 8:
        fail(f"{len(turns)} turns; a conversation has 2 to 8")
    for n, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("role") not in {"user", "assistant"}:
            fail(f"turn {n}: role must be user or assistant")
        if not isinstance(turn.get("content"), str) or not turn["content"].strip():
            fail(f"turn {n}: content must be non-empty text")
    if turns[0]["role"] != "user":
        fail("the first turn is the user's")

    def terms(value: Any, what: str) -> None:
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(t, str) and t.strip("| ") for t in value)
        ):
            fail(f"{what}: a non-empty list of non-empty strings")

    current_ids: set[str] = set()
    for item in conv.get("current", []):
        if not isinstance(item.get("id"), str) or not isinstance(item.get("question"), str):
            fail("a current item has an 'id' and a 'question'")
        terms(item.get("answer"), f"current {item['id']!r} answer")
        current_ids.add(item["id"])
    for item in conv.get("stale", []):
        terms(item.get("value"), f"stale {item.get('id')!r} value")
        linked, question = item.get("current"), item.get("question")
        if (linked is None) == (question is None):
            fail(f"stale {item.get('id')!r}: give either 'current' or 'question'")
        if linked is not None and linked not in current_ids:
            fail(f"stale {item.get('id')!r}: no current item {linked!r}")
        if "unless" in item:
            terms(item["unless"], f"stale {item.get('id')!r} unless")
        if not isinstance(item.get("past_markers", True), bool):
            fail(f"stale {item.get('id')!r}: past_markers is true or false")
    for item in conv.get("never", []):
        terms(item.get("terms"), f"never {item.get('id')!r} terms")
        if "unless" in item:
            terms(item["unless"], f"never {item.get('id')!r} unless")
    for n, item in enumerate(conv.get("allowed", [])):
        terms(item, f"allowed {n}")
    if not conv.get("current") and not conv.get("stale") and not conv.get("never"):
        fail("nothing to check: give current, stale or never items")


# Classification of one text against one conversation's expectations.


def serves_stale(conv: dict[str, Any], stale: dict[str, Any], text: str) -> bool:
    """Whether ``text`` states ``stale``'s old value as current: it holds the value, and neither
    the value replacing it (its linked current item: "moved from Paris to Berlin") nor a word
    saying it is past or negated (``PAST_MARKERS``, unless the item sets ``past_markers`` false,
    and the item's own ``unless`` words)."""
    if not holds(stale["value"], text):
        return False
    linked = next((c for c in conv.get("current", []) if c["id"] == stale.get("current")), None)
    if linked is not None and holds(linked["answer"], text):
        return False
    if stale.get("past_markers", True) and any_in(PAST_MARKERS, text):
        return False
    return not any(term_in(word, text) for word in stale.get("unless", ()))


def breaks_never(item: dict[str, Any], text: str) -> bool:
    """Whether ``text`` stores what ``item`` says must never be stored (its ``unless`` words
    mark the same words legitimately said of someone else)."""
    return holds(item["terms"], text) and not any(
        term_in(word, text) for word in item.get("unless", ())
    )


def classify(conv: dict[str, Any], text: str) -> str:
    """An active fact's class, the first that applies: "forbidden" (breaks a never item),
    "true" (holds a current item's answer), "stale" (serves an old value), "true" (holds an
    old value said as past, or an allowed item: true but not asked about), else "invented"."""
    if any(breaks_never(item, text) for item in conv.get("never", [])):
        return "forbidden"
    if any(holds(item["answer"], text) for item in conv.get("current", [])):
        return "true"
    if any(serves_stale(conv, item, text) for item in conv.get("stale", [])):
        return "stale"
    if any(holds(item["value"], text) for item in conv.get("stale", [])):
        return "true"  # the old value said as past ("no longer lives in Paris"): history
    if any(holds(terms, text) for terms in conv.get("allowed", [])):
        return "true"
    return "invented"


def memory_lines(section: str) -> list[str]:
    """The memories rendered in a prompt's ``memories`` section, each as its text."""
    texts = []
    for line in section.splitlines():
        line = line.strip()
        if not line.startswith("- "):
            continue
        body = line[2:]
        match = re.match(r'("(?:[^"\\]|\\.)*")', body)
        if match:
            try:
                texts.append(str(json.loads(match.group(1))))
                continue
            except json.JSONDecodeError:
                pass
        texts.append(body)
    return texts


# Scores.


@dataclass
class Score:
    """Counts over some conversations; the rates are computed from them."""

    conversations: int = 0
    current: int = 0
    current_stored: int = 0  # an active fact holds the answer (learned; served or not)
    current_top5: int = 0
    current_prompt: int = 0
    current_ok: int = 0
    stale: int = 0
    stale_ok: int = 0
    stale_active: int = 0
    stale_in_chain: int = 0
    changes: int = 0
    changes_followed: int = 0
    never: int = 0
    never_ok: int = 0
    active: int = 0
    true: int = 0
    stale_facts: int = 0
    forbidden: int = 0
    invented: int = 0

    def add(self, other: Score) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def rates(self) -> dict[str, float | None]:
        def rate(part: int, whole: int) -> float | None:
            return round(part / whole, 4) if whole else None

        return {
            "current_stored": rate(self.current_stored, self.current),
            "current_top5": rate(self.current_top5, self.current),
            "current_prompt": rate(self.current_prompt, self.current),
            "current": rate(self.current_ok, self.current),
            "stale_ok": rate(self.stale_ok, self.stale),
            "changes_followed": rate(self.changes_followed, self.changes),
            "never_ok": rate(self.never_ok, self.never),
            "precision": rate(self.true, self.active),
            "invented": rate(self.invented, self.active),
        }

    def as_dict(self) -> dict[str, Any]:
        counts = {name: getattr(self, name) for name in self.__dataclass_fields__}
        return {**counts, "rates": self.rates()}


@dataclass
class Result:
    """One conversation's score and what went wrong in it (for ``--errors``)."""

    id: str
    lang: str
    category: str
    score: Score
    facts: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "lang": self.lang,
            "category": self.category,
            "score": self.score.as_dict(),
            "facts": self.facts,
            "failures": self.failures,
            "seconds": round(self.seconds, 3),
        }


def namespace_of(conv: dict[str, Any]) -> str:
    return NAMESPACE_PREFIX + conv["id"]


FACTS_FROM = ("learner", "turns")


def feed(conv: dict[str, Any], *, namespace: str, facts_from: str = "learner") -> None:
    """The conversation through ``turn_add``, one user message (and the replies after it) per
    call, in one session: the way an agent loop stores and learns.

    ``facts_from="turns"`` is a reference, not a learner: nothing is learned and every user
    message is remembered verbatim (``fact_remember``), so what recall finds can be told apart
    from what learning stored, and the stale check is seen firing on old values kept as said.
    """
    from ttmemory import memory

    if facts_from not in FACTS_FROM:
        raise ValueError(f"facts_from {facts_from!r}: one of {', '.join(FACTS_FROM)}")
    learn = facts_from == "learner"
    session = memory.session_open(namespace=namespace, key="told")
    turn: list[dict[str, Any]] = []
    for message in conv["turns"]:
        if message["role"] == "user" and turn:
            memory.turn_add(session=session, messages=turn, learn=learn)
            turn = []
        turn.append({"role": message["role"], "content": message["content"]})
        if not learn and message["role"] == "user":
            memory.fact_remember(namespace=namespace, text=message["content"])
    if turn:
        memory.turn_add(session=session, messages=turn, learn=learn)


def score(conv: dict[str, Any], *, namespace: str) -> Result:
    """Score what memory holds and serves for ``conv`` in ``namespace`` (fed already)."""
    from ttmemory import memory
    from ttmemory.selectors import fact_list

    result = Result(id=conv["id"], lang=conv["lang"], category=conv["category"], score=Score())
    s = result.score
    s.conversations = 1
    later = memory.session_open(namespace=namespace, key="asked-later")
    served: dict[str, tuple[list[str], list[str]]] = {}

    def ask(question: str) -> tuple[list[str], list[str]]:
        if question not in served:
            recalled = memory.fact_recall(namespace=namespace, query=question, k=TOP_K)
            prompt = memory.prompt_build(session=later, query=question, max_tokens=PROMPT_TOKENS)
            served[question] = (
                [fact.text for fact in recalled.facts[:TOP_K]],
                memory_lines(prompt.sections.get("memories", "")),
            )
        return served[question]

    facts = fact_list(namespace=namespace, include_superseded=True)
    active = [f.text for f in facts if f.superseded_by_id is None and f.valid_to is None]
    past = [f.text for f in facts if f.superseded_by_id is not None or f.valid_to is not None]
    served_now: dict[str, bool] = {}
    for item in conv.get("current", []):
        s.current += 1
        s.current_stored += any(holds(item["answer"], text) for text in active)
        top, prompt = ask(item["question"])
        in_top = any(holds(item["answer"], text) for text in top)
        in_prompt = any(holds(item["answer"], text) for text in prompt)
        s.current_top5 += in_top
        s.current_prompt += in_prompt
        s.current_ok += in_top and in_prompt
        served_now[item["id"]] = in_top and in_prompt
        if not (in_top and in_prompt):
            result.failures.append(
                f"current {item['id']}: {item['question']!r} wants {item['answer']}; "
                f"top {TOP_K} {top}; prompt {prompt}"
            )

    questions = {item["id"]: item["question"] for item in conv.get("current", [])}
    for item in conv.get("stale", []):
        s.stale += 1
        question = item.get("question") or questions[item["current"]]
        top, prompt = ask(question)
        wrong = [text for text in {*top, *prompt} if serves_stale(conv, item, text)]
        s.stale_ok += not wrong
        if "current" in item:  # a change: followed when the new value is served, the old not
            s.changes += 1
            s.changes_followed += served_now[item["current"]] and not wrong
        s.stale_active += any(serves_stale(conv, item, text) for text in active)
        s.stale_in_chain += any(holds(item["value"], text) for text in past)
        if wrong:
            result.failures.append(
                f"stale {item['id']}: {question!r} served {sorted(wrong)} as current"
            )
    for item in conv.get("never", []):
        s.never += 1
        stored = [text for text in active + past if breaks_never(item, text)]
        s.never_ok += not stored
        if stored:
            result.failures.append(f"never {item['id']} ({item['why']}): stored {stored}")
    for text in active:
        kind = classify(conv, text)
        s.active += 1
        s.true += kind == "true"
        s.stale_facts += kind == "stale"
        s.forbidden += kind == "forbidden"
        s.invented += kind == "invented"
        result.facts.append({"text": text, "class": kind})
        if kind == "invented":
            result.failures.append(f"invented: {text!r}")
    result.facts += [{"text": text, "class": "superseded"} for text in past]
    return result


def run_one(conv: dict[str, Any], *, keep: bool = False, facts_from: str = "learner") -> Result:
    """Feed and score one conversation in its own fresh namespace (erased before and, unless
    ``keep``, after)."""
    from ttmemory import memory

    namespace = namespace_of(conv)
    memory.namespace_erase(namespace=namespace)
    started = time.perf_counter()
    try:
        feed(conv, namespace=namespace, facts_from=facts_from)
        result = score(conv, namespace=namespace)
    finally:
        if not keep:
            memory.namespace_erase(namespace=namespace)
    result.seconds = time.perf_counter() - started
    return result


def offline_settings() -> dict[str, Any]:
    """The project's TTMEMORY with what this bench needs fixed: the offline learner (no LLM),
    the default embedder, learning inline at each ``turn_add`` and nothing learned or
    summarised behind its back."""
    from django.conf import settings

    configured = dict(getattr(settings, "TTMEMORY", {}))
    configured.pop("EMBEDDER", None)
    return {
        **configured,
        "LLM": None,
        "JOBS": "inline",
        "LEARN_EVERY": 0,
        "LEARN_IDLE_SECONDS": 0,
        "SUMMARISE_AT_TOKENS": 0,
    }


def run(
    conversations: Sequence[dict[str, Any]],
    *,
    keep: bool = False,
    facts_from: str = "learner",
    progress: Callable[[str], None] | None = None,
) -> list[Result]:
    """Every conversation through ``run_one`` under ``offline_settings()``, in order."""
    from django.test.utils import override_settings

    results = []
    with override_settings(TTMEMORY=offline_settings()):
        for n, conv in enumerate(conversations, start=1):
            result = run_one(conv, keep=keep, facts_from=facts_from)
            results.append(result)
            if progress is not None:
                s = result.score
                progress(
                    f"[{n}/{len(conversations)}] {conv['id']}: current {s.current_ok}/{s.current}"
                    f", stale ok {s.stale_ok}/{s.stale}, never ok {s.never_ok}/{s.never}, "
                    f"facts {s.true}/{s.active} true ({result.seconds:.2f} s)"
                )
    return results


def summarise(results: Sequence[Result]) -> dict[str, Any]:
    """Totals overall, per category and per language (counts and rates)."""
    overall = Score()
    by_category: dict[str, Score] = {}
    by_language: dict[str, Score] = {}
    for result in results:
        overall.add(result.score)
        by_category.setdefault(result.category, Score()).add(result.score)
        by_language.setdefault(result.lang, Score()).add(result.score)
    return {
        "overall": overall.as_dict(),
        "by_category": {
            name: by_category[name].as_dict() for name in CATEGORIES if name in by_category
        },
        "by_language": {name: by_language[name].as_dict() for name in sorted(by_language)},
    }


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(summary: dict[str, Any], *, label: str = "") -> str:
    """The summary as a markdown table: per category, per language, overall."""
    lines = [
        f"| {label or 'group'} | convs | current stored (active) | current in top 5 | "
        "in prompt | current: both "
        "(>= 0.9) | stale not served (>= 0.95) | old value superseded | old value still "
        "active | change followed | never stored ok | active facts | invented (<= 0.02) | "
        "precision (>= 0.9) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(name: str, score: dict[str, Any]) -> str:
        rates = score["rates"]
        return (
            f"| {name} | {score['conversations']} | {_cell(rates['current_stored'])} | "
            f"{_cell(rates['current_top5'])} | "
            f"{_cell(rates['current_prompt'])} | {_cell(rates['current'])} "
            f"({score['current_ok']}/{score['current']}) | {_cell(rates['stale_ok'])} "
            f"({score['stale_ok']}/{score['stale']}) | {score['stale_in_chain']}/{score['stale']} "
            f"| {score['stale_active']}/{score['stale']} | {_cell(rates['changes_followed'])} "
            f"({score['changes_followed']}/{score['changes']}) | {_cell(rates['never_ok'])} "
            f"({score['never_ok']}/{score['never']}) | {score['active']} | "
            f"{_cell(rates['invented'])} ({score['invented']}) | {_cell(rates['precision'])} "
            f"({score['true']}) |"
        )

    for name, score in summary["by_category"].items():
        lines.append(row(name, score))
    for name, score in summary["by_language"].items():
        lines.append(row(f"lang {name}", score))
    lines.append(row("**all**", summary["overall"]))
    return "\n".join(lines)


def meets_targets(overall: dict[str, Any]) -> dict[str, bool]:
    """Which of the issue's targets ``overall`` meets (a rate with nothing to count: met)."""

    def at_least(value: float | None, target: float) -> bool:
        return value is None or value >= target

    rates = overall["rates"]
    invented = rates["invented"]
    return {
        "current": at_least(rates["current"], TARGETS["current"]),
        "stale_ok": at_least(rates["stale_ok"], TARGETS["stale_ok"]),
        "invented": invented is None or invented <= TARGETS["invented"],
        "precision": at_least(rates["precision"], TARGETS["precision"]),
    }
