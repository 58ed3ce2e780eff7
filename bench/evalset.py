"""A synthetic, deterministic evaluation set for long-term recall: chats of users, and questions.

Each synthetic user talks to an assistant over several sessions about everyday topics (cooking,
code, money, trips, ...). About sixteen facts about the user (allergy, pet, job, family, travel
plans, moving city, ...) are said once, in one turn or in two (the assistant asks, the user
answers), at random places amid small talk and distractors: turns that share the questions'
vocabulary without answering them (a colleague's allergy, the neighbour's dog, the city the
user lived in before moving). Each question's answer lies in those one or two evidence turns
and is phrased differently (synonyms, other word forms, the user's first person or an agent's
third person); some share no content word with the evidence at all.

Nothing is downloaded: everything comes from the tables below and one seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ttmemory.text import normalise_terms

Values = dict[str, str]


@dataclass(frozen=True)
class Turn:
    id: str
    session: int
    index: int
    role: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    user: str
    text: str
    evidence: tuple[str, ...]
    topic: str

    def shares_words_with(self, turns: dict[str, Turn]) -> bool:
        """True if a normalised term of the question occurs in an evidence turn."""
        mine = set(normalise_terms(self.text))
        return any(mine & set(normalise_terms(turns[t].text)) for t in self.evidence)


@dataclass
class UserLog:
    name: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


@dataclass
class EvalSet:
    seed: int
    users: list[UserLog]

    @property
    def turn_count(self) -> int:
        return sum(len(u.turns) for u in self.users)

    @property
    def question_count(self) -> int:
        return sum(len(u.questions) for u in self.users)

    def describe(self) -> str:
        turns = {t.id: t for u in self.users for t in u.turns}
        questions = [q for u in self.users for q in u.questions]
        hard = sum(1 for q in questions if not q.shares_words_with(turns))
        sessions = len({t.session for t in self.users[0].turns}) if self.users else 0
        return (
            f"{len(self.users)} users x {sessions} sessions, {self.turn_count:,} turns, "
            f"{len(questions)} questions ({hard} share no content word with their evidence), "
            f"seed {self.seed}"
        )


@dataclass(frozen=True)
class FactType:
    """A kind of fact: how it is said, asked about, and what only looks like it."""

    name: str
    values: list[Values]
    states: list[str]  # the user volunteers it in one turn
    asks: list[str]  # the assistant asks ...
    answers: list[str]  # ... and the user answers (two evidence turns)
    questions: list[str]
    distractors: list[str]  # (role-prefixed "u:" or "a:") near misses
    lookups: list[str] = field(default_factory=list)  # name something of the fact, ask the rest


FIRST_NAMES = [
    "Ada", "Bruno", "Chiara", "Dmitri", "Esme", "Farid", "Greta", "Hiro", "Ines", "Jonas",
    "Kemi", "Lars", "Maya", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tara",
    "Umar", "Vera", "Wen", "Yusuf", "Zoe",
]  # fmt: skip
CITIES = [
    "Lisbon", "Berlin", "Toronto", "Melbourne", "Denver", "Edinburgh", "Austin", "Lyon",
    "Rotterdam", "Seattle", "Valencia", "Krakow", "Dublin", "Montreal", "Bristol", "Porto",
]  # fmt: skip
FOODS = [
    "lentil soup", "roast chicken", "banana bread", "shakshuka", "risotto", "fish tacos",
    "pad thai", "sourdough", "chili", "pancakes", "ratatouille", "paella", "lasagna", "curry",
]  # fmt: skip
VEGETABLES = ["carrots", "broccoli", "sweet potatoes", "cauliflower", "brussels sprouts", "beets"]
MOVIES = [
    "Dune", "Arrival", "Paddington 2", "The Grand Budapest Hotel", "Spirited Away", "Heat",
    "Past Lives", "Knives Out", "Alien", "Amélie", "Interstellar", "Ratatouille",
]  # fmt: skip
SHOWS = ["Severance", "The Bear", "Slow Horses", "Succession", "Shogun", "Taskmaster", "Bluey"]
BOOKS = [
    "Project Hail Mary", "Piranesi", "The Overstory", "Circe", "Educated", "Dune",
    "A Gentleman in Moscow", "The Remains of the Day", "Klara and the Sun", "Sapiens",
]  # fmt: skip
LIBS = ["pandas", "Django", "FastAPI", "NumPy", "requests", "asyncio", "pytest", "SQLAlchemy"]
ERRORS = ["KeyError", "TypeError", "a timeout", "an import error", "a segfault", "a 500 error"]
PLANTS = ["tomatoes", "basil", "a fiddle-leaf fig", "succulents", "roses", "chillies", "mint"]
GADGETS = ["laptop", "phone", "router", "printer", "smartwatch", "e-reader", "headphones"]
GIFTS = ["a board game", "a scarf", "a cookbook", "noise-cancelling headphones", "a plant"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
]  # fmt: skip
RELATIVES = ["my cousin", "a friend from work", "my neighbour", "my aunt", "an old classmate"]


def _v(**kwargs: str) -> Values:
    return dict(kwargs)


FACT_TYPES: list[FactType] = [
    FactType(
        "allergy",
        [
            _v(allergen="peanuts", reaction="hives"),
            _v(allergen="shellfish", reaction="a swollen throat"),
            _v(allergen="sesame", reaction="an itchy rash"),
            _v(allergen="eggs", reaction="stomach cramps"),
            _v(allergen="kiwi", reaction="a tingling mouth"),
            _v(allergen="tree nuts", reaction="hives all over"),
            _v(allergen="soy", reaction="a blotchy rash"),
            _v(allergen="mustard", reaction="a puffy face"),
        ],
        [
            "Quick thing before I forget: {allergen} give me {reaction}, so please never "
            "suggest anything with them.",
            "I carry an EpiPen everywhere because of {allergen}. Found that out the hard way "
            "at a wedding.",
            "Skip the satay sauce idea, {allergen} and I really do not get along: last time I "
            "ended up with {reaction}.",
        ],
        [
            "Before I put the meal plan together: is there anything you can't eat?",
            "Should I avoid any ingredients in these recipes for you?",
        ],
        [
            "Yes, {allergen}. Even a trace gives me {reaction}.",
            "{allergen}, strictly. My body reacts with {reaction} within minutes.",
        ],
        [
            "Which foods trigger an allergic reaction in the user?",
            "Is there an ingredient I must leave out when cooking for them?",
            "What is the user allergic to?",
            "Do you remember my food allergy?",
            "Anything I should keep off the user's plate for medical reasons?",
            "What can't the user eat without getting sick?",
        ],
        [
            "u:My coworker had an allergic reaction to shrimp at the team lunch, it was scary.",
            "u:The bakery downstairs labels every allergen on the menu now, which is nice.",
            "u:Pollen season is brutal this year, half the office is sneezing.",
            "a:In the EU, restaurants have to declare the 14 major allergens for every dish.",
            "u:My nephew outgrew his egg allergy, the doctor says that happens a lot.",
        ],
        [
            "What happens to the user after eating {allergen}?",
        ],
    ),
    FactType(
        "pet",
        [
            _v(species="dog", breed="beagle", pet="Biscuit"),
            _v(species="cat", breed="tabby", pet="Miso"),
            _v(species="dog", breed="border collie", pet="Pepper"),
            _v(species="cat", breed="Maine Coon", pet="Nori"),
            _v(species="rabbit", breed="lop-eared", pet="Clover"),
            _v(species="parrot", breed="African grey", pet="Kiwi"),
            _v(species="dog", breed="greyhound", pet="Olive"),
            _v(species="cat", breed="Siamese", pet="Tofu"),
        ],
        [
            "{pet} knocked my coffee over again this morning, classic {breed} behaviour.",
            "I adopted a {breed} {species} called {pet} from the shelter last spring and she "
            "runs the house now.",
            "Sorry for the slow reply, had to take {pet} to the vet. My {breed} ate a sock.",
        ],
        [
            "Do you have any animals at home?",
            "Is there anyone at home who needs looking after while you travel?",
        ],
        [
            "Just one, a {breed} named {pet}.",
            "Only {pet}, my {breed} {species}. Spoiled rotten.",
        ],
        [
            "What kind of animal does the user own, and what's its name?",
            "What is the name of the user's pet?",
            "Do I have a dog or a cat?",
            "Who needs a pet sitter when the user goes away?",
            "What's the name of the user's {species}?",
        ],
        [
            "u:My neighbour's dog barks at every single delivery driver.",
            "u:I saw a video of a cat playing the piano, it made my day.",
            "u:The animal shelter near the park is running an adoption day on Saturday.",
            "a:Most vets recommend a yearly check-up and vaccinations for pets.",
            "u:My sister is thinking of getting a puppy but her flat is tiny.",
        ],
        [
            "What breed is {pet}?",
            "Tell me about {pet}.",
        ],
    ),
    FactType(
        "job",
        [
            _v(job="paediatric nurse", place="St. Mary's hospital"),
            _v(job="backend developer", place="a fintech startup"),
            _v(job="chemistry teacher", place="Lincoln High"),
            _v(job="civil engineer", place="the city transport office"),
            _v(job="accountant", place="a mid-size audit firm"),
            _v(job="pastry chef", place="a hotel bakery"),
            _v(job="UX designer", place="a small agency"),
            _v(job="pharmacist", place="a village pharmacy"),
            _v(job="veterinarian", place="a clinic for farm animals"),
            _v(job="journalist", place="a regional newspaper"),
        ],
        [
            "Long shift today, twelve hours on my feet. Being a {job} at {place} is no joke.",
            "I've been a {job} at {place} for six years now and I still like it.",
            "My manager at {place} wants me to train the new {job}s next month.",
        ],
        [
            "What do you do for a living, if you don't mind me asking?",
            "So I can tailor the examples: what's your line of work?",
        ],
        ["I'm a {job}, at {place}.", "{job}. I work at {place}."],
        [
            "What is the user's occupation?",
            "How does the user earn a living?",
            "What's my profession again?",
            "Which company or institution employs the user, and in what role?",
            "Where does the user work?",
        ],
        [
            "u:My brother keeps complaining about his boss at the bank.",
            "u:Should I put volunteer work on my CV or is that weird?",
            "u:Work has been hectic, back-to-back meetings all week.",
            "a:Many professions now ask for continuing education credits each year.",
            "u:A friend just quit her job to travel for a year, I'm jealous.",
        ],
        [
            "How long has the user worked at {place}?",
        ],
    ),
    FactType(
        "move",
        [_v(old=a, new=b) for a, b in zip(CITIES[:8], CITIES[8:], strict=True)],
        [
            "Finally done unpacking, the move from {old} to {new} took three weekends.",
            "We signed the lease! Leaving {old} behind and living in {new} from the first of "
            "the month.",
        ],
        [
            "Any news since we last talked?",
            "How has the last month been?",
        ],
        [
            "Big one: I moved to {new}. Packed up the whole flat in {old}.",
            "I relocated to {new}, so no more {old} winters for me.",
        ],
        [
            "Which city is the user living in now?",
            "Where did the user relocate to?",
            "Where do I live these days?",
            "What's the user's current home town?",
            "Where did the user move to?",
        ],
        [
            "u:I've lived in {old} my whole adult life and I know every café.",
            "u:Moving furniture is the worst, my back still hurts from helping {rel}.",
            "u:Is {other} worth visiting in autumn?",
            "a:When relocating, remember to update your address with your bank and doctor.",
        ],
        [
            "Does the user still live in {old}?",
            "When did the user leave {old}?",
        ],
    ),
    FactType(
        "partner",
        [
            _v(relation="wife", partner="Elena"),
            _v(relation="husband", partner="Marcus"),
            _v(relation="partner", partner="Sam"),
            _v(relation="girlfriend", partner="Priya"),
            _v(relation="boyfriend", partner="Tomás"),
            _v(relation="wife", partner="Hannah"),
        ],
        [
            "{partner}, my {relation}, surprised me with concert tickets last night.",
            "My {relation} {partner} and I are celebrating eight years together next week.",
        ],
        ["Who else is coming on the trip?", "Will you be celebrating with anyone special?"],
        [
            "Just me and {partner}, my {relation}.",
            "Yes, with {partner}. We've been together since university.",
        ],
        [
            "Who is the user's spouse or significant other?",
            "What's the name of the person I'm married to or dating?",
            "Is the user in a relationship, and with whom?",
            "What's the name of the user's {relation}?",
        ],
        [
            "u:My friend's husband cooked for twenty people at their party, impressive.",
            "u:Any tips for keeping a conversation going on a first date?",
            "a:Anniversary gifts traditionally follow materials, like paper for the first year.",
            "u:{rel} is getting divorced, it's been a rough year for them.",
        ],
        [
            "How long has the user been with {partner}?",
        ],
    ),
    FactType(
        "children",
        [
            _v(child="daughter", kid="Lily", age="six"),
            _v(child="son", kid="Noah", age="nine"),
            _v(child="twins", kid="Ava and Leo", age="four"),
            _v(child="son", kid="Mateo", age="two"),
            _v(child="daughter", kid="Freya", age="eleven"),
        ],
        [
            "Have to leave early, my {child} {kid} has a school play tonight.",
            "{kid} turned {age} last week and now it's dinosaurs all day, every day.",
        ],
        ["Do you have kids?", "Is this for a family with little ones?"],
        ["Yes, my {child} {kid}, {age} years old.", "{kid}, who is {age}. Chaos, in a good way."],
        [
            "Does the user have children, and how old are they?",
            "What are the names of the user's kids?",
            "How old is my little one?",
            "What's my {child}'s name?",
        ],
        [
            "u:My nephew just started kindergarten and loves it.",
            "u:The primary school near my office has a bake sale every Friday.",
            "a:For a birthday party with small children, plan short games and lots of snacks.",
            "u:{rel} is expecting a baby in the spring.",
        ],
        [
            "How old is {kid}?",
        ],
    ),
    FactType(
        "sibling",
        [
            _v(sib="sister", sibname="Anna", where="Toronto"),
            _v(sib="brother", sibname="Karl", where="Singapore"),
            _v(sib="sister", sibname="Maya", where="Nairobi"),
            _v(sib="brother", sibname="Luca", where="Oslo"),
            _v(sib="sister", sibname="Ingrid", where="Cape Town"),
        ],
        [
            "My {sib} {sibname} is flying in from {where} next weekend, I need to clean.",
            "Had a long video call with {sibname} last night. Being an ocean apart from my "
            "{sib} in {where} is hard.",
        ],
        ["Any family coming to visit over the holidays?"],
        ["My {sib} {sibname}, all the way from {where}."],
        [
            "Does the user have any brothers or sisters?",
            "Who is the user's sibling and where do they live?",
            "Which relative of mine lives abroad?",
            "Where does the user's {sib} live?",
        ],
        [
            "u:My best friend is basically a sister to me at this point.",
            "a:Time zones make calls tricky; a shared calendar helps families abroad.",
            "u:{rel} just got back from a work trip to {other}.",
        ],
        [
            "Where does {sibname} live?",
        ],
    ),
    FactType(
        "travel",
        [
            _v(dest="Japan", month="April", purpose="see the cherry blossoms"),
            _v(dest="Iceland", month="February", purpose="chase the northern lights"),
            _v(dest="Peru", month="September", purpose="hike the Inca Trail"),
            _v(dest="Portugal", month="June", purpose="learn to surf"),
            _v(dest="Kenya", month="August", purpose="go on safari"),
            _v(dest="New Zealand", month="November", purpose="drive around the South Island"),
            _v(dest="Norway", month="July", purpose="kayak in the fjords"),
            _v(dest="Vietnam", month="October", purpose="eat my way through Hanoi"),
        ],
        [
            "I just booked flights to {dest} for {month}! I've wanted to {purpose} for years.",
            "Counting down to {month}: two weeks in {dest} to {purpose}.",
        ],
        ["Any big plans coming up?", "Are you taking any time off this year?"],
        [
            "{dest} in {month}. I finally want to {purpose}.",
            "Yes, {month}, {dest}. Tickets are already paid for.",
        ],
        [
            "Where is the user going on holiday, and when?",
            "What trip does the user have planned?",
            "Which country am I visiting later this year?",
            "When is the user's vacation abroad?",
            "Where is the user flying in {month}?",
        ],
        [
            "u:My manager just got back from a conference in {other}.",
            "u:Flights are so expensive this year, it's ridiculous.",
            "a:For most layovers under 24 hours you don't need a transit visa, but check first.",
            "u:{rel} spent a month backpacking last summer and won't stop talking about it.",
        ],
        [
            "When is the user's trip to {dest}?",
            "Why is the user going to {dest}?",
        ],
    ),
    FactType(
        "diet",
        [
            _v(diet="vegetarian", since="college"),
            _v(diet="vegan", since="three years ago"),
            _v(diet="pescatarian", since="I moved out"),
            _v(diet="vegetarian", since="I was fourteen"),
        ],
        [
            "I stopped eating meat back when {since}, so I'm fully {diet} now.",
            "No steak for me, thanks. I've been {diet} since {since}.",
        ],
        ["Do you follow any particular diet?"],
        ["I'm {diet}, have been since {since}."],
        [
            "Can I suggest a beef stew recipe to the user?",
            "What are the user's eating habits?",
            "Does the user avoid meat?",
            "Is there a way of eating I follow that recipes should respect?",
            "Does the user eat meat?",
        ],
        [
            "u:That new burger place downtown is always packed.",
            "a:A pressure cooker makes brown rice in about 22 minutes.",
            "u:{rel} is doing some keto thing and only talks about bacon.",
        ],
        [
            "Since when has the user been {diet}?",
        ],
    ),
    FactType(
        "hobby",
        [
            _v(hobby="rock climbing", hplace="the bouldering gym"),
            _v(hobby="playing the cello", hplace="an amateur orchestra"),
            _v(hobby="pottery", hplace="a Tuesday evening class"),
            _v(hobby="long-distance running", hplace="a running club"),
            _v(hobby="woodworking", hplace="my garage workshop"),
            _v(hobby="birdwatching", hplace="the wetlands outside town"),
            _v(hobby="salsa dancing", hplace="a studio downtown"),
            _v(hobby="chess", hplace="an online league"),
        ],
        [
            "My arms are destroyed after {hobby} at {hplace} last night.",
            "Spent the whole weekend on {hobby}; it's what keeps me sane.",
        ],
        ["What do you like to do in your free time?"],
        ["Mostly {hobby}. I go to {hplace} twice a week."],
        [
            "What does the user do for fun?",
            "What are my hobbies?",
            "How does the user like to spend their spare time?",
            "What does the user get up to at weekends?",
        ],
        [
            "u:I watched a documentary about free solo climbers, terrifying.",
            "u:A friend keeps inviting me to her book club but I never go.",
            "a:Picking up a new pastime is easier with a fixed weekly slot in your calendar.",
        ],
        [
            "Where does the user go for {hobby}?",
        ],
    ),
    FactType(
        "cuisine",
        [
            _v(cuisine="Thai", dish="green curry"),
            _v(cuisine="Ethiopian", dish="injera with lentil stew"),
            _v(cuisine="Italian", dish="cacio e pepe"),
            _v(cuisine="Korean", dish="bibimbap"),
            _v(cuisine="Lebanese", dish="falafel and hummus"),
            _v(cuisine="Mexican", dish="tacos al pastor"),
            _v(cuisine="Japanese", dish="tonkotsu ramen"),
            _v(cuisine="Indian", dish="dal makhani"),
        ],
        [
            "If I could eat one thing forever it would be {dish}. {cuisine} food is my "
            "comfort food.",
            "Nothing beats a bowl of {dish} after a bad day, honestly.",
        ],
        ["What's your go-to order when you eat out?"],
        ["Always {dish}. {cuisine}, every time."],
        [
            "What is the user's favourite kind of food?",
            "Which restaurant would I enjoy most for dinner?",
            "What dish does the user love most?",
            "What's the user's comfort food?",
        ],
        [
            "u:The food truck near work sells the worst sandwiches.",
            "a:A good restaurant booking app can filter by cuisine and price range.",
            "u:{rel} hates spicy food, so dinners with them are bland.",
        ],
        [
            "Does the user like {cuisine} food?",
        ],
    ),
    FactType(
        "commute",
        [
            _v(commute="I cycle twelve kilometres to the office, rain or shine"),
            _v(commute="I take the 7:40 train and read on the way"),
            _v(commute="I drive my old Volvo, forty minutes each way"),
            _v(commute="I walk, it's only fifteen minutes"),
            _v(commute="I ride an electric scooter along the river"),
        ],
        [
            "Every weekday {commute}.",
            "People ask how I stay sane: {commute}.",
        ],
        ["How do you usually get to work?"],
        ["{commute}."],
        [
            "How does the user get to their workplace each day?",
            "What's my daily commute like?",
            "Does the user travel to work by car?",
            "How does the user get to the office?",
        ],
        [
            "u:Traffic downtown was horrible today, there was an accident on the bridge.",
            "a:Public transport passes are often cheaper if you buy them for a whole year.",
            "u:{rel} bought a cargo bike for the school run.",
        ],
    ),
    FactType(
        "birthday",
        [
            _v(bmonth=m, bday=d)
            for m, d in zip(MONTHS, ["3", "14", "22", "9", "30", "1"] * 2, strict=True)
        ],
        [
            "My birthday's on {bmonth} {bday} and I'm already planning the party.",
            "Turning forty on {bmonth} {bday}, please nobody remind me.",
        ],
        ["When should I set a reminder for your big day?"],
        ["{bmonth} {bday}. Cake is mandatory."],
        [
            "When was the user born?",
            "On what date should I send the user a card?",
            "When's my birthday?",
            "When is the user's birthday?",
        ],
        [
            "u:It's {rel}'s birthday tomorrow and I forgot to buy a present.",
            "a:Here's a simple chocolate cake recipe that works for birthdays.",
        ],
        [
            "What is the user celebrating on {bmonth} {bday}?",
        ],
    ),
    FactType(
        "language",
        [
            _v(lang="Spanish", tutor="an app streak"),
            _v(lang="Japanese", tutor="a tutor on Thursdays"),
            _v(lang="German", tutor="evening classes"),
            _v(lang="Italian", tutor="a conversation exchange"),
            _v(lang="Mandarin", tutor="a weekly tutor"),
            _v(lang="Portuguese", tutor="podcasts and flashcards"),
        ],
        [
            "Day 200 of my {lang} practice with {tutor}! Trying to be conversational soon.",
            "My {lang} is slowly getting better thanks to {tutor}.",
        ],
        ["Are you learning anything new these days?"],
        ["{lang}! Mostly through {tutor}."],
        [
            "Which foreign language is the user studying?",
            "What language am I trying to pick up?",
            "Which language is the user learning?",
        ],
        [
            "a:Spaced repetition is one of the most effective ways to memorise vocabulary.",
            "u:{rel} speaks four languages and makes me feel lazy.",
        ],
        [
            "How is the user's {lang} coming along?",
        ],
    ),
    FactType(
        "team",
        [
            _v(team="Liverpool", sport="football"),
            _v(team="the Lakers", sport="basketball"),
            _v(team="the Red Sox", sport="baseball"),
            _v(team="the All Blacks", sport="rugby"),
            _v(team="Real Madrid", sport="football"),
            _v(team="the Maple Leafs", sport="hockey"),
        ],
        [
            "Can't believe {team} lost again last night. I've supported them since I was a kid.",
            "Wearing my {team} shirt all week for the playoffs, obviously.",
        ],
        ["Do you follow any sports?"],
        ["{sport}, and I'm a {team} fan through and through."],
        [
            "Which team does the user root for?",
            "Who do I cheer for in sports?",
            "Which {sport} team does the user support?",
        ],
        [
            "u:The match was on in the pub and everyone was shouting.",
            "a:Season tickets usually go on sale a few months before the first game.",
            "u:{rel} dragged me to a stadium once and I understood nothing.",
        ],
        [
            "How does the user feel about {team}?",
        ],
    ),
    FactType(
        "health",
        [
            _v(cond="a torn ACL", note="no running or jumping for a few months"),
            _v(cond="asthma", note="I always keep an inhaler in my bag"),
            _v(cond="type 1 diabetes", note="I check my blood sugar before every workout"),
            _v(cond="chronic migraines", note="bright screens late at night are a no-go"),
            _v(cond="a herniated disc", note="I can't lift anything heavy"),
        ],
        [
            "Since I was diagnosed with {cond} I have to be careful: {note}.",
            "The physio reminded me again about my {cond}, so {note}.",
        ],
        ["Anything I should know before suggesting a training plan?"],
        ["I have {cond}, so {note}."],
        [
            "Does the user have a medical condition to consider when planning exercise?",
            "Are there health issues that limit what I can do?",
            "What illness or injury does the user live with?",
            "What medical condition was the user diagnosed with?",
        ],
        [
            "u:Half my team is off sick with the flu this week.",
            "a:Warming up for ten minutes lowers the risk of injury during exercise.",
            "u:{rel} broke a wrist skiing, so I'm driving them around.",
        ],
        [
            "How does the user manage their {cond}?",
        ],
    ),
    FactType(
        "music",
        [
            _v(genre="jazz", artist="John Coltrane"),
            _v(genre="80s synth-pop", artist="Depeche Mode"),
            _v(genre="K-pop", artist="BTS"),
            _v(genre="heavy metal", artist="Metallica"),
            _v(genre="bossa nova", artist="João Gilberto"),
            _v(genre="baroque", artist="Bach's cello suites"),
        ],
        [
            "I've had {artist} on repeat all week, {genre} just hits different.",
            "Went to a {genre} gig last night, still buzzing. Nothing tops {artist} though.",
        ],
        ["What should I put on your playlist?"],
        ["Anything {genre}, especially {artist}."],
        [
            "What kind of music does the user listen to?",
            "Which songs would I enjoy on a road-trip playlist?",
            "Which artist has the user been listening to on repeat?",
        ],
        [
            "u:My neighbour practises drums at 7 in the morning.",
            "a:Most streaming services let you download playlists for offline listening.",
        ],
        [
            "Does the user like {artist}?",
        ],
    ),
    FactType(
        "drink",
        [
            _v(drink="oat milk flat white"),
            _v(drink="pot of green tea"),
            _v(drink="double espresso"),
            _v(drink="chai latte"),
            _v(drink="black coffee, no sugar"),
        ],
        [
            "My morning doesn't start until I've had my {drink}.",
            "Three cups a day minimum, and it has to be a {drink}.",
        ],
        ["What can I get you from the café?"],
        ["A {drink}, please."],
        [
            "How does the user take their morning coffee or tea?",
            "What should I order for the user at the coffee shop?",
            "What does the user drink every morning?",
        ],
        [
            "u:The office coffee machine has been broken for a week.",
            "a:Caffeine stays in your system for about five hours on average.",
        ],
    ),
    FactType(
        "seat",
        [
            _v(seat="aisle", why="my legs are too long for anything else"),
            _v(seat="window", why="I like to sleep against the wall"),
            _v(seat="exit-row", why="the extra legroom is worth paying for"),
        ],
        ["Whenever I fly I book the {seat} seat, {why}."],
        ["Any seating preferences for the flight?"],
        ["{seat} seat, always. {why}."],
        [
            "Where does the user like to sit on a plane?",
            "Do I prefer a particular place in the cabin when I book flights?",
            "Which seat does the user book when flying?",
        ],
        [
            "u:The airline lost my suitcase on the way back from {other}.",
            "a:Online check-in usually opens 24 hours before departure.",
        ],
    ),
    FactType(
        "event",
        [
            _v(event="running the Berlin marathon", when="September", event_short="marathon"),
            _v(event="my sister's wedding", when="May", event_short="sister's wedding"),
            _v(event="defending my PhD thesis", when="March", event_short="PhD defence"),
            _v(event="a piano recital", when="December", event_short="piano recital"),
            _v(event="climbing Kilimanjaro", when="January", event_short="Kilimanjaro climb"),
        ],
        [
            "Everything is about {event} in {when} right now, I'm so nervous.",
            "Only a few weeks until {event} in {when}!",
        ],
        ["What's keeping you busy lately?"],
        ["Preparing for {event}, it's in {when}."],
        [
            "What big occasion is coming up for the user?",
            "What am I getting ready for this year?",
            "What is the user nervous about preparing for?",
        ],
        [
            "u:{rel} ran a half marathon and now wants everyone to join.",
            "a:A training calendar works best when you count backwards from the date.",
        ],
        [
            "When is the user's {event_short}?",
        ],
    ),
    FactType(
        "education",
        [
            _v(degree="marine biology", uni="the University of Edinburgh"),
            _v(degree="architecture", uni="TU Delft"),
            _v(degree="philosophy", uni="McGill"),
            _v(degree="computer science", uni="a small college in Ohio"),
            _v(degree="nursing", uni="King's College"),
        ],
        [
            "Back when I was doing my degree in {degree} at {uni}, we pulled all-nighters "
            "every week.",
            "My {degree} professors at {uni} would hate this slide deck.",
        ],
        ["What did you study, out of curiosity?"],
        ["{degree}, at {uni}."],
        [
            "What did the user study at university?",
            "Where did I go to college, and what was my major?",
            "What degree does the user have?",
        ],
        [
            "u:Student loans are such a scam, {rel} is still paying theirs off.",
            "a:Many universities publish their lecture notes online for free.",
        ],
        [
            "What did the user study at {uni}?",
        ],
    ),
    FactType(
        "phobia",
        [
            _v(fear="spiders", avoid="I won't go into the basement"),
            _v(fear="flying", avoid="I take the train whenever I can"),
            _v(fear="heights", avoid="glass lifts are a nightmare"),
            _v(fear="deep water", avoid="I never swim where I can't stand"),
        ],
        ["I'm terrified of {fear}, honestly, {avoid}."],
        ["Is there anything that makes you really uneasy?"],
        ["{fear}. {avoid}."],
        [
            "What is the user afraid of?",
            "Is there something that scares me I'd want to avoid on the trip?",
            "What is the user terrified of?",
        ],
        [
            "u:Horror films don't scare me at all, weirdly.",
            "a:Gradual exposure is a common technique for reducing anxiety.",
        ],
        [
            "How does the user cope with their fear of {fear}?",
        ],
    ),
]


# Small talk: per topic, (user turn, assistant reply) exchanges that share their slot values.
TOPICS: dict[str, list[tuple[str, str]]] = {
    "cooking": [
        (
            "How long should I roast {veg} at 200 degrees?",
            "About 25 to 30 minutes for {veg}; toss them halfway so they brown evenly.",
        ),
        (
            "Can I freeze {food} for later in the week?",
            "Yes, {food} freezes well for up to three months in an airtight container.",
        ),
        (
            "What can I make with leftover rice and {veg}?",
            "Try a quick fried rice: {veg}, a beaten egg, soy sauce and spring onions.",
        ),
        (
            "My {food} came out too salty, can I fix it?",
            "Add a squeeze of lemon or a splash of unsalted stock to balance the {food}.",
        ),
        (
            "What's a good side dish for {food}?",
            "A crisp green salad or roasted {veg} pairs nicely with {food}.",
        ),
        (
            "Is it worth buying a cast iron pan?",
            "A cast iron pan lasts decades and holds heat well, so it's worth it if you sear.",
        ),
        (
            "How do I keep {food} from getting soggy?",
            "Let it rest on a rack instead of a plate so the steam can escape.",
        ),
        (
            "Can you scale the {food} recipe down to two portions?",
            "Halve every ingredient; the cooking time for {food} stays roughly the same.",
        ),
        (
            "What spices go well with {veg}?",
            "Cumin, smoked paprika and a little garlic work well with {veg}.",
        ),
    ],
    "coding": [
        (
            "Why does my {lib} code raise {err} when the list is empty?",
            "Check the empty case first; {err} usually means you index before the guard.",
        ),
        (
            "How do I write a test for a function that calls {lib}?",
            "Mock the {lib} call with unittest.mock.patch and assert on the arguments.",
        ),
        (
            "Is there a cleaner way to loop over two lists at once in Python?",
            "Use zip(a, b); it stops at the shorter list unless you pass strict=True.",
        ),
        (
            "My deploy failed with {err}, where do I start looking?",
            "Start with the logs around the {err}; they often name the failing module.",
        ),
        (
            "Should I use {lib} or write it myself?",
            "{lib} is well maintained, so using it is usually safer than rolling your own.",
        ),
        (
            "Can you explain what a context manager does?",
            "A context manager runs setup and cleanup around a block, using the with statement.",
        ),
        (
            "How do I read a CSV file with {lib}?",
            "Here's a short snippet that loads the file with {lib} and prints the first rows.",
        ),
        (
            "What's the difference between a list and a tuple?",
            "Tuples are immutable and hashable; lists can change size and content.",
        ),
        (
            "My script is slow on big files, any tips?",
            "Profile it first; reading the file in chunks with {lib} often helps.",
        ),
    ],
    "money": [
        (
            "How much should I keep in an emergency fund?",
            "A common rule is three to six months of essential expenses.",
        ),
        (
            "Is it better to pay off my credit card or save first?",
            "Pay off high-interest debt first; it costs more than savings usually earn.",
        ),
        (
            "Can you help me make a monthly budget?",
            "List fixed costs first, then set limits for groceries, transport and fun.",
        ),
        (
            "Are index funds a good idea for a beginner?",
            "Low-cost index funds are a popular, diversified starting point.",
        ),
        (
            "How do I stop overspending on takeaway?",
            "Plan three dinners a week in advance and keep easy staples at home.",
        ),
        (
            "Should I split the rent evenly with my flatmate?",
            "Many flatmates split by room size; agree on it in writing either way.",
        ),
    ],
    "tech": [
        (
            "My {gadget} keeps disconnecting from the wifi, any ideas?",
            "Forget the network and reconnect, then update the {gadget}'s firmware.",
        ),
        (
            "Should I upgrade my {gadget} this year or wait?",
            "If your {gadget} still gets updates and works, waiting a year is reasonable.",
        ),
        (
            "How do I back up the photos on my {gadget}?",
            "Turn on automatic cloud backup, or copy them to an external drive monthly.",
        ),
        (
            "The battery on my {gadget} drains really fast lately.",
            "Check which apps use the most battery and limit background refresh.",
        ),
        (
            "Is it safe to use public wifi for banking?",
            "Use a VPN or your mobile data for banking on public networks.",
        ),
        ("What's a good password manager?", "Bitwarden and 1Password are both well regarded."),
    ],
    "garden": [
        (
            "Why are the leaves on my {plant} turning yellow?",
            "Yellow leaves on {plant} often mean overwatering; let the soil dry out a bit.",
        ),
        (
            "When should I plant {plant} outside?",
            "Wait until after the last frost before planting {plant} outdoors.",
        ),
        (
            "How often should I water {plant} in summer?",
            "Water {plant} deeply twice a week rather than a little every day.",
        ),
        (
            "Can I grow {plant} on a balcony?",
            "Yes, {plant} does fine in pots with at least six hours of sun.",
        ),
        (
            "Are coffee grounds good for compost?",
            "Coffee grounds are a good green addition to compost, in moderation.",
        ),
    ],
    "screen": [
        (
            "Have you seen {movie}? Worth watching?",
            "{movie} is beautifully shot and has a great score; worth it.",
        ),
        (
            "I just finished {show}, what should I watch next?",
            "If you liked {show}, try {show2}: similar tone, great writing.",
        ),
        (
            "Recommend something like {movie} for a rainy Sunday.",
            "For a rainy Sunday, {movie2} has a similar feel to {movie}.",
        ),
        (
            "Is {show} fine to watch with my parents?",
            "{show} has some strong language, but nothing too graphic.",
        ),
        (
            "Which is better, {movie} or {movie2}?",
            "{movie2} is more fun, but {movie} has aged better.",
        ),
    ],
    "books": [
        (
            "I'm halfway through {book}, does it get better?",
            "The second half of {book} is where it really comes together.",
        ),
        ("Can you suggest a book like {book}?", "If you enjoyed {book}, you might like {book2}."),
        (
            "What's a good audiobook for a long drive?",
            "{book2} is a popular audiobook with a great narrator.",
        ),
        ("Is {book} a quick read?", "{book} is around 300 pages, so a few evenings."),
        (
            "Should I read {book} or {book2} first?",
            "Start with {book2}; it's lighter and a good warm-up.",
        ),
    ],
    "writing": [
        (
            "Can you make this email to my landlord sound more polite?",
            "Here's a softer version that keeps your request clear and adds a thank you.",
        ),
        (
            "Help me write a thank-you note for {rel}.",
            "Here's a warm, short thank-you note you can adapt.",
        ),
        (
            "How do I say no to a meeting without sounding rude?",
            "Try: thanks for the invite, I can't make it, but please send me the notes.",
        ),
        (
            "Can you shorten this paragraph for a presentation slide?",
            "Here's a three-bullet version that fits on one slide.",
        ),
        (
            "Is it 'affect' or 'effect' in this sentence?",
            "Here it's 'effect', the noun; 'affect' is usually the verb.",
        ),
    ],
    "weather": [
        (
            "It's been grey for days, I miss the sun.",
            "Grey weeks are hard; a walk at lunchtime helps with the light.",
        ),
        (
            "Should I bring an umbrella on {day}?",
            "The forecast for {day} shows showers in the afternoon, so yes.",
        ),
        (
            "Is it too cold for a picnic this weekend?",
            "Around 12 degrees with wind; a sheltered spot and a blanket would help.",
        ),
        (
            "The heat this week is unbearable.",
            "Keep the curtains closed during the day and drink plenty of water.",
        ),
        (
            "Will it snow on {day}, do you think?",
            "Snow is unlikely on {day}, but frost overnight is possible.",
        ),
    ],
    "fitness": [
        (
            "How many rest days should I take per week?",
            "One or two rest days a week suits most people.",
        ),
        (
            "What's a good stretch after sitting all day?",
            "Try a hip flexor stretch and a chest opener against a door frame.",
        ),
        (
            "Is it better to work out in the morning or the evening?",
            "The best time is whichever you can stick with consistently.",
        ),
        (
            "How do I get back into exercising after a break?",
            "Start at half your old volume and build up over three or four weeks.",
        ),
        (
            "Do I need protein shakes?",
            "Most people get enough protein from food; shakes are just convenient.",
        ),
    ],
    "gifts": [
        (
            "What should I get {rel} for their housewarming?",
            "A nice plant or {gift} is a safe housewarming present.",
        ),
        (
            "Is {gift} a good present for a teenager?",
            "{gift} can work well if it matches their interests.",
        ),
        (
            "I need a last-minute gift idea under 30 euros.",
            "Under 30 euros: a good candle, a cookbook or {gift}.",
        ),
        (
            "How do I wrap an oddly shaped present?",
            "Use a gift bag with tissue paper, or wrap it in a tea towel as part of the gift.",
        ),
        ("Is a voucher a lazy gift?", "Not if it's for something they love; add a note."),
    ],
    "trips": [
        (
            "What should I pack for a weekend in {other}?",
            "Layers, comfortable shoes and a light rain jacket for {other}.",
        ),
        (
            "Is it cheaper to take the train or fly to {other}?",
            "Booked early, the train to {other} is often cheaper and less stressful.",
        ),
        (
            "How early should I get to the airport?",
            "Two hours for short-haul flights and three for long-haul is a safe rule.",
        ),
        (
            "Any tips for jet lag?",
            "Get daylight at your destination's morning and avoid long naps on day one.",
        ),
        (
            "Do I need travel insurance for a short trip?",
            "It's worth it if you've prepaid anything you can't cancel.",
        ),
    ],
    "home": [
        (
            "My kitchen tap keeps dripping, can I fix it myself?",
            "Usually yes: turn off the water and replace the washer or cartridge.",
        ),
        (
            "How do I get rid of mould in the bathroom?",
            "Diluted vinegar works on small patches; improve ventilation to stop it coming back.",
        ),
        (
            "What colour should I paint a small living room?",
            "Light warm neutrals make a small room feel bigger.",
        ),
        (
            "How do I hang a heavy mirror on plasterboard?",
            "Use heavy-duty wall anchors or find a stud, and use two fixing points.",
        ),
        (
            "The radiator upstairs is cold at the top.",
            "It probably needs bleeding; you'll need a radiator key and a cloth.",
        ),
    ],
}
CHITCHAT = [
    ("Thanks, that's really helpful!", "You're welcome! Anything else I can help with?"),
    ("Haha, fair enough.", "Glad that made sense."),
    ("Okay, I'll try that on {day}.", "Great, let me know how it goes on {day}."),
    ("Makes sense, thank you.", "Happy to help, good luck!"),
    ("Hmm, let me think about it.", "Sure, take your time. I'm here when you're ready."),
    (
        "Perfect, that's exactly what I needed.",
        "No problem. Want me to turn that into a checklist?",
    ),
]


def build(*, seed: int = 7, users: int = 20, sessions: int = 10, turns: int = 30) -> EvalSet:
    """The evaluation set for ``seed``: ``users`` chats of ``sessions`` x ``turns`` turns."""
    if turns < 8 or turns % 2:
        raise ValueError("turns must be an even number of at least 8")
    rng = random.Random(seed)
    names = _user_names(users)
    return EvalSet(seed=seed, users=[_user(rng, name, sessions, turns) for name in names])


def _user_names(count: int) -> list[str]:
    return [
        f"{FIRST_NAMES[i % len(FIRST_NAMES)].lower()}-{i // len(FIRST_NAMES) + 1:02d}"
        for i in range(count)
    ]


_ARTICLE = re.compile(r"\b([Aa]) ([AEIOaeio])")


def _slots(rng: random.Random, values: Values) -> Values:
    """Random slot values for small talk, overridden by a fact's ``values``."""
    return {
        "veg": rng.choice(VEGETABLES),
        "food": rng.choice(FOODS),
        "lib": rng.choice(LIBS),
        "err": rng.choice(ERRORS),
        "gadget": rng.choice(GADGETS),
        "gift": rng.choice(GIFTS),
        "plant": rng.choice(PLANTS),
        "movie": rng.choice(MOVIES),
        "movie2": rng.choice(MOVIES),
        "show": rng.choice(SHOWS),
        "show2": rng.choice(SHOWS),
        "book": rng.choice(BOOKS),
        "book2": rng.choice(BOOKS),
        "day": rng.choice(WEEKDAYS),
        "rel": rng.choice(RELATIVES),
        "other": rng.choice(CITIES),
        **values,
    }


