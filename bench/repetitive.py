"""A repetitive profile: the facts a long-lived user's memory piles up, and questions about them.

Issue 36's report: in a namespace of conversational facts about relatives, jobs, cities,
allergies, hobbies and trips, where names, relations and verbs recur across thousands of facts,
recall cost 10-14 ms at 1,000 facts and 41-52 ms at 5,000 (6.8 ms on the project's own set).
This set reproduces that shape, deterministically and without downloads: a few dozen names and
relations, a handful of verbs, every fact built from one of a dozen templates, so the common
words ("my", "sister", "lives", "works", names) each sit in a large share of the namespace.
Questions (8-15 words) are phrased unlike the facts ("Which town does the user's aunt Maria
call home these days?") and each names the fact it was made from (its evidence).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

NAMES = (
    "Anna", "Ben", "Clara", "David", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas",
    "Kira", "Leo", "Maria", "Nina", "Omar", "Paula", "Quinn", "Rosa", "Sami", "Tom",
    "Uma", "Viktor", "Wendy", "Yusuf",
)  # fmt: skip
RELATIONS = (
    "sister", "brother", "mother", "father", "cousin", "aunt", "uncle", "friend",
    "colleague", "neighbour", "daughter", "son", "grandmother", "grandfather", "partner",
)  # fmt: skip
JOBS = (
    "nurse", "teacher", "plumber", "lawyer", "baker", "pilot", "dentist", "architect",
    "accountant", "electrician", "journalist", "chef", "pharmacist", "firefighter",
    "librarian", "mechanic", "designer", "engineer",
)  # fmt: skip
CITIES = (
    "Lisbon", "Berlin", "Madrid", "Vienna", "Prague", "Dublin", "Oslo", "Warsaw", "Milan",
    "Lyon", "Porto", "Zurich", "Krakow", "Seville", "Munich", "Helsinki",
)  # fmt: skip
ALLERGENS = (
    "peanuts", "shellfish", "cats", "pollen", "penicillin", "gluten", "dust", "eggs",
    "strawberries", "latex",
)  # fmt: skip
HOBBIES = (
    "painting", "climbing", "chess", "pottery", "running", "gardening", "photography",
    "knitting", "surfing", "baking", "cycling", "birdwatching", "swimming", "yoga",
)  # fmt: skip
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip

#: (fact template, question templates): a fact says it the way people say it in a chat; its
#: questions ask for it in other words.
TEMPLATES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "My {relation} {name} works as a {job} in {city}.",
        (
            "What does the user's {relation} {name} do for a living these days?",
            "Which profession did {name}, the user's {relation}, end up choosing?",
        ),
    ),
    (
        "My {relation} {name} lives in {city} now.",
        ("Which town does the user's {relation} {name} call home at the moment?",),
    ),
    (
        "My {relation} {name} moved to {city} last year.",
        ("Where did {name} relocate to a while ago, the {relation} of the user?",),
    ),
    (
        "My {relation} {name} is allergic to {allergen}.",
        ("Is there anything that {name} has to stay away from for health reasons?",),
    ),
    (
        "My {relation} {name} loves {hobby} on weekends.",
        ("How does the user's {relation} {name} like to spend free Saturdays and Sundays?",),
    ),
    (
        "My {relation} {name} and I are going to {city} in {month}.",
        ("Which trip are the user and {name} planning together later this year?",),
    ),
    (
        "I visited my {relation} {name} in {city} in {month}.",
        ("When did the user last go and see {name}, and in which place?",),
    ),
    (
        "My {relation} {name} started a new job as a {job}.",
        ("What new position did the user's {relation} {name} take on recently?",),
    ),
    (
        "My {relation} {name} took up {hobby} this year.",
        ("Which new pastime did {name} pick up over the past twelve months?",),
    ),
    (
        "My {relation} {name} has a bad reaction to {allergen}.",
        ("What should we keep away from {name} when the user's {relation} comes over?",),
    ),
    (
        "I am allergic to {allergen} and so is my {relation} {name}.",
        ("Which allergy does the user share with a member of the family or friends?",),
    ),
    (
        "My {relation} {name} works in {city} as a {job} and loves {hobby}.",
        ("Tell me about the job and the weekend passion of the user's {relation} {name}.",),
    ),
)


@dataclass(frozen=True)
class Question:
    text: str
    evidence: str  # the fact it was made from


def build(count: int, *, seed: int = 36) -> tuple[list[str], list[Question]]:
    """``count`` distinct facts (in the order a user would have said them) and one question for
    each of a deterministic sample of them (at most 400)."""
    rng = random.Random(seed)
    facts: list[str] = []
    seen: set[str] = set()
    made: list[tuple[str, str]] = []
    while len(facts) < count:
        template, questions = TEMPLATES[rng.randrange(len(TEMPLATES))]
        values = {
            "relation": rng.choice(RELATIONS),
            "name": rng.choice(NAMES),
            "job": rng.choice(JOBS),
            "city": rng.choice(CITIES),
            "allergen": rng.choice(ALLERGENS),
            "hobby": rng.choice(HOBBIES),
            "month": rng.choice(MONTHS),
        }
        text = template.format(**values)
        if text in seen:
            continue
        seen.add(text)
        facts.append(text)
        made.append((rng.choice(questions).format(**values), text))
    sample = rng.sample(made, min(400, len(made)))
    return facts, [Question(text=q, evidence=evidence) for q, evidence in sample]
