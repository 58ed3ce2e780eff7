# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of this set)
"""A fourth development set of natural conversations for the offline learner and recall
(written here, 7 Dec 2026, before any rule or recall change of round 6, phrased the way people
type: facts inside longer messages, changes said indirectly, corrections of undated values,
additions, reversals, relatives' facts, statements that must not become facts), with questions
worded unlike what was said ("where is she based these days" for "I live in Berlin").

Same shape as ``devset_natural``; scored by ``tests/learning/test_devset4.py``. Its first score
(rules and recall as they were) is the honest generalisation figure; later scores say what the
round covers, not how well it generalises (the held-out set is ``bench/natural``).
"""

from __future__ import annotations

import functools

from tests.learning.devset_natural import Conversation, conversation

_c = functools.partial(conversation, set_number="4")


CONVERSATIONS: list[Conversation] = [
    # -- English ---------------------------------------------------------------------------
    _c(
        "en4-plain-1",
        "plain",
        ["ok so quick background: I'm Marta, I live in Bristol and I work as a paramedic"],
        [
            ("where is she based these days", ["Bristol"]),
            ("what's her line of work", ["paramedic"]),
            ("how should I address her", ["Marta"]),
        ],
    ),
    _c(
        "en4-plain-2",
        "plain",
        ["for the meal plan: I'm vegan and allergic to sesame, thanks"],
        [
            ("anything the user can't eat", ["sesame"]),
            ("what kind of eater is the user", ["vegan"]),
        ],
        never=["meal plan"],
    ),
    _c(
        "en4-plain-3",
        "plain",
        ["I'm 29 and I've got a dog called Biscuit"],
        [("how old is the user", ["29"]), ("does the user have animals", ["Biscuit"])],
    ),
    _c(
        "en4-reloc-1",
        "relocation",
        ["I live in Leicester", "we packed up and moved down to Exeter in June"],
        [("which town does the user call home", ["Exeter"])],
        ["Leicester"],
    ),
    _c(
        "en4-reloc-2",
        "relocation",
        ["I'm based in Denver", "new chapter: I'm in Portland now, near my parents"],
        [("the user's current city", ["Portland"])],
        ["Denver"],
        ["parents"],
    ),
    _c(
        "en4-job-1",
        "job",
        ["I work at Accenture", "finally quit Accenture and joined Shopify last week"],
        [("who is the user's employer", ["Shopify"])],
        ["Accenture"],
    ),
    _c(
        "en4-job-2",
        "job",
        ["I'm a chef", "switched careers, I'm a firefighter now"],
        [("what does the user do professionally", ["firefighter"])],
        ["chef"],
    ),
    _c(
        "en4-corr-1",
        "correction",
        ["I live in Brigton", "ugh autocorrect, I meant Brighton"],
        [("where does the user live", ["Brighton"])],
        ["Brigton"],
    ),
    _c(
        "en4-corr-2",
        "correction",
        ["my name is Lina", "no wait, it's Lena not Lina, typo"],
        [("the user's name", ["Lena"])],
        ["Lina"],
    ),
    _c(
        "en4-corr-3",
        "correction",
        ["I'm 34", "sorry, typo, I'm 43"],
        [("the user's age", ["43"])],
        ["34"],
    ),
    _c(
        "en4-corr-4",
        "correction",
        ["I work at Oracle", "correction: I work at Ocado, not Oracle"],
        [("the company the user works for", ["Ocado"])],
        ["Oracle"],
    ),
    _c(
        "en4-add-1",
        "addition",
        ["I speak French", "I also speak Spanish, a bit rusty"],
        [
            ("which languages can the user talk in", ["French"]),
            ("languages the user knows", ["Spanish"]),
        ],
    ),
    _c(
        "en4-add-2",
        "addition",
        ["I'm allergic to walnuts", "and to kiwi as well"],
        [("what allergies does the user have", ["walnut"]), ("fruit allergy", ["kiwi"])],
    ),
    _c(
        "en4-add-3",
        "addition",
        ["I have a cat", "I've also got a rabbit"],
        [("the user's pets", ["cat"]), ("animals at home", ["rabbit"])],
    ),
    _c(
        "en4-rev-1",
        "reversal",
        ["I'm vegetarian", "I eat meat again these days, the vegetarian thing didn't stick"],
        stale=["vegetarian"],
    ),
    _c(
        "en4-rev-2",
        "reversal",
        ["I smoke", "I quit smoking in January"],
        stale=["user smokes"],
    ),
    _c(
        "en4-rev-3",
        "reversal",
        ["I prefer window seats", "actually these days I prefer the aisle"],
        [("seating preference", ["aisle"])],
        ["window"],
    ),
    _c(
        "en4-others-1",
        "others",
        ["my husband is a dentist", "I'm a teacher"],
        [
            ("what is the user's job", ["teacher"]),
            ("what does the user's husband do", ["husband", "dentist"]),
        ],
    ),
    _c(
        "en4-others-2",
        "others",
        ["my mum lives in Cork", "I live in Galway"],
        [("where is the user's home", ["Galway"]), ("where is her mother", ["Cork"])],
    ),
    _c(
        "en4-never-1",
        "never",
        [
            "if I moved to Tokyo I'd learn Japanese",
            "my friend said I should become a lawyer",
            "what's the capital of Peru?",
            "I'm a billionaire astronaut, just kidding",
        ],
        never=["Tokyo", "lawyer", "Peru", "astronaut", "billionaire"],
    ),
    _c(
        "en4-never-2",
        "never",
        ["I live in Bath", 'my boss keeps saying "I live in the office" lol'],
        [("which city does the user live in", ["Bath"])],
        never=["office"],
    ),
    # -- Russian ---------------------------------------------------------------------------
    _c(
        "ru4-plain-1",
        "plain",
        ["Коротко о себе: меня зовут Олег, я живу в Казани и работаю врачом"],
        [
            ("где он сейчас обитает", ["Казан"]),
            ("кем он работает", ["врач"]),
            ("как его зовут", ["Олег"]),
        ],
    ),
    _c(
        "ru4-reloc-1",
        "relocation",
        ["Я живу в Самаре", "Мы переехали в Ярославль прошлой осенью"],
        [("в каком городе он живёт", ["Ярославл"])],
        ["Самар"],
    ),
    _c(
        "ru4-job-1",
        "job",
        ["Я работаю в Сбере", "Уволился из Сбера, теперь работаю в Яндексе"],
        [("где он работает", ["Яндекс"])],
        ["Сбер"],
    ),
    _c(
        "ru4-corr-1",
        "correction",
        ["Меня зовут Лина", "ой, опечатка, меня зовут Лена"],
        [("имя пользователя", ["Лена"])],
        ["Лина"],
    ),
    _c(
        "ru4-corr-2",
        "correction",
        ["Мне 34 года", "нет, мне 43, перепутал цифры"],
        [("сколько ему лет", ["43"])],
        ["34"],
    ),
    _c(
        "ru4-add-1",
        "addition",
        ["Я говорю по-английски", "Ещё я говорю по-испански"],
        [("какие языки он знает", ["англ"]), ("иностранные языки", ["испан"])],
    ),
    _c(
        "ru4-add-2",
        "addition",
        ["У меня аллергия на орехи", "и на мёд тоже"],
        [("на что у него аллергия", ["орех"]), ("аллергия на продукты", ["мёд"])],
    ),
    _c(
        "ru4-rev-1",
        "reversal",
        ["Я вегетарианка", "Я больше не вегетарианка, снова ем мясо"],
        stale=["вегетариан"],
    ),
    _c(
        "ru4-others-1",
        "others",
        ["Моя сестра Аня работает юристом", "А я программист"],
        [
            ("кем работает пользователь", ["программист"]),
            ("профессия сестры", ["сестр", "юрист"]),
        ],
    ),
    _c(
        "ru4-never-1",
        "never",
        ["Если бы я жил в Сочи, купался бы каждый день", "Мама говорит, что мне надо стать врачом"],
        never=["Сочи", "врач"],
    ),
    # -- German ----------------------------------------------------------------------------
    _c(
        "de4-plain-1",
        "plain",
        ["Kurz zu mir: Ich heiße Jana, wohne in Leipzig und arbeite als Krankenschwester"],
        [
            ("wo ist sie zuhause", ["Leipzig"]),
            ("was macht sie beruflich", ["Krankenschwester"]),
            ("wie heißt die Nutzerin", ["Jana"]),
        ],
    ),
    _c(
        "de4-reloc-1",
        "relocation",
        ["Ich wohne in Kassel", "Wir sind im Frühjahr nach Freiburg umgezogen"],
        [("in welcher Stadt lebt der Nutzer", ["Freiburg"])],
        ["Kassel"],
    ),
    _c(
        "de4-job-1",
        "job",
        ["Ich arbeite bei Bosch", "Ich habe bei Bosch gekündigt und arbeite jetzt bei Siemens"],
        [("wer ist sein Arbeitgeber", ["Siemens"])],
        ["Bosch"],
    ),
    _c(
        "de4-job-2",
        "job",
        ["Ich bin Lehrer", "Mittlerweile bin ich Bäcker, ganz anderes Leben"],
        [("welchen Beruf hat er", ["Bäcker"])],
        ["Lehrer"],
    ),
    _c(
        "de4-corr-1",
        "correction",
        ["Ich wohne in Münster", "Quatsch, ich meinte Mannheim"],
        [("wo wohnt er", ["Mannheim"])],
        ["Münster"],
    ),
    _c(
        "de4-corr-2",
        "correction",
        ["Ich bin 52", "Tippfehler, ich bin 25"],
        [("wie alt ist er", ["25"])],
        ["52"],
    ),
    _c(
        "de4-add-1",
        "addition",
        ["Ich spreche Englisch", "Ich spreche auch Italienisch"],
        [("welche Sprachen kann er", ["Englisch"]), ("Fremdsprachen", ["Italienisch"])],
    ),
    _c(
        "de4-add-2",
        "addition",
        ["Ich bin allergisch gegen Nüsse", "Gegen Erdbeeren übrigens auch"],
        [("Allergien", ["Nüsse"]), ("worauf reagiert er allergisch", ["Erdbeeren"])],
    ),
    _c(
        "de4-rev-1",
        "reversal",
        ["Ich bin Vegetarier", "Ich bin kein Vegetarier mehr"],
        stale=["Vegetarier"],
    ),
    _c(
        "de4-others-1",
        "others",
        ["Mein Bruder wohnt in Hamburg", "Ich selbst wohne in Köln"],
        [("wo lebt der Nutzer", ["Köln"]), ("Wohnort des Bruders", ["Bruder", "Hamburg"])],
    ),
    _c(
        "de4-never-1",
        "never",
        [
            "Wenn ich in Wien wohnen würde, ginge ich jeden Tag ins Café",
            "Wie spät ist es in Tokio?",
        ],
        never=["Wien", "Tokio", "Café"],
    ),
    # -- Chinese ---------------------------------------------------------------------------
    _c(
        "zh4-plain-1",
        "plain",
        ["简单介绍一下：我叫李娜，住在成都，是一名护士"],
        [("她现在住在哪个城市", ["成都"]), ("她做什么工作", ["护士"]), ("她叫什么", ["李娜"])],
    ),
    _c(
        "zh4-reloc-1",
        "relocation",
        ["我住在广州", "上个月我们搬到深圳了"],
        [("用户现在在哪座城市", ["深圳"])],
        ["广州"],
    ),
    _c(
        "zh4-job-1",
        "job",
        ["我在腾讯工作", "我已经从腾讯离职了，现在在阿里巴巴上班"],
        [("用户的公司", ["阿里巴巴"])],
        ["腾讯"],
    ),
    _c(
        "zh4-corr-1",
        "correction",
        ["我住在苏州", "打错了，是杭州"],
        [("用户住哪里", ["杭州"])],
        ["苏州"],
    ),
    _c(
        "zh4-add-1",
        "addition",
        ["我会说英语", "我也会说日语"],
        [("用户会哪些语言", ["英语"]), ("外语能力", ["日语"])],
    ),
    _c(
        "zh4-add-2",
        "addition",
        ["我对花生过敏", "对虾也过敏"],
        [("用户对什么过敏", ["花生"]), ("过敏的食物", ["虾"])],
    ),
    _c(
        "zh4-rev-1",
        "reversal",
        ["我是素食者", "我现在不吃素了"],
        stale=["素食"],
    ),
    _c(
        "zh4-others-1",
        "others",
        ["我妈妈是医生", "我是工程师"],
        [("用户的职业", ["工程师"]), ("母亲做什么", ["医生"])],
    ),
    _c(
        "zh4-never-1",
        "never",
        ["如果我住在上海就好了", "我朋友说我应该当老师"],
        never=["上海", "老师"],
    ),
    # -- French ----------------------------------------------------------------------------
    _c(
        "fr4-plain-1",
        "plain",
        ["Pour info : je m'appelle Claire, j'habite à Nantes et je suis architecte"],
        [
            ("où vit-elle en ce moment", ["Nantes"]),
            ("quel est son métier", ["architecte"]),
            ("son prénom", ["Claire"]),
        ],
    ),
    _c(
        "fr4-reloc-1",
        "relocation",
        ["J'habite à Lille", "On a déménagé à Bordeaux cet été"],
        [("dans quelle ville vit l'utilisateur", ["Bordeaux"])],
        ["Lille"],
    ),
    _c(
        "fr4-job-1",
        "job",
        ["Je travaille chez Renault", "J'ai quitté Renault, maintenant je travaille chez Airbus"],
        [("son employeur", ["Airbus"])],
        ["Renault"],
    ),
    _c(
        "fr4-corr-1",
        "correction",
        ["J'habite à Rennes", "pardon, je voulais dire Reims"],
        [("où habite l'utilisateur", ["Reims"])],
        ["Rennes"],
    ),
    _c(
        "fr4-add-1",
        "addition",
        ["Je parle anglais", "Je parle aussi allemand"],
        [("quelles langues parle-t-il", ["anglais"]), ("langues étrangères", ["allemand"])],
    ),
    _c(
        "fr4-rev-1",
        "reversal",
        ["Je suis végétarien", "Je ne suis plus végétarien"],
        stale=["végétarien"],
    ),
    _c(
        "fr4-others-1",
        "others",
        ["Ma sœur est infirmière", "Moi, je suis professeur"],
        [
            ("que fait l'utilisateur dans la vie", ["professeur"]),
            ("le travail de sa sœur", ["sœur", "infirmière"]),
        ],
    ),
    # -- Spanish ---------------------------------------------------------------------------
    _c(
        "es4-plain-1",
        "plain",
        ["Te cuento: me llamo Diego, vivo en Sevilla y soy fontanero"],
        [
            ("dónde reside ahora", ["Sevilla"]),
            ("a qué se dedica", ["fontanero"]),
            ("cómo se llama", ["Diego"]),
        ],
    ),
    _c(
        "es4-reloc-1",
        "relocation",
        ["Vivo en Bilbao", "Nos mudamos a Málaga en primavera"],
        [("ciudad del usuario", ["Málaga"])],
        ["Bilbao"],
    ),
    _c(
        "es4-job-1",
        "job",
        ["Trabajo en Telefónica", "Dejé Telefónica y ahora trabajo en Iberdrola"],
        [("empresa donde trabaja", ["Iberdrola"])],
        ["Telefónica"],
    ),
    _c(
        "es4-corr-1",
        "correction",
        ["Vivo en Granada", "perdón, quise decir Grenoble, vivo en Francia"],
        [("dónde vive el usuario", ["Grenoble"])],
        ["Granada"],
    ),
    _c(
        "es4-add-1",
        "addition",
        ["Hablo inglés", "También hablo portugués"],
        [("qué idiomas habla", ["inglés"]), ("lenguas que conoce", ["portugués"])],
    ),
    _c(
        "es4-rev-1",
        "reversal",
        ["Soy vegetariano", "Ya no soy vegetariano"],
        stale=["vegetariano"],
    ),
    # -- Japanese --------------------------------------------------------------------------
    _c(
        "ja4-reloc-1",
        "relocation",
        ["大阪に住んでいます", "先月、福岡に引っ越しました"],
        [("ユーザーはどこに住んでいますか", ["福岡"])],
        ["大阪"],
    ),
    _c(
        "ja4-job-1",
        "job",
        ["ソニーで働いています", "ソニーを辞めて、今は任天堂で働いています"],
        [("勤め先", ["任天堂"])],
        ["ソニー"],
    ),
    _c(
        "ja4-never-1",
        "never",
        ["もし東京に住んでいたら毎日ラーメンを食べます"],
        never=["東京", "ラーメン"],
    ),
]

