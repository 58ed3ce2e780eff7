"""Learning from conversations: fact extraction (LLM or offline rules) and rolling summaries."""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Sequence
from typing import Any

from django.db.models import F, Q
from django.utils import timezone

from ttmemory import conversation, telemetry
from ttmemory.backends.llm import LLMResponse, get_llm
from ttmemory.conf import app_settings
from ttmemory.exceptions import LLMError, MemoryValidationError
from ttmemory.fields import seal
from ttmemory.longterm import blind, extraction, rulebook, slots, statements
from ttmemory.models import Fact, LedgerStatus, MemorySession, Message
from ttmemory.results import FactChange, FactChanges
from ttmemory.selectors.facts import fact_list, fact_recall, profile_get
from ttmemory.services.episodes import index_delete_archived_upto
from ttmemory.services.facts import fact_remember, fact_supersede
from ttmemory.services.gate import Change, change
from ttmemory.services.ledger import budget_left, ledger_record, llm_rate_take
from ttmemory.services.sessions import session_trim
from ttmemory.text import normalise_terms, normalise_text

logger = logging.getLogger(__name__)
# Existing facts shown to the LLM extractor: the closest by recall, then the newest.
CLOSEST_FACTS = 10
RULES_MODEL = "rules"


def facts_learn(
    *,
    namespace: str,
    messages: Sequence[dict[str, Any]],
    source: tuple[MemorySession, list[int]] | None = None,
    context: Sequence[str] = (),
) -> FactChanges:
    """Extract facts from ``messages`` and apply ADD / UPDATE / SUPERSEDE / RETRACT / NOOP.

    With ``TTMEMORY["LLM"]`` one LLM call sees the messages and the closest existing facts;
    without it, offline rules (one data file per language: English, Russian, German, Chinese,
    Spanish, French, Japanese) catch explicit first-person statements, one per clause ("I'm
    allergic to peanuts and I prefer window seats" is two facts), and leave out questions,
    hypotheticals, jokes and what other people say. Both paths then get the same
    post-processing: each fact becomes a short third-person statement about one subject (the
    ``name`` of the namespace's ``"user"`` profile when set, else "The user"), a quality gate
    rejects what is not a clean statement (counted in the result's ``rejected``, never stored),
    and each fact is deduplicated on write: the same text (under either subject) or a recalled
    neighbour saying the same thing in other words (``DEDUPE_SIMILARITY``) is a NOOP or an
    UPDATE. Memory follows change: a new value of a single-valued slot (location, employer, job,
    address, name, ...) or a reversal ("actually I prefer aisle seats now") SUPERSEDEs the old
    fact, which stays in the chain; "not anymore" / "stopped" / "left" RETRACTs it
    (``valid_to``, no successor); a move from a city never stored keeps that city as history.
    Facts about people close to the user stay theirs; ``context`` (the user's earlier messages,
    never learned from) tells the offline rules whom a pronoun means ("She moved to York" after
    "My sister Anna lives in Leeds" moves Anna). Running it twice on the same messages
    changes nothing the second time. Skipped, and the skip recorded in the ledger, when the
    namespace's daily token budget is spent. Raises LLMError when the LLM fails (tasks retry).
    See docs/memory.md.
    """
    # The LLM runs outside any transaction; each fact is written by its own service.
    with change("learn", namespace=namespace, stored=True, atomic=False, hold="allow") as gate:
        return _learn(gate.namespace, messages, source, context)


def _learn(
    namespace: str,
    messages: Sequence[dict[str, Any]],
    source: tuple[MemorySession, list[int]] | None,
    context: Sequence[str] = (),
) -> FactChanges:
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise MemoryValidationError("messages", "must be a list of message objects")
    messages = [dict(m) for m in messages if isinstance(m, dict)]
    llm = get_llm()
    if llm is None:
        candidates = extraction.rule_candidates(
            messages, context=[text for text in context if isinstance(text, str)]
        )
    else:
        left = budget_left(namespace=namespace)
        if left is not None and left <= 0:
            ledger_record(
                namespace=namespace, purpose="extract", model=llm.model, status=LedgerStatus.SKIPPED
            )
            logger.info("fact extraction skipped: daily token budget of %s is spent", namespace)
            return FactChanges()
        existing = _closest_facts(namespace, messages)
        request = extraction.extraction_messages(messages, existing, context=context)
        response = _call(
            llm.complete, request, namespace=namespace, purpose="extract", model=llm.model
        )
        try:
            candidates = extraction.parse_extraction(
                response.text, known_ids={fact_id for fact_id, _ in existing}
            )
        except ValueError as exc:
            raise LLMError(f"the extraction answer was not usable JSON: {exc}") from exc
    subject = _subject(namespace)
    prepared, rejected = _prepare(candidates, subject)
    if rejected:
        logger.info("fact extraction: the quality gate rejected %s candidates", rejected)
    changes = _apply(namespace, prepared, source, subject)
    changes.rejected = rejected
    return changes


