"""A long-conversation evidence set: hundreds of turns per user, questions answered by one or two.

Generated from a seed (nothing downloaded), and written after the recall rules it measures
were settled: it is reported, never tuned on. Each user talks to an assistant over
``sessions`` dated sessions of about ``turns`` turns, mostly small talk (weather, errands,
series, cooking, work gripes) in many wordings. Sixteen things about the user (dentist,
allergy, pet, job, sister, car, sport, birthday, favourite dish, a trip, a language, partner,
a health worry, a child's school, an instrument, the commute) are each said once, in one user
turn or in two (the user mentions it, the assistant asks, the user answers), somewhere in the
first two thirds of the sessions. Around them:

- distractors with the same words about other people ("my colleague is allergic to ...",
  "the neighbour's dog is called ...");
- later, the user sometimes asks about a thing again and the assistant only says it will
  check (the question repeats the words the evaluation asks with, and holds no answer).

Each question is asked after the last session, in two wordings: ``overlap`` shares a word
with the evidence ("What is the name of my dentist?"), ``paraphrase`` shares none ("Who looks
after my teeth?"). Evidence is the turn (or the two turns) that states the thing.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

WORDINGS = ("overlap", "paraphrase")


@dataclass(frozen=True)
class Turn:
    id: str
    session: int
    role: str
    text: str
    date: dt.date


@dataclass(frozen=True)
class Question:
    id: str
    user: str
    topic: str
    wording: str
    text: str
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    user: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


@dataclass
class LongSet:
    seed: int
    conversations: list[Conversation]

    def describe(self) -> str:
        turns = sum(len(c.turns) for c in self.conversations)
        questions = sum(len(c.questions) for c in self.conversations)
        sessions = len({t.session for t in self.conversations[0].turns})
        two = sum(1 for c in self.conversations for q in c.questions if len(q.evidence) == 2)
        return (
            f"{len(self.conversations)} users x {sessions} sessions, {turns:,} turns "
            f"({turns // len(self.conversations)} per user), {questions} questions "
            f"({two} with two evidence turns), seed {self.seed}"
        )


@dataclass(frozen=True)
class Topic:
    name: str
    values: dict[str, tuple[str, ...]]
    said: tuple[str, ...]  # one user turn stating it
    mention: tuple[str, ...]  # two turns: the user mentions it ...
    follow: tuple[str, ...]  # ... the assistant asks ...
    answer: tuple[str, ...]  # ... the user answers
    overlap: str
    paraphrase: str
    distractors: tuple[str, ...]
    recheck: str  # the user asks again later (no answer follows)


NAMES = ("Lena", "Marco", "Priya", "Tomasz", "Aiko", "Samir", "Ines", "Owen", "Greta", "Kofi")
SURNAMES = ("Alvarez", "Novak", "Okafor", "Lindqvist", "Haddad", "Moreau", "Tanaka", "Brennan")
CITIES = ("Valencia", "Gdansk", "Leeds", "Porto", "Graz", "Malmo", "Bruges", "Turin")

TOPICS = (
    Topic(
        "dentist",
        {"x": SURNAMES},
        ("My dentist is Dr. {x}, the practice right by the station.",),
        ("I finally found a new dentist near the office.",),
        ("Oh good, who did you go with?",),
        ("Dr. {x}, she was really gentle with me.",),
        "What is the name of my dentist?",
        "Who looks after my teeth?",
        ("My colleague swears by her dentist, Dr. {y}.", "Dr. {y} is the dentist my mum uses."),
        "Remind me, what was my dentist called?",
    ),
    Topic(
        "allergy",
        {"x": ("peanuts", "shellfish", "sesame", "kiwi", "penicillin", "cat hair")},
        ("I'm allergic to {x}, so I always have to check labels.",),
        ("I had a bad allergic reaction as a kid.",),
        ("That sounds scary. What were you reacting to?",),
        ("{X}. I still carry medication just in case.",),
        "What am I allergic to?",
        "Which thing makes me ill so I must avoid it?",
        ("My flatmate is allergic to {y}, poor thing.", "Half my team has a {y} allergy."),
        "What's my allergy again?",
    ),
    Topic(
        "pet",
        {
            "x": ("Biscuit", "Pepper", "Noodle", "Juniper", "Waffles", "Ziggy"),
            "a": ("beagle", "tabby cat", "rabbit", "greyhound", "parrot"),
        },
        ("We adopted a {a} called {x} in the spring.",),
        ("We brought a {a} home from the shelter last month.",),
        ("How lovely! What did you name it?",),
        ("{X}, the kids chose it.",),
        "What is my {a} called?",
        "What did we name the animal we took in?",
        ("The neighbours' {a} is called {y}.", "My cousin's {a}, {y}, chews everything."),
        "What's the name of my {a} again?",
    ),
    Topic(
        "job",
        {
            "x": (
                "nurse",
                "structural engineer",
                "primary teacher",
                "pharmacist",
                "data analyst",
                "carpenter",
            )
        },
        ("I work as a {x} and the hours are long.",),
        ("Work has been exhausting this month.",),
        ("Sorry to hear it. What is it you do again?",),
        ("I'm a {x}, and we're short-staffed.",),
        "What is my job?",
        "How do I earn my living?",
        ("My brother-in-law is a {y}.", "My old roommate retrained as a {y}."),
        "What do I work as, did I tell you?",
    ),
    Topic(
        "sister",
        {"x": CITIES, "n": NAMES},
        ("My sister {n} lives in {x} now.",),
        ("My sister {n} moved abroad last year.",),
        ("Big change! Where did she end up?",),
        ("{X}, she loves it there.",),
        "Where does my sister live?",
        "In which city is my sibling based?",
        ("My friend {m} lives in {y}.", "A coworker just moved to {y}."),
        "Which city is my sister in, remind me?",
    ),
    Topic(
        "car",
        {"x": ("red Skoda", "grey Volvo", "blue Fiat", "white Toyota", "green Renault")},
        ("I drive an old {x}, it never lets me down.",),
        ("The car needs a service soon.",),
        ("What are you driving these days?",),
        ("An old {x}.",),
        "What car do I drive?",
        "Which vehicle do I own?",
        ("My dad drives a {y}.", "Someone scratched a {y} in our street."),
        "What car was it I have?",
    ),
    Topic(
        "sport",
        {"x": ("badminton", "five-a-side football", "squash", "volleyball", "table tennis")},
        ("On Saturdays I play {x} with friends from university.",),
        ("I joined a club to stay active.",),
        ("Nice! What do you play?",),
        ("{X}, every Saturday morning.",),
        "What sport do I play on Saturdays?",
        "How do I keep fit at the weekend?",
        ("My boss plays {y} at lunch.", "The kids next door play {y} in the yard."),
        "Which sport do I play again?",
    ),
    Topic(
        "birthday",
        {"x": ("the 3rd of May", "the 19th of August", "the 11th of January", "the 27th of June")},
        ("My birthday is on {x}, in case you want to remember.",),
        ("My birthday is coming up.",),
        ("Oh! When exactly is it?",),
        ("On {x}.",),
        "When is my birthday?",
        "On what date was I born?",
        ("My partner's birthday is on {y}.", "The office party falls on {y}."),
        "When's my birthday, do you know?",
    ),
    Topic(
        "dish",
        {"x": ("mushroom risotto", "lamb tagine", "pad thai", "spinach lasagne", "fish pie")},
        ("My favourite dish is {x}, I could eat it every day.",),
        ("I cooked my favourite dish last night.",),
        ("Yum, which one is that?",),
        ("{X}, my grandmother's recipe.",),
        "What is my favourite dish?",
        "What meal do I love above all others?",
        ("My flatmate made {y} yesterday.", "The canteen served {y} on Tuesday."),
        "What's my favourite food again?",
    ),
    Topic(
        "trip",
        {"x": ("Mexico", "Iceland", "Vietnam", "Morocco", "Canada", "Chile")},
        ("In October I'm flying to {x} for my cousin's wedding.",),
        ("I booked the flights for my cousin's wedding.",),
        ("Exciting! Where is the wedding?",),
        ("In {x}, in October.",),
        "Where am I flying in October?",
        "Which country is the family wedding in?",
        ("My manager just got back from {y}.", "A documentary about {y} was on last night."),
        "Where was I going in October?",
    ),
    Topic(
        "language",
        {"x": ("Portuguese", "Japanese", "Greek", "Dutch", "Korean", "Turkish")},
        ("I've been learning {x} on an app every evening.",),
        ("I started a language course this year.",),
        ("Good for you! Which language?",),
        ("{X}, it's harder than I expected.",),
        "Which language am I learning?",
        "What am I studying every evening on my phone?",
        ("My nephew studies {y} at school.", "The new hire speaks fluent {y}."),
        "What language was I learning?",
    ),
    Topic(
        "partner",
        {"x": ("firefighter", "architect", "vet", "journalist", "chef"), "n": NAMES},
        ("My partner {n} is a {x}, so our schedules clash.",),
        ("My partner {n} got a promotion at work.",),
        ("Congratulations to them! What does {n} do?",),
        ("{n} is a {x}.",),
        "What does my partner do for work?",
        "What is the occupation of the person I live with?",
        ("My friend's husband is a {y}.", "A {y} came to talk at the school."),
        "What's my partner's job, remind me?",
    ),
    Topic(
        "health",
        {"x": ("blood pressure", "cholesterol", "iron levels", "blood sugar")},
        ("My doctor told me to keep an eye on my {x}.",),
        ("I had a check-up at the clinic this week.",),
        ("How did it go? Anything to watch?",),
        ("I need to watch my {x}, apparently.",),
        "What did my doctor tell me to watch?",
        "Which medical number must I keep track of?",
        ("My uncle has trouble with his {y}.", "The pharmacy checks {y} for free."),
        "What was the thing my doctor said to watch?",
    ),
    Topic(
        "school",
        {
            "x": ("Riverside Primary", "St Anne's", "Hillcrest Academy", "Oakfield School"),
            "k": ("Leo", "Mia", "Noah", "Ava"),
        },
        ("My son {k} just started at {x}.",),
        ("{k} started at a new school this week.",),
        ("Big step! Which school is it?",),
        ("{X}, just round the corner.",),
        "Which school does my son go to?",
        "Where is my boy being educated?",
        ("My niece goes to {y}.", "There was a fire drill at {y}."),
        "Which school was {k} at again?",
    ),
    Topic(
        "instrument",
        {"x": ("cello", "saxophone", "piano", "ukulele", "drums")},
        ("I've been taking {x} lessons on Wednesdays.",),
        ("I finally signed up for music lessons.",),
        ("Lovely! What are you learning to play?",),
        ("The {x}.",),
        "What instrument am I learning?",
        "What do I practise making music on?",
        ("My neighbour plays the {y} at night.", "My daughter's friend plays {y}."),
        "What instrument was it I play?",
    ),
    Topic(
        "commute",
        {"x": ("the number 12 tram", "the overground", "my bike along the canal", "the ferry")},
        ("I get to work on {x} every morning.",),
        ("My commute was awful today.",),
        ("Oh no, how do you usually get in?",),
        ("On {x}.",),
        "How do I get to work?",
        "What is my usual way into the office?",
        ("My colleague comes in on {y}.", "They closed {y} for repairs."),
        "How did I say I get to work?",
    ),
)

SMALL_TALK = (
    (
        "It's been raining all week here, I'm sick of it.",
        "Grey weeks are draining. Any plans indoors?",
    ),
    ("I watched two episodes of that detective series last night.", "Is it any good so far?"),
    ("I need to buy a new kettle, ours started leaking.", "Annoying! Glass or steel this time?"),
    ("Work was slow today, mostly emails.", "Sometimes a quiet day is welcome."),
    ("I tried a new bakery on the high street.", "What did you get?"),
    ("I'm thinking about repainting the hallway.", "What colour are you considering?"),
    ("The traffic was terrible this morning.", "That's a rough start to the day."),
    ("I finally finished that long novel.", "How did you find the ending?"),
    ("We had friends over for dinner on Friday.", "Sounds like a nice evening."),
    ("My phone battery barely lasts a day now.", "Maybe it's time for a new battery."),
    ("I went for a long walk by the river.", "Lovely, was it busy?"),
    ("I can't decide what to cook tonight.", "How about something quick like an omelette?"),
    ("The heating in the flat is acting up again.", "Have you called the landlord?"),
    ("I've been sleeping badly lately.", "Maybe try less screen time before bed?"),
    ("Our team had a long meeting about budgets.", "Meetings like that can drag on."),
    ("I sorted out the garage at last.", "That must feel satisfying."),
    ("There was a street market in town today.", "Did you pick anything up?"),
    ("I've started drinking less coffee.", "How's that going?"),
    ("The washing machine finally broke.", "Oh dear, repair or replace?"),
    ("It's sunny for once, I might go out.", "Enjoy it while it lasts!"),
    ("I watched a documentary about deep sea fish.", "Those creatures are fascinating."),
    ("My inbox is out of control.", "Maybe block an hour to clear it?"),
    ("We're planning a small garden this year.", "Herbs are a good place to start."),
    ("I keep forgetting to water the plants.", "A reminder on your phone might help."),
    ("The bus was late again.", "That's frustrating, how late?"),
    ("I've been trying to read more before bed.", "Any good books lately?"),
    ("We ordered takeaway twice this week.", "Sometimes you just need a break from cooking."),
    ("The new neighbours seem friendly.", "That's nice to hear."),
    ("I got a parking ticket, unbelievable.", "Ugh, was the sign unclear?"),
    ("I'm trying to save a bit more each month.", "Small amounts add up."),
)
FOLLOW_UPS = (
    "Not really, just staying in.",
    "Maybe, I'll see how I feel.",
    "Yes, it was fine in the end.",
    "Probably, it's on my list.",
    "Ha, you might be right.",
    "I'll think about it.",
    "Not sure yet, honestly.",
    "That's a good idea, thanks.",
)


def build(*, seed: int = 35, users: int = 10, sessions: int = 10, turns: int = 36) -> LongSet:
    """``users`` conversations of ``sessions`` sessions of about ``turns`` turns each."""
    rng = random.Random(seed)
    return LongSet(seed, [_conversation(rng, f"u{n:02d}", sessions, turns) for n in range(users)])


def _values(rng: random.Random, topic: Topic) -> dict[str, str]:
    picked = {key: rng.choice(options) for key, options in topic.values.items()}
    others = [v for v in topic.values["x"] if v != picked["x"]]
    picked["y"] = rng.choice(others)
    picked["m"] = rng.choice([n for n in NAMES if n != picked.get("n")])
    picked["X"] = picked["x"][0].upper() + picked["x"][1:]
    return picked


def _conversation(rng: random.Random, user: str, sessions: int, turns: int) -> Conversation:
    conv = Conversation(user)
    start = dt.date(2026, 1, 5) + dt.timedelta(days=rng.randrange(30))
    # Where each topic is said (a session in the first two thirds, never the last), and where
    # its distractors and re-asks go.
    told = max(1, (2 * sessions) // 3)
    plan: dict[int, list[tuple[str, Topic, dict[str, str]]]] = {s: [] for s in range(sessions)}
    for topic in TOPICS:
        values = _values(rng, topic)
        plan[rng.randrange(told)].append(("say", topic, values))
        for _ in range(2):
            plan[rng.randrange(sessions - 1)].append(("distract", topic, values))
        if rng.random() < 0.5:
            plan[rng.randrange(told, sessions - 1)].append(("recheck", topic, values))
    evidence: dict[str, tuple[str, ...]] = {}
    said_values: dict[str, dict[str, str]] = {}
    for number in range(sessions):
        date = start + dt.timedelta(days=7 * number + rng.randrange(3))
        events = plan[number]
        rng.shuffle(events)
        pairs = max(len(events) + 2, turns // 2)
        slots = sorted(rng.sample(range(pairs), len(events)))
        queue = dict(zip(slots, events, strict=True))

        def add(role: str, text: str, number: int = number, date: dt.date = date) -> str:
            turn = Turn(f"{user}-{len(conv.turns)}", number, role, text, date)
            conv.turns.append(turn)
            return turn.id

        for slot in range(pairs):
            event = queue.get(slot)
            if event is None:
                talk, reply = rng.choice(SMALL_TALK)
                add("user", talk)
                add("assistant", reply)
                if rng.random() < 0.3:
                    add("user", rng.choice(FOLLOW_UPS))
                    add("assistant", "Okay, let me know how it goes.")
                continue
            what, topic, values = event
            if what == "say":
                said_values[topic.name] = values
                if rng.random() < 0.5:
                    first = add("user", rng.choice(topic.said).format(**values))
                    add("assistant", "Thanks for telling me, I'll remember that.")
                    evidence[topic.name] = (first,)
                else:
                    first = add("user", rng.choice(topic.mention).format(**values))
                    add("assistant", rng.choice(topic.follow).format(**values))
                    second = add("user", rng.choice(topic.answer).format(**values))
                    add("assistant", "Got it, noted.")
                    evidence[topic.name] = (first, second)
            elif what == "distract":
                add("user", rng.choice(topic.distractors).format(**values))
                add("assistant", "Ah, interesting.")
            else:
                add("user", topic.recheck.format(**values))
                add("assistant", "Let me check and get back to you.")
    for topic in TOPICS:
        values = said_values[topic.name]
        for wording in WORDINGS:
            text = (topic.overlap if wording == "overlap" else topic.paraphrase).format(**values)
            conv.questions.append(
                Question(
                    f"{user}-{topic.name}-{wording}",
                    user,
                    topic.name,
                    wording,
                    text,
                    evidence[topic.name],
                )
            )
    return conv
