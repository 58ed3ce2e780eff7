# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of this set)
"""An eighth development set of natural conversations for the offline learner and recall
(written here, 7 Dec 2026, round 10, each batch before any change made for it), weighted toward
what the held-out set found weakest: corrections, reversals, facts about people close to the
user, additions, plain facts asked about in other words, and Chinese, Russian and German (with
Spanish and French). Phrasings were chosen unlike those the rule files held at the time.

Same shape as ``devset_natural``; scored by ``tests/learning/test_devset8.py``. Each batch's
first score (rules and recall as they were) is the honest generalisation figure.
"""

from __future__ import annotations

import functools

from tests.learning.devset_natural import Conversation, conversation

_c = functools.partial(conversation, set_number="8")


CONVERSATIONS: list[Conversation] = [
    # -- corrections ------------------------------------------------------------------------
    _c(
        "en8-corr-1",
        "correction",
        ["my sister's wedding is on the 14th", "ugh no, the 15th, I always mix that up"],
        [("when is the sister getting married", ["15th"])],
        stale=["14th"],
    ),
    _c(
        "en8-corr-2",
        "correction",
        ["I drive a Golf", "wait no it's a Polo, the Golf was my old car"],
        [("what vehicle does the user own", ["Polo"])],
        stale=["drives a Golf"],
    ),
    _c(
        "en8-corr-3",
        "correction",
        ["I've got three siblings", "hmm four actually, I keep forgetting my half-brother"],
        [("how many brothers and sisters does the user have", ["four"])],
        stale=["three siblings"],
    ),
    _c(
        "ru8-corr-1",
        "correction",
        ["Я работаю в Сбере", "Поправка: в Тинькофф, а не в Сбере"],
        [("где трудится пользователь", ["Тинькофф"])],
        stale=["Сбер"],
    ),
    _c(
        "ru8-corr-2",
        "correction",
        ["Мой день рождения 12 марта", "ошибся, 21 марта"],
        [("когда пользователь празднует день рождения", ["21 марта"])],
        stale=["12 марта"],
    ),
    _c(
        "zh8-corr-1",
        "correction",
        ["我在腾讯上班", "哦不，我是在阿里上班，腾讯是我以前的公司"],
        [("用户在哪家公司工作", ["阿里"])],
        stale=["在腾讯上班"],
    ),
    _c(
        "zh8-corr-2",
        "correction",
        ["我女儿今年五岁", "更正一下，她六岁了"],
        [("用户的女儿多大", ["六"])],
        stale=["五岁"],
    ),
    _c(
        "de8-corr-1",
        "correction",
        ["Mein Zahnarzttermin ist am Donnerstag", "Moment, stimmt nicht – am Freitag"],
        [("wann muss der Nutzer zum Zahnarzt", ["Freitag"])],
        stale=["Donnerstag"],
    ),
    _c(
        "de8-corr-2",
        "correction",
        ["Ich heiße Jannik", "Sorry, Tippfehler: Yannick"],
        [("wie ist der Name des Nutzers", ["Yannick"])],
        stale=["Jannik"],
    ),
    _c(
        "es8-corr-1",
        "correction",
        ["Mi perro se llama Toby", "uy, me equivoqué, se llama Bruno"],
        [("cómo se llama la mascota del usuario", ["Bruno"])],
        stale=["Toby"],
    ),
    _c(
        "fr8-corr-1",
        "correction",
        ["J'habite à Nantes", "oups, je voulais dire Angers"],
        [("dans quelle ville vit l'utilisateur", ["Angers"])],
        stale=["Nantes"],
    ),
    # -- reversals ----------------------------------------------------------------------------
    _c(
        "en8-rev-1",
        "reversal",
        ["I'm vegetarian", "started eating fish again last month, so not vegetarian anymore"],
        stale=["is vegetarian"],
    ),
    _c(
        "ru8-rev-1",
        "reversal",
        ["Я играю в шахматы по выходным", "С шахматами я завязал"],
        stale=["шахмат"],
    ),
    _c(
        "zh8-rev-1",
        "reversal",
        ["我在学日语", "日语我已经不学了，太难了"],
        stale=["学日语"],
    ),
    _c(
        "de8-rev-1",
        "reversal",
        ["Ich spiele Handball im Verein", "Mit dem Handball hab ich aufgehört"],
        stale=["spielt Handball"],
    ),
    _c(
        "es8-rev-1",
        "reversal",
        ["Tengo novia", "Ya no estoy con mi novia, lo dejamos"],
        stale=["tiene novia"],
    ),
    _c(
        "fr8-rev-1",
        "reversal",
        ["Je joue du piano", "Le piano, c'est fini pour moi"],
        stale=["joue du piano"],
    ),
    # -- people close to the user -------------------------------------------------------------
    _c(
        "en8-oth-1",
        "others",
        ["my brother Tom is a firefighter in Leeds"],
        [("what does Tom do for work", ["firefighter"])],
        never=["user is a firefighter"],
    ),
    _c(
        "en8-oth-2",
        "others",
        ["My wife's allergic to peanuts so we never keep them at home"],
        [("what food is the user's wife allergic to", ["peanuts"])],
        never=["user is allergic"],
    ),
    _c(
        "ru8-oth-1",
        "others",
        ["Моя мама работает врачом в Омске"],
        [("кем работает мать пользователя", ["врач"])],
        never=["Пользователь работает врачом"],
    ),
    _c(
        "zh8-oth-1",
        "others",
        ["我老婆是老师", "她在一所小学教英语"],
        [("用户的妻子做什么工作", ["老师"])],
        never=["用户是老师"],
    ),
    _c(
        "de8-oth-1",
        "others",
        ["Meine Tochter Lena studiert Medizin in Wien"],
        [("was studiert Lena", ["Medizin"])],
        never=["Nutzer studiert"],
    ),
    _c(
        "es8-oth-1",
        "others",
        ["Mi hermano vive en Valencia desde hace años"],
        [("dónde reside el hermano del usuario", ["Valencia"])],
    ),
    _c(
        "fr8-oth-1",
        "others",
        ["Mon mari s'appelle Julien et il est boulanger"],
        [("quel est le prénom du mari de l'utilisateur", ["Julien"])],
        never=["utilisateur est boulanger"],
    ),
    # -- additions ----------------------------------------------------------------------------
    _c(
        "en8-add-1",
        "addition",
        ["I speak Spanish", "and some Portuguese too"],
        [
            ("what languages can the user talk in", ["Spanish"]),
            ("which other language does the user know", ["Portuguese"]),
        ],
    ),
    _c(
        "ru8-add-1",
        "addition",
        ["У меня есть кошка", "А ещё недавно завели попугая"],
        [("какие животные у пользователя", ["кошк"]), ("есть ли у пользователя птица", ["попуга"])],
    ),
    _c(
        "zh8-add-1",
        "addition",
        ["我喜欢爬山", "游泳我也挺喜欢的"],
        [("用户有什么爱好", ["爬山"]), ("用户平时做什么运动", ["游泳"])],
    ),
    _c(
        "de8-add-1",
        "addition",
        ["Ich spiele Gitarre", "Klavier übrigens auch"],
        [
            ("welche Instrumente beherrscht der Nutzer", ["Gitarre"]),
            ("spielt der Nutzer ein Tasteninstrument", ["Klavier"]),
        ],
    ),
    # -- plain facts asked about in other words ----------------------------------------------
    _c(
        "en8-plain-1",
        "plain",
        ["I've been a night-shift nurse for ten years"],
        [("what is the user's profession", ["nurse"])],
    ),
    _c(
        "ru8-plain-1",
        "plain",
        ["Я родом из Новосибирска"],
        [("откуда пользователь", ["Новосибирск"])],
    ),
    _c(
        "zh8-plain-1",
        "plain",
        ["我对花生过敏"],
        [("用户有什么不能吃的", ["花生"])],
    ),
    _c(
        "de8-plain-1",
        "plain",
        ["Ich bin Vegetarierin seit der Schulzeit"],
        [("isst der Nutzer Fleisch", ["Vegetarier"])],
    ),
    _c(
        "es8-plain-1",
        "plain",
        ["Trabajo de enfermera en un hospital de Sevilla"],
        [("cuál es la profesión del usuario", ["enfermera"])],
    ),
    # -- changes in Chinese, Russian, German -------------------------------------------------
    _c(
        "zh8-move-1",
        "relocation",
        ["我住在成都", "上个月我们全家搬去了杭州"],
        [("用户现在住哪儿", ["杭州"])],
        stale=["成都"],
    ),
    _c(
        "ru8-job-1",
        "job",
        ["Я работаю бухгалтером", "Ушёл из бухгалтерии, теперь я программист"],
        [("чем занимается пользователь", ["программист"])],
        stale=["бухгалтер"],
    ),
    _c(
        "de8-contact-1",
        "contact",
        ["Meine Handynummer ist 0151 2345678", "Hab eine neue Nummer: 0176 9876543"],
        [("wie kann man den Nutzer anrufen", ["0176 9876543"])],
        stale=["0151 2345678"],
    ),
    _c(
        "ru8-contact-1",
        "contact",
        ["Моя почта ivan@mail.ru", "Пиши теперь на ivan.petrov@yandex.ru, старой я не пользуюсь"],
        [("какой e-mail у пользователя", ["ivan.petrov@yandex.ru"])],
        stale=["ivan@mail.ru"],
    ),
]