# Two statements of one slot whose content terms have a Jaccard similarity at or above this say
# the same thing (an UPDATE, or a NOOP when the new one adds no term). Measured on the dev split
# of bench/extraction_set.jsonl (python bench/manage.py ttmemory_bench_extraction --split dev
# --sweep): 0.3 to 0.5 make no error there, 0.55 and above keep paraphrases apart ("a dog called
# Biscuit" / "a dog named Biscuit"). The highest of the tie is used: a wrong merge hides a fact,
# a missed one only leaves a duplicate.
DEDUPE_SIMILARITY = 0.5
# Neighbours recalled to look for a fact said before in other words.
DEDUPE_NEIGHBOURS = 5
# A retraction with a pattern ("quit smoking") also reads this many of the newest current facts.
RETRACT_SCANNED = 50
# A correction said in a later turn ("sorry, I meant Friday") looks this far back for the fact
# holding a value of its class.
CORRECTED_WITHIN = 5
# A correction naming the old value ("tuesday, not monday") looks for it in this many of the
# namespace's newest current facts when the session learned none holding it.
NAMED_WITHIN = 50
# The user's messages before the range learned that a pronoun in it may refer back to ("She
# moved to York" after "My sister Anna lives in Leeds", two turns earlier).
PRONOUN_CONTEXT = 3
# Current facts stored without a slot (by an LLM that named none, or an earlier release) that
# are read again for the slot of a new value: the newest ones.
UNSLOTTED_WITHIN = 200


def _subject(namespace: str) -> str:
    """Whom facts are written about: the ``"user"`` profile's ``name`` when set, else "The user"."""
    name = profile_get(namespace=namespace, kind="user").get("name")
    if isinstance(name, str) and _NAME.fullmatch(name.strip()):
        return name.strip()
    return statements.DEFAULT_SUBJECT


_NAME = re.compile(r"[^\W\d_][\w'. -]{0,39}")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def _prepare(
    candidates: list[extraction.Candidate], subject: str
) -> tuple[list[extraction.Candidate], int]:
    """Candidates as third-person statements about ``subject``, gated and slotted, deduplicated."""
    prepared: list[extraction.Candidate] = []
    seen: set[str] = set()
    rejected = 0
    for candidate in candidates:
        if candidate.action in {"NOOP", "RETRACT"} or candidate.change in {
            "retract",
            "correct",
            "deny",
            "also",
        }:
            # Not stored as said: a retraction ends facts, a correction rewrites one, an
            # addition ("too") copies one with its own value.
            prepared.append(candidate)
            continue
        # A conjunction the extractor did not split is two statements, never a mangled one.
        for part in statements.split_statement(candidate.text):
            text = statements.normalise_statement(part, subject=subject)
            if statements.quality_problem(text) is not None:
                rejected += 1
                continue
            key = statements.canonical(text, subject=subject)
            if key in seen:
                continue
            seen.add(key)
            slot = statements.infer_slot(text, subject=subject) or slots.canonical(candidate.slot)
            prepared.append(dataclasses.replace(candidate, text=text, slot=slot))
    return prepared, rejected


def _call(
    complete: Any, request: list[dict[str, Any]], *, namespace: str, purpose: str, model: str
) -> LLMResponse:
    llm_rate_take(namespace=namespace)  # RateLimitedError: the task retries when there is room
    started = time.perf_counter()
    try:
        with telemetry.llm_call(model=model, purpose=purpose) as span:
            response: LLMResponse = complete(request, json_object=purpose == "extract")
            span.set_attributes(
                {
                    "gen_ai.response.model": response.model,
                    "gen_ai.usage.input_tokens": response.prompt_tokens,
                    "gen_ai.usage.output_tokens": response.completion_tokens,
                }
            )
    except Exception as exc:
        telemetry.count(
            "ttmemory.llm.errors", **{"gen_ai.request.model": model, "ttmemory.purpose": purpose}
        )
        ledger_record(
            namespace=namespace,
            purpose=purpose,
            model=model,
            latency_ms=(time.perf_counter() - started) * 1000,
            status=LedgerStatus.ERROR,
        )
        if isinstance(exc, LLMError):
            raise
        raise LLMError(f"{purpose} call failed: {type(exc).__name__}: {exc}") from exc
    ledger_record(
        namespace=namespace,
        purpose=purpose,
        model=response.model,
        prompt_tokens=response.prompt_tokens,
        completion_tokens=response.completion_tokens,
        latency_ms=response.latency_ms,
    )
    return response


def _closest_facts(namespace: str, messages: list[dict[str, Any]]) -> list[tuple[int, str]]:

    text = " ".join(
        m["content"]
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), str)
    )[:2000]
    if not text.strip():
        return []
    try:
        hits = fact_recall(namespace=namespace, query=text, k=CLOSEST_FACTS).facts
    except MemoryValidationError:
        return []
    # Recall leaves out facts sharing nothing with the messages; the extractor still needs the
    # newest ones to see a contradiction worded differently ("nurse" -> "doctor").
    shown = {fact.pk for fact in hits}
    for fact in fact_list(namespace=namespace, limit=2 * CLOSEST_FACTS):
        if len(hits) >= CLOSEST_FACTS:
            break
        if fact.pk not in shown:
            hits.append(fact)
    return [(fact.pk, fact.text) for fact in hits]


