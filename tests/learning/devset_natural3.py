# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of this set)
"""A third development set of natural conversations for the offline learner (written here,
7 Dec 2026, before any rule was changed for it, phrased unlike the rules and the first two sets:
other verbs, word orders and tenses, casual speech, facts inside longer messages, relatives'
facts, changes said indirectly, and statements that must not become facts).

Same shape as ``devset_natural``; scored by ``tests/learning/test_devset3.py``. Its first score
(rules as they were) is the honest generalisation figure; the rules were then extended against
it, so later scores say what the rules cover, not how well they generalise (the held-out set
is ``bench/natural``).
"""

from __future__ import annotations

from tests.learning.devset_natural import Conversation


def _c(
    id: str,
    cat: str,
    said: list[str],
    current: list[tuple[str, list[str]]] | None = None,
    stale: list[str] | None = None,
    never: list[str] | None = None,
) -> Conversation:
    conversation: Conversation = {"id": id, "lang": id.split("3-")[0], "cat": cat, "said": said}
    for name, value in (("current", current), ("stale", stale), ("never", never)):
        if value:
            conversation[name] = value
    return conversation


CONVERSATIONS: list[Conversation] = [
    # -- English ---------------------------------------------------------------------------
    _c(
        "en3-reloc-1",
        "relocation",
        ["I live in Leeds", "we finally made the move to Lyon, boxes everywhere"],
        [("which city is the user's home", ["Lyon"])],
        ["Leeds"],
        ["boxes"],
    ),
    _c(
        "en3-reloc-2",
        "relocation",
        ["I live in Austin", "been living in Seattle since March, the rain is no joke"],
        [("where does the user live", ["Seattle"])],
        ["Austin"],
        ["rain"],
    ),
    _c(
        "en3-reloc-3",
        "relocation",
        ["I live in Brooklyn", "just signed a lease in Hoboken, moved in last weekend"],
        [("the user's town", ["Hoboken"])],
        ["Brooklyn"],
    ),
    _c(
        "en3-reloc-4",
        "relocation",
        ["I'm living in Oslo at the moment", "Update: I relocated to Bergen for the new role"],
        [("where is the user based", ["Bergen"])],
        ["Oslo"],
        ["new role"],
    ),
    _c(
        "en3-reloc-5",
        "relocation",
        ["I live in Toronto", "we ended up moving out to Ottawa in the spring"],
        [("city of residence", ["Ottawa"])],
        ["Toronto"],
    ),
    _c(
        "en3-reloc-6",
        "others",
        ["I live in Madrid", "my brother just moved to Valencia"],
        [
            ("where does the user live", ["Madrid"]),
            ("where does the user's brother live", ["brother", "Valencia"]),
        ],
    ),
    _c(
        "en3-job-1",
        "job_change",
        ["I work at Bosch", "I'm at Siemens these days, much better team"],
        [("the user's employer", ["Siemens"])],
        ["Bosch"],
        ["better team"],
    ),
    _c(
        "en3-job-2",
        "job_change",
        ["I'm an accountant", "I retrained and now I work as a physiotherapist"],
        [("what is the user's profession", ["physiotherapist"])],
        ["accountant"],
    ),
    _c(
        "en3-job-3",
        "job_change",
        ["I work for Deloitte", "handed in my notice at Deloitte, starting at KPMG on Monday"],
        [("which company does the user work for", ["KPMG"])],
        ["Deloitte"],
    ),
    _c(
        "en3-job-4",
        "job_change",
        ["I'm a barista", "got hired as a junior developer at a fintech startup!"],
        [("what does the user do for work", ["developer"])],
        ["barista"],
    ),
    _c(
        "en3-job-5",
        "job_change",
        ["I work at Google", "left Google in the summer, I'm freelancing now"],
        [("how does the user earn a living", ["freelanc"])],
        ["Google"],
    ),
    _c(
        "en3-job-6",
        "job_change",
        ["I teach maths at a high school", "these days I'm working as a data analyst"],
        [("the user's job", ["data analyst"])],
        ["high school"],
    ),
    _c(
        "en3-job-7",
        "job_change",
        ["I work at a bakery", "I've been with Tesco since the bakery closed"],
        [("where is the user employed", ["Tesco"])],
        ["bakery"],
    ),
    _c(
        "en3-diet-1",
        "plain",
        ["gave up meat last year, feeling great"],
        [("the user's diet", ["meat"])],
        never=["feeling great"],
    ),
    _c(
        "en3-retract-1",
        "retraction",
        ["I'm vegetarian", "I'm not vegetarian anymore, started eating fish and chicken again"],
        [("what does the user eat", ["fish"])],
        ["vegetarian"],
    ),
    _c(
        "en3-retract-2",
        "retraction",
        ["I drive a Honda Civic", "sold the Civic, I take the bus everywhere now"],
        [("how does the user get around", ["bus"])],
        ["Civic"],
    ),
    _c(
        "en3-retract-3",
        "retraction",
        [
            "I'm allergic to penicillin",
            "turns out I'm not actually allergic to penicillin, the test was negative",
        ],
        stale=["penicillin"],
    ),
    _c(
        "en3-corr-1",
        "correction",
        ["my flight is on Tuesday", "wait no, it's Thursday"],
        [("when does the user fly", ["Thursday"])],
        ["Tuesday"],
    ),
    _c(
        "en3-corr-2",
        "correction",
        [
            "the meeting with my landlord is on Monday",
            "actually scratch that, he moved it to Wednesday",
        ],
        [("landlord meeting day", ["Wednesday"])],
        ["Monday"],
    ),
    _c(
        "en3-corr-3",
        "correction",
        ["My daughter is 7", "sorry, she's 8 now, just had her birthday"],
        [("how old is the user's daughter", ["8"])],
        ["7"],
    ),
    _c(
        "en3-corr-4",
        "correction",
        ["my name's Jon", "it's John with an h, actually"],
        [("what is the user called", ["John"])],
    ),
    _c(
        "en3-contact-1",
        "contact",
        ["you can text me on 07700 900456", "new number btw: 07700 900789"],
        [("the user's phone number", ["900789"])],
        ["900456"],
    ),
    _c(
        "en3-contact-2",
        "contact",
        [
            "email me at mia@outlook.com",
            "I mostly use mia.chen@gmail.com these days, the outlook one is full of spam",
        ],
        [("how to email the user", ["mia.chen@gmail.com"])],
        ["mia@outlook.com"],
        ["spam"],
    ),
    _c(
        "en3-family-1",
        "others",
        ["my sister Lena is a teacher", "my husband works at Airbus"],
        [
            ("what does the user's sister do", ["Lena", "teacher"]),
            ("where does the husband work", ["husband", "Airbus"]),
        ],
    ),
    _c(
        "en3-family-2",
        "others",
        ["my mum is vegan and lives in Cardiff", "I'm not vegan myself"],
        [("the user's mother's diet", ["mum", "vegan"])],
    ),
    _c(
        "en3-family-3",
        "others",
        ["our son Leo just started at university in Glasgow"],
        [("where does the user's son study", ["Leo", "Glasgow"])],
    ),
    _c(
        "en3-never-1",
        "never",
        ["should I move to Berlin?", "is Berlin expensive to live in?"],
        never=["Berlin"],
    ),
    _c(
        "en3-never-2",
        "never",
        ["if I were rich I'd live in Monaco", "imagine working at NASA haha"],
        never=["Monaco", "NASA"],
    ),
    _c(
        "en3-never-3",
        "never",
        [
            "my doctor said I might be gluten intolerant",
            "my boss thinks I should become a manager",
        ],
        never=["gluten", "manager"],
    ),
    _c(
        "en3-never-4",
        "never",
        ["I'm a professional napper, joking obviously", "I basically live at the gym lol"],
        never=["napper", "gym"],
    ),
    _c(
        "en3-never-5",
        "never",
        [
            "what's a good gift for someone who lives in Tokyo?",
            "my friend works at Netflix and she loves it",
        ],
        [("where does the user's friend work", ["friend", "Netflix"])],
        never=["Tokyo"],
    ),
    _c(
        "en3-embed-1",
        "plain",
        [
            "Hi there! Quick background before my question: I'm Ravi, I work as a nurse in "
            "Leicester and I've got two cats. Can you help me plan meals for night shifts?"
        ],
        [
            ("the user's name", ["Ravi"]),
            ("what is the user's job", ["nurse"]),
            ("which city does the user live in", ["Leicester"]),
            ("pets", ["cats"]),
        ],
        never=["night shifts"],
    ),
    _c(
        "en3-embed-2",
        "plain",
        ["so yeah, since I'm lactose intolerant, dairy is out, but what about goat cheese?"],
        [("food intolerances", ["lactose"])],
        never=["goat cheese"],
    ),
    _c(
        "en3-plain-1",
        "plain",
        ["I've been a pilot for ten years", "I'm originally from Cape Town but I live in Nairobi"],
        [
            ("the user's occupation", ["pilot"]),
            ("where does the user live", ["Nairobi"]),
            ("where is the user from", ["Cape Town"]),
        ],
    ),
    _c(
        "en3-plain-2",
        "plain",
        ["I speak Portuguese and a bit of Italian", "I'm left-handed, which is why scissors suck"],
        [("languages the user speaks", ["Portuguese"]), ("handedness", ["left-handed"])],
        never=["scissors"],
    ),
    _c(
        "en3-addition-1",
        "addition",
        ["I have a dog", "we also adopted a rabbit last week"],
        [("the user's pets", ["dog"]), ("does the user have a rabbit", ["rabbit"])],
    ),
    _c(
        "en3-addition-2",
        "addition",
        ["I'm allergic to peanuts", "oh and to shellfish as well"],
        [("allergies", ["peanuts"]), ("seafood allergy", ["shellfish"])],
    ),
    _c(
        "en3-reversal-1",
        "reversal",
        ["I prefer window seats", "these days I'd rather sit on the aisle"],
        [("seat preference", ["aisle"])],
        ["window"],
    ),
    _c(
        "en3-reversal-2",
        "reversal",
        ["I love running", "honestly I've lost interest in running, it's all cycling now"],
        [("the user's sport", ["cycling"])],
        ["love running"],
    ),
    _c(
        "en3-name-1",
        "plain",
        ["call me Bea", "my surname is Okonkwo"],
        [("what should we call the user", ["Bea"]), ("family name", ["Okonkwo"])],
    ),
    # -- Russian ---------------------------------------------------------------------------
    _c(
        "ru3-job-1",
        "job_change",
        ["я работаю бухгалтером", "теперь я работаю врачом"],
        [("кем работает пользователь", ["врач"])],
        ["бухгалтер"],
    ),
    _c(
        "ru3-reloc-1",
        "relocation",
        ["живу в Казани", "в прошлом месяце мы перебрались в Москву"],
        [("город пользователя", ["Москв"])],
        ["Казан"],
    ),
    _c(
        "ru3-reloc-2",
        "relocation",
        ["я живу в Самаре", "уже полгода как живу в Новосибирске"],
        [("где живёт пользователь", ["Новосибирск"])],
        ["Самар"],
    ),
    _c(
        "ru3-job-2",
        "job_change",
        ["работаю в Яндексе", "ушёл из Яндекса, сейчас я в Авито"],
        [("место работы", ["Авито"])],
        ["Яндекс"],
    ),
    _c(
        "ru3-retract-1",
        "retraction",
        ["я веган", "я больше не веган"],
        stale=["веган"],
    ),
    _c(
        "ru3-corr-1",
        "correction",
        ["приём у врача во вторник", "ой, нет, в среду"],
        [("когда приём у врача", ["сред"])],
        ["вторник"],
    ),
    _c(
        "ru3-family-1",
        "others",
        ["моя сестра Оля работает медсестрой", "а муж у меня программист"],
        [("кем работает сестра", ["Оля"]), ("профессия мужа", ["муж", "программист"])],
    ),
    _c(
        "ru3-never-1",
        "never",
        ["а если бы я переехал в Сочи?", "друг говорит, что мне надо стать юристом"],
        never=["Сочи", "юрист"],
    ),
    _c(
        "ru3-plain-1",
        "plain",
        ["меня зовут Дима, мне 34, живу в Твери"],
        [("имя", ["Дима"]), ("возраст", ["34"]), ("город", ["Твер"])],
    ),
    _c(
        "ru3-contact-1",
        "contact",
        ["мой email dima@mail.ru", "пиши лучше на dima.k@yandex.ru, старую почту не проверяю"],
        [("электронная почта", ["dima.k@yandex.ru"])],
        ["dima@mail.ru"],
    ),
    _c(
        "ru3-addition-1",
        "addition",
        ["у меня аллергия на орехи", "и на кошек тоже"],
        [("аллергия", ["орех"]), ("аллергия на животных", ["кош"])],
    ),
    # -- German ----------------------------------------------------------------------------
    _c(
        "de3-reloc-1",
        "relocation",
        ["Ich wohne in Hamburg", "ich wohne jetzt in Köln"],
        [("Wohnort", ["Köln"])],
        ["Hamburg"],
    ),
    _c(
        "de3-reloc-2",
        "relocation",
        ["Wir leben in Wien", "Wir sind letzten Sommer nach Graz gezogen"],
        [("wo lebt der Nutzer", ["Graz"])],
        ["Wien"],
    ),
    _c(
        "de3-job-1",
        "job_change",
        ["Ich arbeite bei der Telekom", "Seit Januar bin ich bei SAP"],
        [("Arbeitgeber", ["SAP"])],
        ["Telekom"],
    ),
    _c(
        "de3-job-2",
        "job_change",
        ["Ich bin Lehrerin", "Inzwischen arbeite ich als Übersetzerin"],
        [("Beruf", ["Übersetzerin"])],
        ["Lehrerin"],
    ),
    _c(
        "de3-diet-1",
        "plain",
        ["Ich esse seit letztem Jahr kein Fleisch mehr"],
        [("Ernährung", ["Fleisch"])],
    ),
    _c(
        "de3-retract-1",
        "retraction",
        ["Ich bin Vegetarier", "Vegetarier bin ich nicht mehr"],
        stale=["Vegetarier"],
    ),
    _c(
        "de3-corr-1",
        "correction",
        ["Mein Termin beim Zahnarzt ist am Montag", "Moment, nein, am Dienstag"],
        [("wann ist der Zahnarzttermin", ["Dienstag"])],
        ["Montag"],
    ),
    _c(
        "de3-family-1",
        "others",
        ["Meine Frau heißt Anna und arbeitet als Ärztin"],
        [("Name der Ehefrau", ["Anna"]), ("Beruf der Frau", ["Ärztin"])],
    ),
    _c(
        "de3-never-1",
        "never",
        ["Sollte ich nach München ziehen?", "Mein Chef meint, ich sollte Teamleiter werden"],
        never=["München", "Teamleiter"],
    ),
    _c(
        "de3-plain-1",
        "plain",
        ["Hallo, ich heiße Jonas und komme aus Bremen, wohne aber in Leipzig"],
        [("Name", ["Jonas"]), ("wo wohnt der Nutzer", ["Leipzig"]), ("Herkunft", ["Bremen"])],
    ),
    _c(
        "de3-contact-1",
        "contact",
        ["Meine Handynummer ist 0151 2345678", "Ich hab eine neue Nummer: 0176 9876543"],
        [("Telefonnummer", ["9876543"])],
        ["2345678"],
    ),
    # -- Chinese ---------------------------------------------------------------------------
    _c(
        "zh3-reloc-1",
        "relocation",
        ["我住在广州", "我上个月搬到了深圳"],
        [("用户住在哪里", ["深圳"])],
        ["广州"],
    ),
    _c(
        "zh3-job-1",
        "job_change",
        ["我在阿里上班", "现在在华为工作"],
        [("在哪家公司工作", ["华为"])],
        ["阿里"],
    ),
    _c(
        "zh3-job-2",
        "job_change",
        ["我是老师", "我现在改行当律师了"],
        [("职业", ["律师"])],
        ["老师"],
    ),
    _c("zh3-retract-1", "retraction", ["我吃素", "我已经不吃素了"], stale=["吃素"]),
    _c(
        "zh3-corr-1",
        "correction",
        ["周二我要去看牙医", "不对，是周四"],
        [("看牙医是哪天", ["周四"])],
        ["周二"],
    ),
    _c(
        "zh3-family-1",
        "others",
        ["我妹妹在北京读大学"],
        [("妹妹在哪里上学", ["妹妹", "北京"])],
    ),
    _c(
        "zh3-never-1",
        "never",
        ["如果我搬到上海会怎样？", "我朋友说我应该学日语"],
        never=["上海", "日语"],
    ),
    _c(
        "zh3-plain-1",
        "plain",
        ["我叫王芳，今年28岁，对海鲜过敏"],
        [("名字", ["王芳"]), ("年龄", ["28"]), ("过敏", ["海鲜"])],
    ),
    _c(
        "zh3-contact-1",
        "contact",
        ["我的邮箱是 fang@qq.com", "邮箱换成 fang.w@163.com 了"],
        [("电子邮件", ["fang.w@163.com"])],
        ["fang@qq.com"],
    ),
    # -- Spanish ---------------------------------------------------------------------------
    _c(
        "es3-reloc-1",
        "relocation",
        ["vivo en Sevilla", "al final nos mudamos a Bilbao en enero"],
        [("dónde vive el usuario", ["Bilbao"])],
        ["Sevilla"],
    ),
    _c(
        "es3-job-1",
        "job_change",
        ["trabajo en Telefónica", "me cambié de trabajo, ahora estoy en BBVA"],
        [("empresa", ["BBVA"])],
        ["Telefónica"],
    ),
    _c(
        "es3-job-2",
        "job_change",
        ["soy enfermera", "ahora trabajo como profesora de inglés"],
        [("profesión", ["profesora"])],
        ["enfermera"],
    ),
    _c(
        "es3-retract-1",
        "retraction",
        ["soy vegetariano", "ya no soy vegetariano"],
        stale=["vegetariano"],
    ),
    _c(
        "es3-corr-1",
        "correction",
        ["la cita con el médico es el lunes", "perdón, quise decir el martes"],
        [("cuándo es la cita médica", ["martes"])],
        ["lunes"],
    ),
    _c(
        "es3-family-1",
        "others",
        ["mi hermano Pablo vive en México"],
        [("dónde vive el hermano", ["Pablo", "México"])],
    ),
    _c(
        "es3-never-1",
        "never",
        ["¿debería mudarme a Barcelona?", "mi madre dice que debería ser abogado"],
        never=["Barcelona", "abogado"],
    ),
    _c(
        "es3-plain-1",
        "plain",
        ["me llamo Lucía y tengo alergia a los frutos secos"],
        [("nombre", ["Lucía"]), ("alergias", ["frutos secos"])],
    ),
    # -- French ----------------------------------------------------------------------------
    _c(
        "fr3-reloc-1",
        "relocation",
        ["j'habite à Lille", "on a finalement déménagé à Nantes"],
        [("où habite l'utilisateur", ["Nantes"])],
        ["Lille"],
    ),
    _c(
        "fr3-job-1",
        "job_change",
        ["je travaille chez Renault", "depuis mars je bosse chez Airbus"],
        [("employeur", ["Airbus"])],
        ["Renault"],
    ),
    _c(
        "fr3-job-2",
        "job_change",
        ["je suis comptable", "j'ai changé de métier, je suis infirmière maintenant"],
        [("métier", ["infirmière"])],
        ["comptable"],
    ),
    _c(
        "fr3-retract-1",
        "retraction",
        ["je suis végétarien", "je ne suis plus végétarien"],
        stale=["végétarien"],
    ),
    _c(
        "fr3-corr-1",
        "correction",
        ["mon rendez-vous chez le dentiste est jeudi", "non attends, c'est vendredi"],
        [("quand est le dentiste", ["vendredi"])],
        ["jeudi"],
    ),
    _c(
        "fr3-family-1",
        "others",
        ["ma femme s'appelle Claire, elle est architecte"],
        [("prénom de la femme", ["Claire"]), ("métier de la femme", ["architecte"])],
    ),
    _c(
        "fr3-never-1",
        "never",
        ["et si je partais vivre à Montréal ?", "mon collègue dit que je devrais devenir manager"],
        never=["Montréal", "manager"],
    ),
    _c(
        "fr3-plain-1",
        "plain",
        ["Salut, moi c'est Hugo, j'ai 31 ans et je vis à Bordeaux"],
        [("prénom", ["Hugo"]), ("âge", ["31"]), ("ville", ["Bordeaux"])],
    ),
    # -- Japanese --------------------------------------------------------------------------
    _c(
        "ja3-reloc-1",
        "relocation",
        ["大阪に住んでいます", "先月、福岡に引っ越しました"],
        [("どこに住んでいる", ["福岡"])],
        ["大阪"],
    ),
    _c(
        "ja3-job-1",
        "job_change",
        ["ソニーで働いています", "今はトヨタに勤めています"],
        [("勤務先", ["トヨタ"])],
        ["ソニー"],
    ),
    _c(
        "ja3-job-2",
        "job_change",
        ["看護師です", "転職して今はエンジニアをしています"],
        [("職業", ["エンジニア"])],
        ["看護師"],
    ),
    _c(
        "ja3-retract-1",
        "retraction",
        ["ベジタリアンです", "もうベジタリアンではありません"],
        stale=["ベジタリアン"],
    ),
    _c(
        "ja3-corr-1",
        "correction",
        ["歯医者の予約は火曜日です", "すみません、木曜日でした"],
        [("歯医者はいつ", ["木曜"])],
        ["火曜"],
    ),
    _c("ja3-family-1", "others", ["姉は京都で教師をしています"], [("姉の仕事", ["姉", "教師"])]),
    _c(
        "ja3-never-1",
        "never",
        ["東京に引っ越したほうがいいかな？", "友達は私が弁護士になるべきだと言っています"],
        never=["東京", "弁護士"],
    ),
    _c(
        "ja3-plain-1",
        "plain",
        ["田中です。そばアレルギーがあります"],
        [("名前", ["田中"]), ("アレルギー", ["そば"])],
    ),
]