# Batch B, written after batch A's changes and before any change made for it: the same
# categories in words not used above.
CONVERSATIONS_B: list[Conversation] = [
    # -- corrections ------------------------------------------------------------------------
    _c(
        "en8-corr-4",
        "correction",
        ["my mum's birthday is march 3rd", "argh, march 13th I mean"],
        [("when is the mother's birthday", ["13th"])],
        stale=["march 3rd"],
    ),
    _c(
        "en8-corr-5",
        "correction",
        ["I work at Deloitte", "correction - PwC, Deloitte was my internship"],
        [("which firm does the user work for", ["PwC"])],
        stale=["works at Deloitte"],
    ),
    _c(
        "ru8-corr-3",
        "correction",
        ["Моего сына зовут Миша", "ой, то есть Саша, Миша — это племянник"],
        [("как зовут ребёнка пользователя", ["Саша"])],
        stale=["зовут Миша"],
    ),
    _c(
        "ru8-corr-4",
        "correction",
        ["Я живу в Перми", "Не в Перми, в Ижевске, опечатался"],
        [("в каком городе обитает пользователь", ["Ижевск"])],
        stale=["Перм"],
    ),
    _c(
        "zh8-corr-3",
        "correction",
        ["我是1990年出生的", "记错了，是1991年"],
        [("用户哪年生的", ["1991"])],
        stale=["1990"],
    ),
    _c(
        "zh8-corr-4",
        "correction",
        ["我在上海交大读书", "哎，口误，是复旦"],
        [("用户在哪所大学上学", ["复旦"])],
        stale=["交大"],
    ),
    _c(
        "de8-corr-3",
        "correction",
        ["Meine Frau heißt Katrin", "Ups, mit C: Catrin"],
        [("wie heißt die Ehefrau des Nutzers", ["Catrin"])],
        stale=["Katrin"],
    ),
    _c(
        "de8-corr-4",
        "correction",
        ["Ich bin 44", "Nee, falsch, 45 bin ich"],
        [("wie alt ist der Nutzer", ["45"])],
        stale=["44"],
    ),
    _c(
        "fr8-corr-2",
        "correction",
        ["Mon rendez-vous chez le médecin est mardi", "Non pardon, c'est mercredi"],
        [("quand l'utilisateur voit-il le médecin", ["mercredi"])],
        stale=["mardi"],
    ),
    _c(
        "es8-corr-2",
        "correction",
        ["Tengo 3 hermanos", "bueno, 4, contando a mi medio hermano"],
        [("cuántos hermanos tiene el usuario", ["4"])],
        stale=["3 hermanos"],
    ),
    # -- reversals ----------------------------------------------------------------------------
    _c(
        "en8-rev-2",
        "reversal",
        [
            "I go climbing every weekend",
            "haven't been climbing since my knee surgery, kind of done with it",
        ],
        stale=["climbing every weekend"],
    ),
    _c(
        "ru8-rev-2",
        "reversal",
        ["Я пью по утрам кофе", "От кофе я отказался"],
        stale=["кофе"],
    ),
    _c(
        "zh8-rev-2",
        "reversal",
        ["我养了一只猫", "猫送人了"],
        stale=["猫"],
    ),
    _c(
        "de8-rev-2",
        "reversal",
        ["Ich rauche", "Seit drei Monaten rauchfrei!"],
        stale=["raucht"],
    ),
    _c(
        "es8-rev-2",
        "reversal",
        ["Juego al pádel los martes", "Lo del pádel ya se acabó"],
        stale=["pádel"],
    ),
    # -- people close to the user -------------------------------------------------------------
    _c(
        "en8-oth-3",
        "others",
        ["my daughter Mia just started at Oxford, studying law"],
        [("what is Mia studying", ["law"])],
        never=["user is studying law"],
    ),
    _c(
        "ru8-oth-2",
        "others",
        ["Мой брат Олег недавно переехал в Казань"],
        [("где теперь живёт Олег", ["Казан"])],
        never=["Пользователь живёт в Казани"],
    ),
    _c(
        "zh8-oth-2",
        "others",
        ["我妈在医院当护士"],
        [("用户的母亲是做什么的", ["护士"])],
        never=["用户是护士", "用户在医院"],
    ),
    _c(
        "de8-oth-2",
        "others",
        ["Mein Mann arbeitet seit Kurzem bei Bosch"],
        [("wo arbeitet der Ehemann des Nutzers", ["Bosch"])],
        never=["Der Nutzer arbeitet bei Bosch"],
    ),
    _c(
        "fr8-oth-2",
        "others",
        ["Ma fille Chloé a 7 ans"],
        [("quel âge a Chloé", ["7"])],
    ),
    # -- additions ----------------------------------------------------------------------------
    _c(
        "ru8-add-2",
        "addition",
        ["Я говорю по-английски", "Ну и по-немецки немного"],
        [
            ("на каких языках говорит пользователь", ["английск"]),
            ("знает ли пользователь немецкий", ["немецк"]),
        ],
    ),
    _c(
        "zh8-add-2",
        "addition",
        ["我会弹钢琴", "吉他也会一点"],
        [("用户会什么乐器", ["钢琴"]), ("用户还会弹什么", ["吉他"])],
    ),
    _c(
        "fr8-add-1",
        "addition",
        ["J'ai un chien", "et deux chats aussi"],
        [
            ("quels animaux a l'utilisateur", ["chien"]),
            ("l'utilisateur a-t-il des chats", ["chats"]),
        ],
    ),
    _c(
        "de8-add-2",
        "addition",
        ["Ich trinke gern Tee", "Kaffee mag ich aber auch"],
        [("was trinkt der Nutzer gern", ["Tee"]), ("mag der Nutzer Kaffee", ["Kaffee"])],
    ),
    # -- plain facts asked about in other words ----------------------------------------------
    _c(
        "zh8-plain-2",
        "plain",
        ["我戴隐形眼镜"],
        [("用户视力怎么样", ["眼镜"])],
    ),
    _c(
        "de8-plain-2",
        "plain",
        ["Ich bin Linkshänderin"],
        [("mit welcher Hand schreibt der Nutzer", ["Linkshänder"])],
    ),
    _c(
        "en8-plain-2",
        "plain",
        ["I've been vegan since 2019"],
        [("does the user eat animal products", ["vegan"])],
    ),
    # -- changes in Chinese, Russian, German -------------------------------------------------
    _c(
        "zh8-job-1",
        "job",
        ["我在一家银行做柜员", "我辞职了，现在自己开咖啡店"],
        [("用户现在做什么工作", ["咖啡店"])],
        stale=["柜员"],
    ),
    _c(
        "ru8-move-1",
        "relocation",
        ["Живу в Самаре", "Всё, мы переехали, теперь мы в Питере"],
        [("где живёт пользователь", ["Питер"])],
        stale=["Самар"],
    ),
    _c(
        "de8-contact-2",
        "contact",
        [
            "Meine Mail ist tom@web.de",
            "Die alte Adresse nutze ich nicht mehr, schreib an tom.k@posteo.de",
        ],
        [("welche E-Mail hat der Nutzer", ["tom.k@posteo.de"])],
        stale=["tom@web.de"],
    ),
]