def _apply(
    namespace: str,
    candidates: list[extraction.Candidate],
    source: tuple[MemorySession, list[int]] | None,
    subject: str,
) -> FactChanges:
    changes = FactChanges()
    # A retraction of a slot that gets a new value in the same batch ("I don't live in Paris
    # anymore, I moved to Berlin", "I changed jobs: I now work at ...") gives way: the new value
    # supersedes the old one and keeps the chain. A slot-wide retraction applies last.
    refilled = {
        c.slot for c in candidates if c.slot and c.change not in {"retract", "previous", "deny"}
    }
    kept = [c for c in candidates if not (c.change == "retract" and c.slot in refilled)]
    ordered = [c for c in kept if not (c.change == "retract" and not c.value and c.slot)]
    ordered += [c for c in kept if c.change == "retract" and not c.value and c.slot]
    for candidate in ordered:
        if source is not None and candidate.message_index is not None:
            # Provenance as precise as the extractor knows it: the one message that said it.
            session, seqs = source
            fact_source: tuple[MemorySession, list[int]] | None = (
                session,
                [seqs[candidate.message_index]],
            )
        else:
            fact_source = source
        if candidate.action == "NOOP":
            target = (
                Fact.objects.filter(namespace=namespace, pk=candidate.target_id).first()
                if candidate.target_id is not None
                else None
            )
            changes.append(FactChange("NOOP", target))
            continue
        if candidate.action == "RETRACT" or candidate.change in {"retract", "deny"}:
            for fact in _retracted(namespace, candidate, subject):
                changes.append(FactChange("RETRACT", _retract(namespace, fact), None))
            continue
        if candidate.change == "correct":
            candidate = _corrected(namespace, candidate, subject, source)
            if not candidate.text:
                continue
        if candidate.change == "also":
            candidate = _added(namespace, candidate, source)
            if not candidate.text:
                continue
        metadata = {"slot": candidate.slot} if candidate.slot else None
        action = candidate.action
        previous: Fact | None = None
        if candidate.target_id is not None:
            previous = (
                Fact.objects.current().filter(namespace=namespace, pk=candidate.target_id).first()
            )
        if candidate.change == "previous":
            # An old value ("moved from Paris"): history only, stored when nothing is current.
            if candidate.slot and (
                _slot_facts(namespace, candidate.slot).exists()
                or _unslotted(namespace, candidate.slot, subject) is not None
            ):
                continue
        elif previous is None and candidate.change == "replace":
            previous, action = _replaced(namespace, candidate, subject)
        if previous is None and candidate.change != "also":
            # A value added "too" stands beside the fact it was said after, never replaces it.
            previous, action = _existing(namespace, candidate, subject)
        if previous is not None and (action == "NOOP" or previous.text == candidate.text):
            changes.append(FactChange("NOOP", previous))
            continue
        if previous is not None:
            fact = fact_supersede(
                namespace=namespace,
                fact_id=previous.pk,
                text=candidate.text,
                kind=candidate.kind,
                metadata=metadata,
                source=fact_source,
            )
            changes.append(
                FactChange("UPDATE" if action == "UPDATE" else "SUPERSEDE", fact, previous)
            )
            continue
        fact, created = fact_remember(
            namespace=namespace, text=candidate.text, kind=candidate.kind, metadata=metadata,
            source=fact_source, with_created=True,
        )  # fmt: skip
        changes.append(FactChange("ADD" if created else "NOOP", fact))
    return changes


def _slot_facts(namespace: str, slot: str) -> Any:
    names = slots.stored_names(slot)
    return Fact.objects.current().filter(namespace=namespace, metadata__slot__in=names)


def _unslotted(namespace: str, slot: str, subject: str) -> Fact | None:
    """The newest current fact stored without a slot that says ``slot`` (read again by today's
    rules: "The user lives in Leeds" stored by an LLM that named no slot is ``location``), so a
    new value supersedes it as it would a slotted one; None when there is none."""
    unslotted = (
        Fact.objects.current()
        .filter(namespace=namespace)
        .filter(Q(metadata__slot__isnull=True) | Q(metadata__slot=""))
        .order_by("-pk")[:UNSLOTTED_WITHIN]
    )
    for fact in unslotted:
        if statements.infer_slot(fact.text, subject=subject) == slot:
            return fact
    return None


def _retract(namespace: str, fact: Fact) -> Fact:
    """End ``fact`` (``valid_to``, no successor): no longer true, kept as history."""
    now = timezone.now()
    with change("retract", namespace=namespace, stored=True, hold="allow") as gate:
        ended = (
            Fact.objects.current()
            .filter(namespace=gate.namespace, pk=fact.pk)
            .update(valid_to=now, updated_at=now)
        )
        if ended:
            gate.emit("fact.changed", counts={"retracted": 1}, ids={"fact": fact.pk})
    fact.valid_to = now
    return fact