def _format(template: str, slots: Values) -> str:
    text = template.format(**slots)
    text = (
        _ARTICLE.sub(r"\1n \2", text)
        .replace("a the ", "a ")
        .replace("my the ", "my ")
        .replace("s's ", "s' ")
    )
    return text[0].upper() + text[1:]


def _fill(rng: random.Random, template: str, values: Values) -> str:
    return _format(template, _slots(rng, values))


@dataclass
class _Slot:
    """A planned turn: small talk until a fact or distractor takes it."""

    role: str
    text: str = ""
    tag: str = ""


def _user(rng: random.Random, name: str, sessions: int, turns: int) -> UserLog:
    # Plan each session as small talk on three topics, exchanges of a user turn and a reply.
    plan: list[list[_Slot]] = []
    per_topic = -(-turns // 6)
    for _ in range(sessions):
        exchanges: list[tuple[str, str]] = []
        for topic in rng.sample(sorted(TOPICS), k=3):
            exchanges += rng.sample(TOPICS[topic], k=min(per_topic, len(TOPICS[topic])))
        slots = []
        for i in range(turns // 2):
            pair = rng.choice(CHITCHAT) if rng.random() < 0.12 else exchanges[i % len(exchanges)]
            fill = _slots(rng, {})
            slots += [
                _Slot("user", _format(pair[0], fill)),
                _Slot("assistant", _format(pair[1], fill)),
            ]
        plan.append(slots)

    # About sixteen facts and two distractors per fact type, fewer in small chats.
    capacity = sessions * turns
    chosen = rng.sample(FACT_TYPES, k=max(1, min(16, len(FACT_TYPES), capacity // 12)))
    distractor_budget = capacity // 6
    evidence: dict[str, list[tuple[int, int]]] = {}
    values: dict[str, Values] = {}

    def free(session: int, index: int) -> bool:
        return not plan[session][index].tag

    def place(session: int | None, role: str, text: str, tag: str, *, pair: bool = False) -> int:
        """Put ``text`` at a free ``role`` slot (and the next user slot when ``pair``)."""
        for _ in range(200):
            s = session if session is not None else rng.randrange(sessions)
            i = rng.randrange(turns - (1 if pair else 0))
            if plan[s][i].role != role or not free(s, i) or (pair and not free(s, i + 1)):
                continue
            plan[s][i].text, plan[s][i].tag = text, tag
            evidence.setdefault(tag, []).append((s, i))
            return s
        raise RuntimeError("no free slot left: use more turns per session")

    for fact in chosen:
        value = dict(rng.choice(fact.values))
        values[fact.name] = value
        session = None
        if fact.name == "move":  # the old city comes first, in an earlier session
            early = rng.randrange(max(1, sessions // 2))
            _place_distractor(rng, plan, place, fact.distractors[0], value, early)
            session = rng.randrange(early + 1, sessions) if early + 1 < sessions else early
        if fact.asks and rng.random() < 0.4:
            ask = _fill(rng, rng.choice(fact.asks), value)
            answer = _fill(rng, rng.choice(fact.answers), value)
            place(session, "assistant", ask, fact.name, pair=True)
            si, ii = evidence[fact.name][-1]
            plan[si][ii + 1].text, plan[si][ii + 1].tag = answer, fact.name
            evidence[fact.name].append((si, ii + 1))
        else:
            place(session, "user", _fill(rng, rng.choice(fact.states), value), fact.name)

    # Near misses: for every fact type, chosen or not, up to two distractors.
    for fact in FACT_TYPES:
        value = values.get(fact.name) or dict(rng.choice(fact.values))
        pool = fact.distractors[1:] if fact.name == "move" else fact.distractors
        for template in rng.sample(pool, k=min(2, len(pool), distractor_budget)):
            distractor_budget -= 1
            _place_distractor(rng, plan, place, template, value, None)

    log = UserLog(name=name)
    for s, slots in enumerate(plan):
        for i, slot in enumerate(slots):
            log.turns.append(Turn(_turn_id(name, s, i), s, i, slot.role, slot.text))
    for fact in chosen:
        turn_ids = tuple(_turn_id(name, s, i) for s, i in evidence[fact.name])
        # One paraphrase (often sharing no word with the fact); often the question of the type
        # that shares a word with how it is usually said (the last); often one that names part
        # of the fact and asks for the rest.
        asked = [rng.choice(fact.questions[:-1])]
        if rng.random() < 0.5:
            asked.append(fact.questions[-1])
        if fact.lookups and rng.random() < 0.7:
            asked.append(rng.choice(fact.lookups))
        for n, template in enumerate(asked):
            log.questions.append(
                Question(
                    id=f"{name}-{fact.name}-{n}",
                    user=name,
                    text=_fill(rng, template, values[fact.name]),
                    evidence=turn_ids,
                    topic=fact.name,
                )
            )
    return log


def _place_distractor(
    rng: random.Random,
    plan: list[list[_Slot]],
    place: Callable[..., int],
    template: str,
    value: Values,
    session: int | None,
) -> None:
    role = "user" if template.startswith("u:") else "assistant"
    place(session, role, _fill(rng, template[2:], value), "distractor")


def _turn_id(user: str, session: int, index: int) -> str:
    return f"{user}-s{session:02d}-t{index:02d}"