# Batch C, written after batch B's changes and before any change made for it: the same
# categories again in words not used above.
CONVERSATIONS_C: list[Conversation] = [
    _c(
        "en8-corr-6",
        "correction",
        ["my flat number is 12", "sorry no, 21 - dyslexic moment"],
        [("which flat does the user live in", ["21"])],
        stale=["is 12"],
    ),
    _c(
        "en8-corr-7",
        "correction",
        ["I'm from Lyon originally", "err, Lille actually. Lyon is where I studied"],
        [("where does the user come from", ["Lille"])],
        stale=["from Lyon"],
    ),
    _c(
        "ru8-corr-5",
        "correction",
        ["Моей дочке 8 лет", "Поправлюсь: ей 9"],
        [("сколько лет дочери пользователя", ["9"])],
        stale=["8 лет"],
    ),
    _c(
        "ru8-corr-6",
        "correction",
        ["Я работаю в Яндексе", "Неверно написал — в Озоне"],
        [("в какой компании работает пользователь", ["Озон"])],
        stale=["Яндекс"],
    ),
    _c(
        "zh8-corr-5",
        "correction",
        ["我老公叫张伟", "不好意思，是张炜，火字旁的"],
        [("用户的丈夫叫什么", ["张炜"])],
        stale=["张伟"],
    ),
    _c(
        "zh8-corr-6",
        "correction",
        ["我每周二去健身房", "搞错了，是每周三"],
        [("用户哪天去健身", ["周三"])],
        stale=["周二"],
    ),
    _c(
        "de8-corr-5",
        "correction",
        ["Ich wohne in Köln", "Ach nee, Quatsch – Bonn. Köln war früher"],
        [("wo wohnt der Nutzer", ["Bonn"])],
        stale=["wohnt in Köln"],
    ),
    _c(
        "fr8-corr-3",
        "correction",
        ["Mon fils a 12 ans", "Je me suis trompée, il a 13 ans"],
        [("quel âge a le fils de l'utilisateur", ["13"])],
        stale=["12 ans"],
    ),
    _c(
        "es8-corr-3",
        "correction",
        ["Me llamo Andrés", "Perdona, es Andrea, con a al final"],
        [("nombre del usuario", ["Andrea"])],
        stale=["Andrés"],
    ),
    _c(
        "en8-rev-3",
        "reversal",
        ["I'm a smoker", "quit smoking in March, not touched one since"],
        stale=["is a smoker"],
    ),
    _c(
        "ru8-rev-3",
        "reversal",
        ["Я хожу в спортзал", "В спортзал больше не хожу"],
        stale=["спортзал"],
    ),
    _c(
        "zh8-rev-3",
        "reversal",
        ["我喜欢喝酒", "酒我已经好久不碰了"],
        stale=["喝酒"],
    ),
    _c(
        "de8-rev-3",
        "reversal",
        ["Ich bin Veganerin", "Seit Weihnachten esse ich wieder Käse und Eier"],
        stale=["Veganerin"],
    ),
    _c(
        "es8-rev-3",
        "reversal",
        ["Vivo con mi novio", "Mi novio y yo lo dejamos, ahora vivo sola"],
        stale=["con mi novio", "con su novio"],
    ),
    _c(
        "en8-oth-4",
        "others",
        ["my best mate Raj is a dentist in Bristol"],
        [("what's Raj's job", ["dentist"])],
        never=["user is a dentist"],
    ),
    _c(
        "ru8-oth-3",
        "others",
        ["У моей жены аллергия на кошек"],
        [("на что аллергия у супруги пользователя", ["кош"])],
        never=["У пользователя аллергия"],
    ),
    _c(
        "zh8-oth-3",
        "others",
        ["我哥在深圳开出租车"],
        [("用户的哥哥做什么", ["出租车"])],
        never=["用户在深圳"],
    ),
    _c(
        "de8-oth-3",
        "others",
        ["Meine Schwester wohnt jetzt in Zürich", "Sie arbeitet dort als Ärztin"],
        [("was macht die Schwester beruflich", ["Ärztin"]), ("wo lebt die Schwester", ["Zürich"])],
        never=["Der Nutzer wohnt in Zürich"],
    ),
    _c(
        "en8-add-2",
        "addition",
        ["I have a cat", "oh and a bearded dragon lol"],
        [
            ("what pets does the user have", ["cat"]),
            ("does the user have a reptile", ["bearded dragon"]),
        ],
    ),
    _c(
        "de8-add-3",
        "addition",
        ["Ich spreche Englisch und Französisch", "Ach ja, und ein bisschen Italienisch"],
        [
            ("welche Sprachen spricht der Nutzer", ["Französisch"]),
            ("kann der Nutzer Italienisch", ["Italienisch"]),
        ],
    ),
    _c(
        "zh8-add-3",
        "addition",
        ["我对芒果过敏", "还有菠萝"],
        [("用户对什么过敏", ["芒果"]), ("用户还对什么水果过敏", ["菠萝"])],
    ),
    _c(
        "ru8-plain-2",
        "plain",
        ["Работаю удалённо из дома"],
        [("где работает пользователь", ["удалённо"])],
    ),
    _c(
        "fr8-plain-1",
        "plain",
        ["Je suis végétarienne depuis dix ans"],
        [("l'utilisateur mange-t-il de la viande", ["végétarien"])],
    ),
    _c(
        "zh8-move-2",
        "relocation",
        ["我在广州住", "我们去年底搬到了佛山"],
        [("用户住在哪个城市", ["佛山"])],
        stale=["广州"],
    ),
    _c(
        "ru8-job-2",
        "job",
        ["Я учитель математики", "Ушёл из школы, теперь репетитор"],
        [("кем работает пользователь", ["репетитор"])],
        stale=["учитель"],
    ),
]