# Batch B: written after the first round-6 changes, run once before any change for it.
CONVERSATIONS_B: list[Conversation] = [
    _c(
        "en4-b-plain-1",
        "plain",
        ["long story short, I'm Tom, 41, and I drive a forklift at a warehouse in Hull"],
        [("what should I call him", ["Tom"]), ("his age", ["41"])],
    ),
    _c(
        "en4-b-corr-1",
        "correction",
        ["I live in Lisbon", "oops, not Lisbon, Porto. brain fog"],
        [("home city of the user", ["Porto"])],
        ["Lisbon"],
    ),
    _c(
        "en4-b-add-1",
        "addition",
        ["my wife is a vet", "I speak German", "same for Dutch, I grew up near the border"],
        [("spoken languages", ["German"]), ("does the user know Dutch", ["Dutch"])],
        never=["border"],
    ),
    _c(
        "en4-b-others-1",
        "others",
        ["my dad lives in Perth", "I moved to Adelaide"],
        [("where is the user's father", ["Perth"]), ("where does the user live", ["Adelaide"])],
    ),
    _c(
        "en4-b-never-1",
        "never",
        ["would you say I should move to Berlin?", "imagine being a pilot, haha"],
        never=["Berlin", "pilot"],
    ),
    _c(
        "ru4-b-corr-1",
        "correction",
        ["Я живу в Туле", "не в Туле, а в Твери, опечатка"],
        [("город пользователя", ["Твер"])],
        ["Тул"],
    ),
    _c(
        "ru4-b-plain-1",
        "plain",
        ["Немного о себе: мне 27, я дизайнер"],
        [("сколько лет пользователю", ["27"]), ("чем он занимается", ["дизайнер"])],
    ),
    _c(
        "ru4-b-others-1",
        "others",
        ["Мой папа живёт в Омске", "А я в Москве живу"],
        [("где живёт отец", ["Омск"])],
    ),
    _c(
        "de4-b-plain-1",
        "plain",
        ["Zu mir: Ich bin 33 und wohne in Bremen"],
        [("Alter des Nutzers", ["33"]), ("Wohnort", ["Bremen"])],
    ),
    _c(
        "de4-b-add-1",
        "addition",
        ["Ich spreche Deutsch und Türkisch", "Französisch kann ich auch ein bisschen"],
        [("welche Sprachen", ["Türkisch"])],
    ),
    _c(
        "de4-b-corr-1",
        "correction",
        ["Ich heiße Jonas", "Sorry, Jonah, nicht Jonas"],
        [("Vorname des Nutzers", ["Jonah"])],
        ["Jonas"],
    ),
    _c(
        "zh4-b-plain-1",
        "plain",
        ["先说一下：我今年35岁，在上海工作"],
        [("用户多大了", ["35"])],
    ),
    _c(
        "zh4-b-corr-1",
        "correction",
        ["我叫王伟", "说错了，我叫王玮"],
        [("怎么称呼用户", ["王玮"])],
        ["王伟"],
    ),
    _c(
        "zh4-b-others-1",
        "others",
        ["我爸爸住在西安", "我住在北京"],
        [("父亲住在哪", ["西安"]), ("用户住在哪个城市", ["北京"])],
    ),
    _c(
        "fr4-b-corr-1",
        "correction",
        ["Je m'appelle Léa", "pardon, c'est Léna, pas Léa"],
        [("comment s'appelle l'utilisateur", ["Léna"])],
        ["Léa"],
    ),
    _c(
        "fr4-b-others-1",
        "others",
        ["Ma mère habite à Lyon", "J'habite à Paris"],
        [("où vit sa maman", ["Lyon"]), ("la ville de l'utilisateur", ["Paris"])],
    ),
    _c(
        "es4-b-plain-1",
        "plain",
        ["Para que lo sepas: tengo 38 años y soy enfermera"],
        [("qué edad tiene", ["38"]), ("a qué se dedica", ["enfermera"])],
    ),
    _c(
        "es4-b-others-1",
        "others",
        ["Mi mamá vive en Quito", "Yo vivo en Lima"],
        [("dónde vive su madre", ["Quito"]), ("dónde vive el usuario", ["Lima"])],
    ),
    _c(
        "ja4-b-corr-1",
        "correction",
        ["名古屋に住んでいます", "すみません、間違えました。京都です"],
        [("どこに住んでいますか", ["京都"])],
        ["名古屋"],
    ),
    _c(
        "es4-b-never-1",
        "never",
        ["Si fuera rica viviría en Ibiza", "¿Cuál es la capital de Chile?"],
        never=["Ibiza", "Chile"],
    ),
]