def _retracted(namespace: str, candidate: extraction.Candidate, subject: str) -> list[Fact]:
    """The current facts a retraction ends: its target, else the facts saying what it denies.

    A retraction with a slot and no value ends the slot's current value ("I left my job"); with
    a ``match`` pattern, the facts it matches ("likes jazz" for "I don't like jazz anymore");
    else the facts of its slot holding its value, or (no slot) the facts whose terms hold all
    of its terms ("The user eats meat" for "I stopped eating meat").
    """
    if candidate.target_id is not None:
        return list(Fact.objects.current().filter(namespace=namespace, pk=candidate.target_id))
    if candidate.slot and not candidate.value and candidate.change == "retract":
        unslotted = _unslotted(namespace, candidate.slot, subject)
        return [*_slot_facts(namespace, candidate.slot), *([unslotted] if unslotted else [])]
    found: dict[int, Fact] = {}
    if candidate.slot:
        for fact in _slot_facts(namespace, candidate.slot):
            found[fact.pk] = fact
    if candidate.text:
        try:
            hits = fact_recall(namespace=namespace, query=candidate.text, k=2 * DEDUPE_NEIGHBOURS)
        except MemoryValidationError:
            hits = None
        for fact in hits.facts if hits is not None else []:
            if fact.valid_to is None:
                found.setdefault(fact.pk, fact)
    pattern = re.compile(candidate.match, re.I) if candidate.match else None
    if pattern is not None:
        # A pattern names the fact in other forms than recall's terms ("quit smoking" ends
        # "The user is a smoker": "smoke" and "smoker" are two stems): the newest facts too.
        for fact in (
            Fact.objects.current().filter(namespace=namespace).order_by("-pk")[:RETRACT_SCANNED]
        ):
            found.setdefault(fact.pk, fact)
    value = normalise_text(candidate.value)
    terms = statements.content_terms(candidate.text, subject=subject)
    ended = []
    for fact in found.values():
        if candidate.change == "deny":
            # A clause saying something stopped names the fact in its own words: all the fact's
            # terms but one are in it ("I don't really go running anymore" ends "The user runs"
            # only when the stems meet; "больше не ем мясо" ends "Пользователь ест мясо").
            held = statements.content_terms(fact.text, subject=subject)
            shared = _shared(held, terms)
            if _named_verbatim(candidate.text, fact.text, subject):
                # "不跑步了" ends "用户每天跑步": a language without spaces names it as written.
                ended.append(fact)
                continue
            if candidate.value == statements.DENY_ALL:
                # A plain negation ("I'm not allergic to penicillin") names all of the fact.
                if held and held <= terms:
                    ended.append(fact)
                continue
            # Chinese and Japanese terms are overlapping characters: half of both sides.
            if held and (
                shared >= max(1, len(held) - 1)
                or (shared >= 2 and 2 * shared >= max(len(held), len(terms)))
            ):
                ended.append(fact)
            continue
        if pattern is not None:
            if pattern.search(fact.text):
                ended.append(fact)
            continue
        if candidate.slot and (fact.metadata or {}).get("slot") in slots.stored_names(
            candidate.slot
        ):
            held = statements.content_terms(fact.text, subject=subject)
            if (value and _holds_value(normalise_text(fact.text), value)) or (
                not slots.is_single_valued(candidate.slot)
                and terms
                and terms <= held
                and len(held) <= len(terms) + 2
            ):
                # A many-valued slot's value said in other words ("plays in the orchestra"
                # ends "plays the violin in an orchestra").
                ended.append(fact)
            continue
        held = statements.content_terms(fact.text, subject=subject)
        if not candidate.slot and terms and terms <= held and len(held) <= len(terms) + 2:
            ended.append(fact)
        elif not candidate.slot and _does(fact.text, terms, subject):
            # "I quit smoking" ends "The user smokes about ten a day": what the user does.
            ended.append(fact)
    return ended


def _shared(held: set[str], terms: set[str]) -> int:
    """How many of ``terms`` are in ``held``, a term also when one of the two starts the other
    and shares four letters with it ("trink" / "trinkt": a verb's forms the stemmer of another
    language leaves apart)."""
    return sum(
        1
        for term in terms
        if term in held
        or (
            len(term) >= 4
            and any(h.startswith(term) or term.startswith(h) for h in held if len(h) >= 4)
        )
    )


def _named_verbatim(said: str, text: str, subject: str) -> bool:
    """Whether ``said`` (a denial in Chinese or Japanese, two characters or more) is written in
    the fact ``text`` about the user."""
    said = normalise_text(said).strip()
    key = statements.canonical(text, subject=subject)
    return len(said) >= 2 and bool(_CJK.search(said)) and said in key and _users(key)


def _does(text: str, terms: set[str], subject: str) -> bool:
    """Whether the fact ``text`` is about the user doing the one thing ``terms`` names: its
    verb, the word after the subject ("@ smokes about ten a day" for {"smoke"})."""
    key = statements.canonical(text, subject=subject)
    words = key.split()
    return (
        len(terms) == 1
        and _about_the_user(key)
        and len(words) > 1
        and set(normalise_terms(words[1])) == terms
    )


def _holds_value(text: str, value: str) -> bool:
    """True when ``text`` holds ``value``, also in another case ending ("из Яндекса" names the
    fact "работает в Яндексе": the value without its last two letters, when five or more)."""
    if value in text:
        return True
    return (
        len(value) >= 5
        and re.search(rf"(?<!\w){re.escape(value[:-2])}\w{{0,3}}(?!\w)", text) is not None
    )


