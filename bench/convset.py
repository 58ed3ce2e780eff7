"""A conversational evaluation set: multi-session user/assistant chats with questions by category.

Generated from a seed (nothing downloaded) to resemble real use rather than reward paraphrase:
each user talks to an assistant over dated sessions, mostly chit-chat (long turns about the
weather, shows, work, food) between the turns that matter. The user mentions events of their
life (a pottery class with their sister, a concert with a colleague), the people around them
(names, jobs, cities, pets), plans they later change ("the kitchen will be sage green
instead"), and what other people did with the same words (so a question about one person can
be answered, wrongly, from another). Assistant turns answer and ask follow-ups, so many facts
are split over a question and its answer.

Questions, each with its evidence turns (turn-level annotation):

- ``single-hop``: one turn answers it ("What did Ada make at the pottery class?").
- ``multi-hop``: two turns together ("What does the person Ada went to the pottery class with
  do for a living?": the class names the companion, another turn their job).
- ``temporal``: when something happened or what holds now after a change of mind
  ("When did Ada go to the pottery class?", "What colour is Ada painting the kitchen?": the
  later turn).
- ``open-domain``: the memory plus common sense, in words the turns do not use ("Would Ada
  enjoy a weekend of crafts?").
- ``adversarial``: about someone else than the memory is about ("What did Lena make at the
  pottery class?" when only Ada made something; evidence: the turn a careful reader needs to
  answer "not said"), or unanswerable: nothing stored answers it (no evidence; the right
  recall is no memory at all, measured with ``min_score``).

``split(user)`` puts half the users in ``tune`` and half in ``held-out``: weights are picked on
the first, figures reported on the second.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")


@dataclass(frozen=True)
class Turn:
    id: str
    session: int
    index: int
    role: str
    text: str
    date: dt.date


@dataclass(frozen=True)
class Question:
    id: str
    user: str
    text: str
    category: str
    evidence: tuple[str, ...]  # empty: unanswerable


@dataclass
class Conversation:
    user: str
    split: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


@dataclass
class ConvSet:
    seed: int
    conversations: list[Conversation]

    def of(self, split: str) -> list[Conversation]:
        return [c for c in self.conversations if c.split == split]

    def describe(self) -> str:
        turns = sum(len(c.turns) for c in self.conversations)
        questions = [q for c in self.conversations for q in c.questions]
        per = {cat: sum(1 for q in questions if q.category == cat) for cat in CATEGORIES}
        unanswerable = sum(1 for q in questions if not q.evidence)
        sessions = len({t.session for t in self.conversations[0].turns})
        return (
            f"{len(self.conversations)} conversations x {sessions} sessions, {turns:,} turns, "
            f"{len(questions):,} questions ("
            + ", ".join(f"{cat} {n}" for cat, n in per.items())
            + f"; {unanswerable} of them unanswerable), seed {self.seed}"
        )


USERS = [
    "Ada", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas",
    "Keiko", "Luca", "Maya", "Nils", "Olga", "Pedro", "Quinn", "Rosa", "Samir", "Tara",
    "Ugo", "Vera", "Wen", "Ximena",
]  # fmt: skip
PEOPLE = [
    "Lena", "Tom", "Priya", "Marco", "Sofia", "Daniel", "Aisha", "Felix", "Hannah", "Omar",
    "Julia", "Victor", "Nadia", "Ravi", "Clara", "Mateo", "Zoe", "Ben", "Lucia", "Arjun",
]  # fmt: skip
RELATIONS = ["sister", "brother", "colleague", "neighbour", "best friend", "cousin", "flatmate"]
JOBS = [
    ("nurse", "a hospital"), ("architect", "a design studio"), ("baker", "a bakery"),
    ("teacher", "a primary school"), ("pilot", "an airline"), ("lawyer", "a law firm"),
    ("vet", "an animal clinic"), ("chef", "a restaurant"), ("plumber", "a repair company"),
    ("journalist", "a newspaper"),
]  # fmt: skip
CITIES = ["Leeds", "Porto", "Lyon", "Gdansk", "Bologna", "Utrecht", "Bilbao", "Graz", "Cork"]
PETS = [("beagle", "dog"), ("tabby", "cat"), ("parrot", "bird"), ("rabbit", "rabbit")]
PET_NAMES = ["Biscuit", "Pepper", "Mochi", "Rex", "Luna", "Ziggy", "Olive", "Waffles"]
COLOURS = ["yellow", "sage green", "navy blue", "terracotta", "white", "lavender"]


@dataclass(frozen=True)
class EventType:
    """Something a person does once, told in one turn, detailed in the answer to a follow-up."""

    key: str
    tell: tuple[str, ...]  # {when} {companion}
    follow: tuple[str, ...]  # the assistant's follow-up question
    detail: tuple[str, ...]  # {thing}
    things: tuple[str, ...]
    q_detail: str  # {who}
    q_when: str
    q_open: str
    other_tell: str  # someone else did it: {other} {thing}
    q_with: str  # who came along, for a multi-hop question: {who}


EVENTS = [
    EventType(
        "pottery",
        (
            "{when} I went to a pottery class with my {rel} {companion}, first time ever.",
            "Guess what, {companion} (my {rel}) dragged me to a pottery workshop {when}.",
        ),
        ("Oh fun! Did you make anything?", "How did it go? What did you make?"),
        ("I made a {thing}, a bit wonky but I love it.", "Just a {thing}, it came out lopsided."),
        ("blue bowl", "small vase", "coffee mug", "plant pot", "butter dish"),
        "What did {who} make at the pottery class?",
        "When did {who} go to the pottery class?",
        "Would {who} enjoy a weekend of crafts with clay?",
        "My {rel} {other} also took a pottery class and made a {thing}, apparently.",
        "the person who went to the pottery class with {who}",
    ),
    EventType(
        "concert",
        (
            "{when} {companion}, my {rel}, and I went to a concert downtown.",
            "I saw a live concert {when} with my {rel} {companion}, it was packed.",
        ),
        ("Nice! Who was playing?", "Sounds great, which band was it?"),
        ("It was {thing}, they played for almost three hours.", "{thing}! Front row, even."),
        ("a jazz quartet", "an old punk band", "a string orchestra", "a folk duo", "a DJ set"),
        "Who played at the concert {who} went to?",
        "When did {who} go to the concert?",
        "Does {who} like live music?",
        "{other}, my {rel}, went to a concert too and saw {thing}.",
        "the person {who} went to the concert with",
    ),
    EventType(
        "hike",
        (
            "We did a long hike {when}, {companion} (my {rel}) planned the whole route.",
            "{when} I went hiking with my {rel} {companion}, my legs still hurt.",
        ),
        ("Where did you go?", "Lovely, which trail was it?"),
        ("Up to {thing}, the view was worth every step.", "We walked to {thing} and back."),
        ("the lighthouse", "the old quarry", "the waterfall", "the ridge above the lake"),
        "Where did {who} go hiking?",
        "When did {who} go hiking?",
        "Would {who} enjoy a trip to a national park?",
        "My {rel} {other} went hiking as well, to {thing}.",
        "the one who planned the hike {who} went on",
    ),
    EventType(
        "cooking",
        (
            "{when} I cooked dinner for my {rel} {companion}, a proper three-course thing.",
            "I hosted {companion}, my {rel}, for dinner {when} and went all out.",
        ),
        ("What was on the menu?", "Ooh, what did you cook?"),
        ("The main was {thing}, it disappeared in minutes.", "I made {thing} from scratch."),
        ("mushroom risotto", "lamb tagine", "a lasagne", "paella", "a Thai green curry"),
        "What main dish did {who} cook for the dinner?",
        "When did {who} host the dinner?",
        "Is {who} a confident home cook?",
        "My {rel} {other} cooked {thing} for friends the same week.",
        "the guest {who} cooked dinner for",
    ),
    EventType(
        "book",
        (
            "I finished a novel {when} that my {rel} {companion} lent me.",
            "{companion}, my {rel}, gave me a book and I read it in one go {when}.",
        ),
        ("What was it called?", "Which book was it?"),
        ("It was {thing}, I could not put it down.", "{thing}, beautifully written."),
        ("The Remains of the Day", "Piranesi", "Station Eleven", "The Overstory", "Circe"),
        "Which book did {who} finish?",
        "When did {who} finish the novel?",
        "Does {who} like reading fiction?",
        "My {rel} {other} is reading {thing} at the moment.",
        "the person who lent {who} the novel",
    ),
    EventType(
        "race",
        (
            "I ran a charity race {when}, {companion} my {rel} ran it with me.",
            "{when} my {rel} {companion} and I ran a 10k for charity.",
        ),
        ("Well done! How long did it take you?", "Impressive, what was your time?"),
        ("{thing}, a personal best.", "I finished in {thing}, not bad at all."),
        ("52 minutes", "an hour and five", "48 minutes", "58 minutes"),
        "What was {who}'s time in the charity race?",
        "When did {who} run the charity race?",
        "Is {who} into running and fitness?",
        "My {rel} {other} ran a race too, in {thing}.",
        "the person who ran the charity race with {who}",
    ),
    EventType(
        "museum",
        (
            "{when} I spent the afternoon at a museum with my {rel} {companion}.",
            "My {rel} {companion} took me to a museum {when}, I did not expect to like it.",
        ),
        ("Which exhibition did you see?", "What was on?"),
        ("An exhibition about {thing}, fascinating.", "They had a show on {thing}."),
        ("Roman glass", "early photography", "deep-sea creatures", "Bauhaus furniture"),
        "What exhibition did {who} see at the museum?",
        "When did {who} visit the museum?",
        "Is {who} interested in history and art?",
        "My {rel} {other} saw an exhibition about {thing} last year.",
        "the person who took {who} to the museum",
    ),
]

CHITCHAT_USER = [
    "Ugh, the weather has been {weather} all week, I barely left the flat except for work.",
    "I watched a few episodes of {show} last night instead of sleeping, classic me.",
    "Work is {work} at the moment, my manager keeps moving the deadlines around.",
    "I had {food} for lunch today, nothing special but it hit the spot.",
    "Honestly nothing much new, just the usual routine, coffee, work, {show}, sleep.",
    "Do you have any tips for staying focused in the afternoon? I always crash around three.",
    "My phone screen cracked again, third time this year, I really need a case.",
    "I'm trying to drink more water, it's harder than it sounds with all the coffee.",
    "The neighbours were drilling at eight in the morning, on a Sunday, can you believe it.",
    "I keep meaning to call my parents more often, time just goes by so fast.",
    "The train was late again this morning, I spent forty minutes on the platform.",
    "I think I'm finally getting the hang of the new software at work, took a while.",
]
CHITCHAT_ASSISTANT = [
    "That sounds tiring. A short walk after lunch often helps with the afternoon slump.",
    "Ha, we've all been there. Was it any good, at least?",
    "Moving deadlines are stressful. Would it help to list what is actually due this week?",
    "Sometimes simple is best. Anything planned for the evening?",
    "Routines can be comforting too. Is there anything you'd like to change about it?",
    "A fixed break and some daylight usually help; so does a glass of water.",
    "That's annoying! A sturdier case and a screen protector might save the next one.",
    "Keeping a bottle on the desk is an easy reminder, and herbal tea counts too.",
    "That's early for a Sunday. Hopefully it was a one-off.",
    "A short call every week or so can be easier to keep up than long ones.",
    "Forty minutes is a lot. Is there another line you could take?",
    "Nice, new tools always take some getting used to.",
]
WEATHER = ["grey and rainy", "weirdly warm", "freezing", "windy", "foggy"]
SHOWS = ["a detective series", "a baking show", "a documentary", "an old sitcom", "a drama"]
WORK = ["hectic", "slow", "a bit chaotic", "fine, I guess", "intense"]
FOODS = ["a cheese sandwich", "leftover soup", "a salad", "noodles", "a burrito"]

UNANSWERABLE = [
    "What is the name of {who}'s grandmother's dentist?",
    "Which airline did {who} take to Iceland?",
    "What did {who} buy at the car dealership?",
    "How many goals did {who} score in the football final?",
    "What is {who}'s favourite opera singer?",
    "Where did {who} go skiing over the holidays?",
    "Which violin teacher does {who} see on Thursdays?",
    "What colour is {who}'s motorbike?",
]


def build(*, seed: int = 21, users: int = 20, sessions: int = 12, chatter: int = 9) -> ConvSet:
    """The set: ``users`` conversations of ``sessions`` dated sessions, ``chatter`` chit-chat
    exchanges per session around the turns that matter. Deterministic for a seed."""
    rng = random.Random(seed)
    names = rng.sample(USERS, users) if users <= len(USERS) else USERS * (users // 24 + 1)
    conversations = [
        _conversation(rng, name if users <= len(USERS) else f"{name}{i}", i, sessions, chatter)
        for i, name in enumerate(names[:users])
    ]
    return ConvSet(seed=seed, conversations=conversations)


def _fill(rng: random.Random, template: str, **values: str) -> str:
    extra = {
        "weather": rng.choice(WEATHER),
        "show": rng.choice(SHOWS),
        "work": rng.choice(WORK),
        "food": rng.choice(FOODS),
    }
    return template.format(**{**extra, **values})


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _when(rng: random.Random, date: dt.date) -> tuple[str, dt.date]:
    """A relative date as people say it, and the day it means."""
    days, phrase = rng.choice(
        [(1, "Yesterday"), (2, "The day before yesterday"), (7, "Last week"), (3, "On Saturday")]
    )
    return phrase, date - dt.timedelta(days=days)


def _conversation(
    rng: random.Random, user: str, index: int, sessions: int, chatter: int
) -> Conversation:
    conv = Conversation(user=user, split="tune" if index % 2 == 0 else "held-out")
    people = rng.sample(PEOPLE, 8)
    relations = {p: rng.choice(RELATIONS) for p in people}
    jobs = {p: rng.choice(JOBS) for p in people}
    cities = {p: rng.choice(CITIES) for p in people}
    events = rng.sample(EVENTS, min(len(EVENTS), sessions // 2 + 1))
    # What each session carries besides chit-chat.
    plan: list[list[tuple[str, object]]] = [[] for _ in range(sessions)]
    for i, event in enumerate(events):
        plan[(i * 2 + 1) % sessions].append(("event", event))
    for i, person in enumerate(people[:4]):
        plan[(i * 3) % sessions].append(("person", person))
    plan[1].append(("pet", None))
    plan[2].append(("plan", None))
    plan[min(sessions - 1, 8)].append(("change", None))
    plan[min(sessions - 1, 5)].append(("move", None))
    plan[min(sessions - 1, 10)].append(("moved", None))

    date = dt.date(2025, 1, 6) + dt.timedelta(days=rng.randrange(0, 60))
    turn_ids: dict[str, str] = {}
    questions: list[tuple[str, str, tuple[str, ...]]] = []
    colour_before, colour_after = rng.sample(COLOURS, 2)
    city_before, city_after = rng.sample(CITIES, 2)
    pet_kind, _ = rng.choice(PETS)
    pet_name = rng.choice(PET_NAMES)
    companions: dict[str, str] = {}  # event key -> companion

    def add(session: int, role: str, text: str) -> str:
        turn = Turn(
            id=f"{user}:s{session}:t{len(conv.turns)}",
            session=session,
            index=len([t for t in conv.turns if t.session == session]),
            role=role,
            text=text,
            date=date,
        )
        conv.turns.append(turn)
        return turn.id

    def chit(session: int) -> None:
        i = rng.randrange(len(CHITCHAT_USER))
        add(session, "user", _fill(rng, CHITCHAT_USER[i]))
        add(session, "assistant", CHITCHAT_ASSISTANT[i])

    for session in range(sessions):
        date += dt.timedelta(days=rng.randrange(3, 15))
        add(session, "user", rng.choice(["Hi!", "Hey, it's me again.", "Good morning!"]))
        add(session, "assistant", f"Hi {user}! How have you been?")
        items = plan[session]
        slots = sorted(rng.sample(range(chatter + len(items)), len(items)))
        item_iter = iter(items)
        for position in range(chatter + len(items)):
            if position not in slots:
                chit(session)
                continue
            kind, payload = next(item_iter)
            if kind == "event":
                assert isinstance(payload, EventType)
                event = payload
                companion = rng.choice(people[:4])
                companions[event.key] = companion
                when, _ = _when(rng, date)
                thing = rng.choice(event.things)
                tell = add(
                    session,
                    "user",
                    rng.choice(event.tell).format(
                        when=when if rng.random() < 0.5 else when.lower(),
                        companion=companion,
                        rel=relations[companion],
                    ),
                )
                add(session, "assistant", rng.choice(event.follow))
                detail = add(session, "user", rng.choice(event.detail).format(thing=thing))
                add(session, "assistant", "That sounds wonderful, thanks for telling me!")
                turn_ids[f"tell:{event.key}"] = tell
                questions.append(("single-hop", event.q_detail.format(who=user), (detail,)))
                questions.append(("temporal", event.q_when.format(who=user), (tell,)))
                questions.append(("open-domain", event.q_open.format(who=user), (tell, detail)))
                other = rng.choice([p for p in people if p != companion])
                if rng.random() < 0.5:  # someone else did the same kind of thing
                    other_thing = rng.choice([t for t in event.things if t != thing])
                    add(
                        session,
                        "user",
                        event.other_tell.format(
                            other=other, rel=relations[other], thing=other_thing
                        ),
                    )
                    add(session, "assistant", "Small world!")
                # Asked about the companion, who went along but is not said to have done it.
                questions.append(("adversarial", event.q_detail.format(who=companion), (detail,)))
                if companion in turn_ids:
                    questions.append(
                        (
                            "multi-hop",
                            f"What does {event.q_with.format(who=user)} do for a living?",
                            (tell, turn_ids[companion]),
                        )
                    )
            elif kind == "person":
                person = str(payload)
                job, place = jobs[person]
                said = add(
                    session,
                    "user",
                    f"My {relations[person]} {person} just started a new job as {_a(job)} at "
                    f"{place} in {cities[person]}.",
                )
                add(session, "assistant", f"Good for {person}! Are they enjoying it?")
                add(session, "user", "So far yes, though the hours are long.")
                turn_ids[person] = said
                questions.append(("single-hop", f"What is {person}'s job?", (said,)))
                questions.append(("adversarial", f"What is {user}'s {job} schedule like?", ()))
                # Multi-hop questions about an earlier event's companion, now that the job is said.
                for key, companion in companions.items():
                    if companion == person:
                        kind_of = next(e for e in EVENTS if e.key == key)
                        questions.append(
                            (
                                "multi-hop",
                                f"What does {kind_of.q_with.format(who=user)} do for a living?",
                                (turn_ids[f"tell:{key}"], said),
                            )
                        )
            elif kind == "pet":
                said = add(
                    session,
                    "user",
                    f"We adopted a {pet_kind} last month! Their name is {pet_name}.",
                )
                add(session, "assistant", f"Congratulations! How is {pet_name} settling in?")
                add(session, "user", "Chewing everything in sight, but we love them.")
                questions.append(("single-hop", f"What is the name of {user}'s pet?", (said,)))
                questions.append(("open-domain", f"Does {user} have an animal at home?", (said,)))
            elif kind == "plan":
                said = add(
                    session,
                    "user",
                    f"I'm going to repaint the kitchen, I think {colour_before} would look nice.",
                )
                add(session, "assistant", f"{colour_before.capitalize()} sounds cheerful!")
                turn_ids["plan"] = said
            elif kind == "change":
                said = add(
                    session,
                    "user",
                    f"Change of plans for the kitchen walls: {colour_after} instead, "
                    f"{colour_before} looked awful on the sample.",
                )
                add(session, "assistant", f"Good call, {colour_after} is a classic.")
                questions.append(
                    ("temporal", f"What colour is {user} painting the kitchen?", (said,))
                )
                questions.append(
                    (
                        "multi-hop",
                        f"Which colour did {user} first pick for the kitchen before changing "
                        "their mind?",
                        (turn_ids["plan"], said),
                    )
                )
            elif kind == "move":
                said = add(
                    session,
                    "user",
                    f"Big news: I'm thinking about moving to {city_before} for a fresh start.",
                )
                add(session, "assistant", "That's a big step! What draws you there?")
                add(session, "user", "The food, mostly, and it's cheaper than here.")
                turn_ids["move"] = said
            elif kind == "moved":
                said = add(
                    session,
                    "user",
                    f"Forget what I said about {city_before}, I signed a lease in "
                    f"{city_after} yesterday!",
                )
                add(session, "assistant", f"Wow, {city_after}! When do you get the keys?")
                questions.append(("temporal", f"Which city is {user} moving to?", (said,)))
                questions.append(
                    ("adversarial", f"Which city is {user}'s {relations[people[0]]} moving to?", ())
                )
        if session == sessions - 1:
            add(session, "user", "Anyway, I should get going. Talk soon!")
            add(session, "assistant", "Take care!")
    for template in rng.sample(UNANSWERABLE, 4):
        questions.append(("adversarial", template.format(who=user), ()))
    conv.questions = [
        Question(id=f"{user}:q{i}", user=user, text=text, category=cat, evidence=evidence)
        for i, (cat, text, evidence) in enumerate(dict.fromkeys(questions))
    ]
    return conv