def _replaced(
    namespace: str, candidate: extraction.Candidate, subject: str
) -> tuple[Fact | None, str]:
    """The current fact a reversal replaces: the same predicate ("prefers") about another value
    sharing a term with it ("window seats" -> "aisle seats"); else (None, the action)."""
    key = statements.canonical(candidate.text, subject=subject)
    try:
        hits = fact_recall(namespace=namespace, query=candidate.text, k=DEDUPE_NEIGHBOURS)
    except MemoryValidationError:
        return None, candidate.action
    # A change or a correction said in the words of the fact it changes, another value in
    # their place ("actually I prefer tea" after "I prefer coffee", "sorry, I have three kids").
    framed = _reframed(hits.facts, candidate, subject, any_value=True)
    if framed is not None:
        return framed, "SUPERSEDE"
    value = normalise_text(candidate.value) if candidate.value else ""
    if not value or value not in key:
        return None, candidate.action
    predicate = key[: key.rfind(value)].strip()
    value_terms = set(normalise_terms(value))
    # The current facts recalled, but the statement itself, each with whether it says the same
    # predicate.
    others = [
        (fact, other, other.startswith(predicate + " "))
        for fact in hits.facts
        if fact.valid_to is None
        and (other := statements.canonical(fact.text, subject=subject)) != key
    ]
    for fact, other, same in others:
        if not same:
            continue
        rest = normalise_terms(other[len(predicate) :])
        # The same predicate of another one-word value ("commutes by bus" -> "by bike": "by"
        # is no term).
        if value_terms & set(rest) or (len(rest) == 1 == len(value_terms) and " " in predicate):
            return fact, "SUPERSEDE"
    said = next((n for n in _cjk_subjects() if key.startswith(n)), "")
    if said and _CJK.search(value) and not candidate.slot:
        # "switched to tea" after "drinks coffee every day", "drives a Tesla now" after "drives a
        # Toyota", in Chinese: the same verb of another value, a word or two of when or how
        # often before it, in a language written without spaces.
        mine = key[len(said) :]
        for fact, other, _ in others:
            if (fact.metadata or {}).get("slot") or not _users(other):
                continue
            theirs = other[len(said) :]
            for skip in range(min(_CJK_ADVERB, len(theirs)) + 1):
                verb = _common_start(mine, theirs[skip:])
                if verb and mine[len(verb) :] and mine[len(verb) :] not in theirs:
                    return fact, "SUPERSEDE"
    if not candidate.slot and _about_the_user(key):
        # A change said with another verb ("these days I take the bike to work" after "The
        # user drives to work"): the best recalled current fact about the user without a slot,
        # said with another verb, that names a word of the new value (a fact with a slot is
        # replaced by a value of that slot only; someone else's fact never).
        for fact, other, same in others:
            if (
                not same
                and not (fact.metadata or {}).get("slot")
                and _about_the_user(other)
                and value_terms & statements.content_terms(fact.text, subject=subject)
            ):
                return fact, "SUPERSEDE"
    return None, candidate.action


def _reframed(
    facts: list[Fact], candidate: extraction.Candidate, subject: str, *, any_value: bool
) -> Fact | None:
    """The current fact of ``candidate``'s slot (or none) that it says again in the same words
    around another value (``statements.reframed``): only another count; or, with ``any_value``
    (a sentence that says it changes or corrects something), any other value when they share a
    word more than subject and predicate ("@ isst wieder Fleisch" / "@ isst kein Fleisch", not
    "@ prefers aisle seats" / "@ prefers tea"), the most alike of them."""
    best: tuple[float, Fact | None] = (-1.0, None)
    for fact in facts:
        if fact.valid_to is not None or (fact.metadata or {}).get("slot", "") != (
            candidate.slot or ""
        ):
            continue
        values = statements.reframed(candidate.text, fact.text, subject=subject)
        if values is None:
            continue
        if statements.count_changed(values.new, values.old):
            return fact
        if any_value and values.beyond >= 1:
            score = statements.similarity(candidate.text, fact.text, subject=subject)
            if score > best[0]:
                best = (score, fact)
    return best[1]


def _contradicted(facts: list[Fact], candidate: extraction.Candidate, subject: str) -> Fact | None:
    """The current fact about the user, of ``candidate``'s slot (or none), that says what it
    says with a negation where the other has none ("The user does not drink coffee" / "The user
    drinks coffee every morning", "用户不喝咖啡" / "用户喜欢喝咖啡"): holding its value, or, with
    no value (an LLM's candidate), all but one of its words besides the negation and two or
    more; None when there is none."""
    key = statements.canonical(candidate.text, subject=subject)
    value = normalise_text(candidate.value) if candidate.value else ""
    if not _users(key):
        return None
    negated = _negated(key.replace(value, " ") if value else key)
    words = _unnegated_terms(key, subject)
    for fact in facts:
        other = statements.canonical(fact.text, subject=subject)
        if (
            fact.valid_to is not None
            or (fact.metadata or {}).get("slot", "") != (candidate.slot or "")
            or not _users(other)
            or _negated(other.replace(value, " ") if value else other) == negated
        ):
            continue
        if value and _holds_value(other, value):
            return fact
        shared = _shared(_unnegated_terms(other, subject), words)
        if not value and shared >= 2 and shared >= len(words) - 1:
            return fact
    return None


def _unnegated_terms(canonical: str, subject: str) -> set[str]:
    """A canonical statement's content terms without its negation words."""
    negation = rulebook.detect(canonical).pattern("negation")
    text = negation.sub(" ", canonical) if negation is not None else canonical
    return statements.content_terms(text, subject=subject)


def _users(canonical: str) -> bool:
    """``_about_the_user``, also in Chinese and Japanese, whose canonical statements keep their
    subject (no space follows it: "用户不喝咖啡"), unless a possessive follows ("用户的妹妹")."""
    if _about_the_user(canonical):
        return True
    return any(
        canonical.startswith(name) and canonical[len(name) : len(name) + 1] not in {"的", "の", ""}
        for name in map(normalise_text, rulebook.subjects())
        if _CJK.match(name)
    )


# How many characters of when or how often may stand between a Chinese or Japanese subject and
# its verb ("用户每天喝咖啡": 每天).
_CJK_ADVERB = 3


def _common_start(one: str, other: str) -> str:
    """The characters ``one`` and ``other`` start with alike."""
    size = 0
    while size < min(len(one), len(other)) and one[size] == other[size]:
        size += 1
    return one[:size]


def _cjk_subjects() -> list[str]:
    """The default subjects of the languages written without spaces, as canonical text."""
    return [n for n in map(normalise_text, rulebook.subjects()) if _CJK.match(n)]


def _negated(text: str) -> bool:
    """Whether a statement says its value with a negation (the language's ``[text] negation``)."""
    negation = rulebook.detect(text).pattern("negation")
    return negation is not None and negation.search(text) is not None


# A canonical statement about someone of the user's: the subject's possessive ("@'s sister",
# "@の娘", "@的妹妹"); in other languages the subject then does not lead ("сестра пользователя").
_SOMEONE_OF_THE_USERS = re.compile(r"@\s*(?:'s?(?!\w)|の|的)")


def _about_the_user(canonical: str) -> bool:
    """Whether a canonical statement (``statements.canonical``) is about the user, not about
    someone of theirs."""
    return canonical.startswith("@") and _SOMEONE_OF_THE_USERS.match(canonical) is None


def _corrected(
    namespace: str,
    candidate: extraction.Candidate,
    subject: str,
    source: tuple[MemorySession, list[int]] | None,
) -> extraction.Candidate:
    """ "Sorry, I meant Tuesday" said in a later turn: a fact learned recently in the session (or
    the namespace) with its value swapped, superseding it; no text when there is none.

    A dated correction (a weekday, a month, a number) corrects the newest of the last
    ``CORRECTED_WITHIN`` facts holding a word of its class ("I have a dentist appointment on
    Thursday", "I'm vegetarian", "sorry, I meant Friday"); anything else the newest fact.
    """
    facts = Fact.objects.current().filter(namespace=namespace)
    if source is not None:
        facts = facts.filter(source_session=source[0])
    recent = list(facts.order_by("-pk")[:CORRECTED_WITHIN])
    if candidate.match:
        # "no wait, it's tuesday not monday": the newest fact holding the old value it names, in
        # the session first, then the namespace.
        named = Fact.objects.current().filter(namespace=namespace).order_by("-pk")
        for fact in [*recent, *named[:NAMED_WITHIN]]:
            text = statements.replace_named(fact.text, candidate.match, candidate.value)
            if text != fact.text and statements.quality_problem(text) is None:
                return _superseding(candidate, fact, text, match="")
        return dataclasses.replace(candidate, text="")
    if not recent:
        return dataclasses.replace(candidate, text="")
    latest, text = recent[0], ""
    for fact in recent:
        swapped = statements.correct_value(fact.text, candidate.value, by_class_only=True)
        if swapped != fact.text:
            latest, text = fact, swapped
            break
    if not text and statements.dated_only(candidate.value):
        # "wait no, it's Thursday" when nothing learned holds a day: no fact takes the date.
        return dataclasses.replace(candidate, text="")
    if not text:
        # "wait, two cats, not three": the newest fact naming what the value counts or says.
        terms = statements.content_terms(candidate.value, subject=subject)
        latest = next(
            (f for f in recent if terms & statements.content_terms(f.text, subject=subject)),
            latest,
        )
        text = statements.recount(latest.text, candidate.value)
        text = "" if text == latest.text else text
    text = text or statements.correct_value(latest.text, candidate.value)
    if text == latest.text or statements.quality_problem(text) is not None:
        return dataclasses.replace(candidate, text="")
    return _superseding(candidate, latest, text)


def _superseding(
    candidate: extraction.Candidate, fact: Fact, text: str, **more: Any
) -> extraction.Candidate:
    """``candidate`` as the correction of ``fact``: ``text`` supersedes it, in its kind and slot."""
    return dataclasses.replace(
        candidate,
        action="SUPERSEDE",
        text=text,
        kind=fact.kind,
        slot=(fact.metadata or {}).get("slot", ""),
        target_id=fact.pk,
        change="add",
        **more,
    )


def _added(
    namespace: str,
    candidate: extraction.Candidate,
    source: tuple[MemorySession, list[int]] | None,
) -> extraction.Candidate:
    """ "Oh and to shellfish as well" said in a later turn: the newest fact learned in the
    session, with this value in place of its own, stored beside it; no text when there is none."""
    facts = Fact.objects.current().filter(namespace=namespace)
    if source is not None:
        facts = facts.filter(source_session=source[0])
    latest = facts.order_by("-pk").first()
    if latest is None:
        return dataclasses.replace(candidate, text="")
    text = statements.correct_value(latest.text, candidate.value)
    if text == latest.text or statements.quality_problem(text) is not None:
        return dataclasses.replace(candidate, text="")
    slot = (latest.metadata or {}).get("slot", "")
    if slot and slots.is_single_valued(slot):
        return dataclasses.replace(candidate, text="")  # one value: "too" cannot add a second
    return dataclasses.replace(candidate, action="ADD", text=text, kind=latest.kind, slot=slot)


def _existing(
    namespace: str, candidate: extraction.Candidate, subject: str
) -> tuple[Fact | None, str]:
    """The current fact ``candidate`` repeats, updates or supersedes, and the action; or ADD.

    In order: the same statement under the other subject ("The user ..." when facts are now
    about "Ada ..."), the current value of the candidate's single-valued slot, then a recalled
    neighbour of the same slot whose content terms are ``DEDUPE_SIMILARITY`` alike.
    """
    current = Fact.objects.current().filter(namespace=namespace)
    key = statements.canonical(candidate.text, subject=subject)
    variants = {
        blind.text_hash(_with_subject(key, name), namespace=namespace)
        for name in {subject, statements.DEFAULT_SUBJECT}
    }
    same = current.filter(text_hash__in=variants).order_by("-pk").first()
    if same is not None:
        return same, "NOOP" if same.text == candidate.text else "UPDATE"
    slot = candidate.slot
    if slot and slots.is_single_valued(slot):
        slotted = _slot_facts(namespace, slot).order_by("-pk").first() or _unslotted(
            namespace, slot, subject
        )
        if slotted is not None:
            same_value = statements.canonical(slotted.text, subject=subject) == key
            return slotted, "NOOP" if same_value else "SUPERSEDE"
    try:
        neighbours = fact_recall(namespace=namespace, query=candidate.text, k=DEDUPE_NEIGHBOURS)
    except MemoryValidationError:
        return None, "ADD"
    # Only a count changed ("I have two cats" after "I have three cats"): the new count.
    framed = _reframed(neighbours.facts, candidate, subject, any_value=False)
    if framed is None:
        # Or the user now says the opposite of a value ("I don't drink coffee" after "I like
        # coffee", "用户不喝咖啡" after "用户喜欢喝咖啡").
        framed = _contradicted(neighbours.facts, candidate, subject)
    if framed is not None:
        return framed, "SUPERSEDE"
    terms = statements.content_terms(candidate.text, subject=subject)
    best: tuple[float, Fact | None] = (0.0, None)
    # Chinese and Japanese terms are overlapping characters, so two values of a many-valued
    # slot look alike ("用户养了一只猫", "用户养了一只狗"): there a neighbour must hold the value.
    value = normalise_text(candidate.value) if slot and _CJK.search(candidate.value) else ""
    for fact in neighbours.facts:
        if fact.valid_to is not None or (fact.metadata or {}).get("slot", "") != slot:
            continue
        if value and not _holds_value(normalise_text(fact.text), value):
            continue
        stored = statements.canonical(fact.text, subject=subject)
        owner = _owner(key, stored)
        if owner:
            # Two facts about the same person of the user's share their name's words: alike
            # only in what they say of them ("Lily is also allergic to milk" is not "Lily is
            # allergic to eggs" said again).
            score = statements.similarity(key[len(owner) :], stored[len(owner) :], subject=subject)
        else:
            score = statements.similarity(candidate.text, fact.text, subject=subject)
        if score > best[0]:
            best = (score, fact)
    score, fact = best
    if fact is None or score < DEDUPE_SIMILARITY:
        return None, "ADD"
    # Nothing new in other words: keep the stored one; more detail: update it.
    if terms <= statements.content_terms(fact.text, subject=subject):
        return fact, "NOOP"
    return fact, "UPDATE"


def _owner(one: str, other: str) -> str:
    """The words two canonical statements about the same person of the user's start with ("@'s
    daughter lily"), up to their verb; "" when either is about the user or they differ."""
    found = _SOMEONE_OF_THE_USERS.match(one)
    if found is None or _SOMEONE_OF_THE_USERS.match(other) is None:
        return ""
    words, others = one.split(), other.split()
    size = 0
    while size < min(len(words), len(others)) and words[size] == others[size]:
        size += 1
    # The person: the possessive and at most the relation and a name after it.
    size = min(size, 3)
    return " ".join(words[:size]) + " " if size >= 2 else ""


def _with_subject(key: str, subject: str) -> str:
    return subject + key[1:] if key.startswith("@") else key


def session_learn(*, session_id: int, upto_seq: int) -> list[FactChange]:
    """Extract facts from the session's messages after ``learned_upto_seq`` up to ``upto_seq``.

    Idempotent: a range already learned (or a session erased meanwhile) does nothing, and the
    learned-up-to mark only moves forward.
    """
    session = MemorySession.objects.filter(pk=session_id).first()
    if session is None or upto_seq <= session.learned_upto_seq:
        return []
    # The LLM runs with no lock or transaction held; the mark moves by one conditional update.
    with change("learn", session=session, lock=False, atomic=False, hold="allow") as gate:
        return _learn_session(gate, session, upto_seq)


def _learn_session(gate: Change, session: MemorySession, upto_seq: int) -> list[FactChange]:
    rows = list(
        Message.objects.filter(session=session, seq__gt=session.learned_upto_seq, seq__lte=upto_seq)
        .order_by("seq")
        .values_list("seq", "data")
    )
    changes: list[FactChange] = []
    if rows:
        # The assistant's message just before the range, for context: a bare "not anymore"
        # answers its "Do you still live in Paris?". Assistant messages never become facts.
        asked = (
            Message.objects.filter(session=session, seq__lte=session.learned_upto_seq)
            .order_by("-seq")
            .values_list("seq", "data")
            .first()
        )
        context = [asked] if asked and isinstance(asked[1], dict) else []
        context = [row for row in context if row[1].get("role") == "assistant"]
        seqs = [seq for seq, _ in context + rows]
        changes = facts_learn(
            namespace=session.namespace,
            messages=[data for _, data in context + rows],
            source=(session, seqs),
            context=_said_before(session),
        )
    MemorySession.objects.filter(pk=session.pk, learned_upto_seq__lt=upto_seq).update(
        learned_upto_seq=upto_seq
    )
    gate.emit(
        "session.learned",
        counts={
            "messages": len(rows),
            **{a.lower(): sum(c.action == a for c in changes) for a in extraction.ACTIONS},
            "rejected": getattr(changes, "rejected", 0),
        },
        ids={"upto_seq": upto_seq},
    )
    return changes


def _said_before(session: MemorySession) -> list[str]:
    """The user's last ``PRONOUN_CONTEXT`` messages already learned, oldest first (text only)."""
    earlier = (
        Message.objects.filter(session=session, seq__lte=session.learned_upto_seq)
        .order_by("-seq")
        .values_list("data", flat=True)[: 4 * PRONOUN_CONTEXT]
    )
    said = [
        data["content"]
        for data in earlier
        if isinstance(data, dict)
        and data.get("role") == "user"
        and isinstance(data.get("content"), str)
    ]
    return said[:PRONOUN_CONTEXT][::-1]


def session_summarise(*, session_id: int) -> bool:
    """Trim the session to ``SUMMARY_KEEP_TOKENS`` and merge what is uncovered into its summary.

    Only messages after ``summary_upto_seq`` are summarised (never re-summarising what is
    covered); the summary stays within ``SUMMARY_MAX_TOKENS``. Trimming happens even if the
    LLM then fails (LLMError is raised for a retry; nothing half-done is stored). With
    ``TRIM_MODE = "delete"`` covered archived messages are deleted once summarised. The LLM
    runs outside the session lock; the summary is stored only if the session's
    ``history_version`` has not moved meanwhile (a trim, clear, rollback or another summary
    voids it: nothing is stored and False is returned; the next run summarises afresh).
    Returns True when the summary changed.
    """

    session = MemorySession.objects.filter(pk=session_id).first()
    if session is None:
        return False
    keep = app_settings.SUMMARY_KEEP_TOKENS
    if session.token_count > keep:
        session_trim(session=session, max_tokens=keep, archive=True)
    session.refresh_from_db()
    covered = session.summary_upto_seq
    version = session.history_version
    rows = list(
        Message.objects.filter(session=session, archived_at__isnull=False, seq__gt=covered)
        .order_by("seq")
        .values_list("seq", "data")
    )
    if not rows:
        return False
    previous = session.summary or ""
    new_messages = [data for _, data in rows]
    summary = _summarise(session.namespace, previous, new_messages)
    upto = rows[-1][0]
    with change("summarise", session=session, hold="allow") as gate:
        # Stored only if no trim, clear, rollback or other summary changed the archive or the
        # summary while the LLM ran (a rollback may restore an equal summary_upto_seq).
        updated = MemorySession.objects.filter(
            pk=session.pk, summary_upto_seq=covered, history_version=version
        ).update(
            summary=seal(session, "summary", summary),
            summary_upto_seq=upto,
            history_version=F("history_version") + 1,
            updated_at=timezone.now(),
        )
        if not updated:
            logger.info(
                "session %s changed while it was summarised; the summary was not stored",
                session.pk,
            )
        if updated and app_settings.TRIM_MODE == "delete" and gate.held() is None:
            index_delete_archived_upto(session, upto)
            Message.objects.filter(
                Q(session=session) & Q(archived_at__isnull=False) & Q(seq__lte=upto)
            ).delete()
        if updated:
            gate.emit(
                "session.summarised",
                counts={"messages": len(rows)},
                ids={"upto_seq": upto},
            )
    return bool(updated)


def _summarise(namespace: str, previous: str, new_messages: list[dict[str, Any]]) -> str:
    limit = app_settings.SUMMARY_MAX_TOKENS
    encoding = app_settings.TOKENIZER
    llm = get_llm()
    if llm is None:
        text = extraction.extractive_summary(previous, new_messages)
    else:
        request = extraction.summary_messages(previous, new_messages, max_words=int(limit * 0.7))
        text = _call(
            llm.complete, request, namespace=namespace, purpose="summarise", model=llm.model
        ).text.strip()
        if not text:
            raise LLMError("the summariser answered an empty summary")
    # Keep within budget: drop the oldest lines first, then cut.
    lines = text.splitlines()
    while (
        len(lines) > 1
        and conversation.count_text_tokens("\n".join(lines), encoding=encoding) > limit
    ):
        lines.pop(0)
    text = "\n".join(lines)
    while text and conversation.count_text_tokens(text, encoding=encoding) > limit:
        text = text[: int(len(text) * 0.9)]
    return text
