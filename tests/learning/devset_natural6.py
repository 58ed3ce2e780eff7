# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of this set)
"""A sixth development set of natural conversations for the offline learner and recall
(written here, 7 Dec 2026, round 9, before any change of the round), heavy on what the earlier
sets left weakest: corrections said in passing ("sorry, I meant ...", "two cats, not three"),
reversals and changes said in other words than the fact they replace, changes in Chinese,
Russian and German, other people's facts beside the user's, and questions that share no word
with the stored statement.

Same shape as ``devset_natural``; scored by ``tests/learning/test_devset6.py``. Its first score
(rules and recall as they were) is the honest generalisation figure.
"""

from __future__ import annotations

import functools

from tests.learning.devset_natural import Conversation, conversation

_c = functools.partial(conversation, set_number="6")


CONVERSATIONS: list[Conversation] = [
    # -- English: corrections ----------------------------------------------------------------
    _c(
        "en6-corr-1",
        "correction",
        ["my dentist appointment is on Thursday", "sorry, I meant Friday, not Thursday"],
        [("when is the user seeing the dentist", ["Friday"])],
        stale=["Thursday"],
    ),
    _c(
        "en6-corr-2",
        "correction",
        ["I have three cats", "wait, two cats, not three. the third one is my neighbour's"],
        [("how many pets does the user have", ["two cats"])],
        stale=["three cats"],
    ),
    _c(
        "en6-corr-3",
        "correction",
        ["I'm 34 years old", "typo, I'm 43 actually"],
        [("how old is the user", ["43"])],
        stale=["34"],
    ),
    _c(
        "en6-corr-4",
        "correction",
        ["my sister's name is Hannah", "oops, her name is Johanna, Hannah is my cousin"],
        [("what is the user's sister called", ["Johanna"])],
        stale=["sister's name is Hannah", "sister is Hannah"],
    ),
    _c(
        "en6-corr-5",
        "correction",
        ["I work at Siemens", "correction: I work at Bosch, Siemens was my last job"],
        [("who is the user's employer", ["Bosch"])],
        stale=["works at Siemens"],
    ),
    _c(
        "en6-corr-6",
        "correction",
        ["I live in Leeds", "no sorry, I live in York. Leeds is where I work"],
        [("which town is the user's home", ["York"])],
        stale=["lives in Leeds"],
    ),
    # -- English: reversals and changes in other words ----------------------------------------
    _c(
        "en6-rev-1",
        "reversal",
        ["I smoke about ten a day", "quick update: I quit smoking three weeks ago!"],
        [("does the user smoke", ["quit"])],
        stale=["smokes about ten"],
    ),
    _c(
        "en6-rev-2",
        "reversal",
        ["I'm vegan", "I started eating fish again, so I'm not vegan anymore"],
        [("what is the user's diet", ["fish"])],
        stale=["is vegan"],
    ),
    _c(
        "en6-rev-3",
        "reversal",
        ["I take the train to the office", "these days I work from home full time"],
        [("where does the user work from", ["home"])],
        stale=["train to the office"],
    ),
    _c(
        "en6-rev-4",
        "reversal",
        ["I'm single", "big news, I got engaged to Marco last weekend"],
        [("is the user in a relationship", ["Marco"])],
        stale=["is single"],
    ),
    _c(
        "en6-rev-5",
        "reversal",
        [
            "I play tennis on Sundays",
            "my knee is bad now so I switched to swimming instead of tennis",
        ],
        [("what sport does the user do", ["swimming"])],
        stale=["plays tennis"],
    ),
    _c(
        "en6-job-1",
        "job",
        ["I'm a high school teacher", "I left teaching in June and retrained as a software tester"],
        [("what is the user's profession", ["software tester"])],
        stale=["high school teacher"],
    ),
    _c(
        "en6-move-1",
        "relocation",
        ["I live in Denver", "we finally relocated to Austin, the boxes are everywhere"],
        [("what city does the user live in", ["Austin"])],
        stale=["Denver"],
        never=["boxes"],
    ),
    _c(
        "en6-contact-1",
        "contact",
        ["my number is 555-0142", "I got a new phone number: 555-0199"],
        [("how to call the user", ["555-0199"])],
        stale=["555-0142"],
    ),
    # -- English: others and questions in other words -----------------------------------------
    _c(
        "en6-others-1",
        "others",
        ["my husband is allergic to nuts", "I'm allergic to penicillin"],
        [
            ("which medicine must the user avoid", ["penicillin"]),
            ("what is the user's husband allergic to", ["nuts"]),
        ],
    ),
    _c(
        "en6-others-2",
        "others",
        ["my daughter just started at university in Glasgow", "I'm still in Bristol"],
        [("where does the user live", ["Bristol"]), ("where does the daughter study", ["Glasgow"])],
        stale=["user lives in Glasgow"],
    ),
    _c(
        "en6-plain-1",
        "plain",
        ["I speak Portuguese and a bit of Italian", "ok, thanks"],
        [("which languages does the user know", ["Portuguese"])],
    ),
    _c(
        "en6-plain-2",
        "plain",
        ["I'm lactose intolerant", "what's a good breakfast?"],
        [("can the user have milk", ["lactose"])],
        never=["breakfast"],
    ),
    # -- Russian ---------------------------------------------------------------------------
    _c(
        "ru6-corr-1",
        "correction",
        ["Мне 29 лет", "ой, опечатка, мне 31"],
        [("сколько пользователю лет", ["31"])],
        stale=["29"],
    ),
    _c(
        "ru6-corr-2",
        "correction",
        ["Я живу в Самаре", "точнее, в Тольятти, в Самаре я работаю"],
        [("в каком городе живёт пользователь", ["Тольятти"])],
        stale=["живёт в Самаре"],
    ),
    _c(
        "ru6-move-1",
        "relocation",
        ["Я живу в Новосибирске", "Мы с семьёй переехали в Казань"],
        [("где сейчас живёт пользователь", ["Казан"])],
        stale=["Новосибирск"],
    ),
    _c(
        "ru6-job-1",
        "job",
        ["Я работаю бухгалтером", "Я уволился и теперь работаю таксистом"],
        [("кем работает пользователь", ["таксист"])],
        stale=["бухгалтер"],
    ),
    _c(
        "ru6-rev-1",
        "reversal",
        ["Я курю", "Я бросил курить в прошлом году"],
        [("курит ли пользователь", ["брос"])],
        stale=["Пользователь курит"],
    ),
    _c(
        "ru6-others-1",
        "others",
        ["Мой брат Дима живёт в Минске", "Я живу в Москве"],
        [("где живёт пользователь", ["Москв"]), ("где живёт брат", ["Минск"])],
        stale=["Пользователь живёт в Минске"],
    ),
    _c(
        "ru6-contact-1",
        "contact",
        ["Моя почта ivan@mail.ru", "Новая почта: ivan.petrov@yandex.ru"],
        [("электронный адрес пользователя", ["ivan.petrov@yandex.ru"])],
        stale=["ivan@mail.ru"],
    ),
    # -- German ----------------------------------------------------------------------------
    _c(
        "de6-corr-1",
        "correction",
        ["Mein Termin beim Arzt ist am Montag", "Quatsch, ich meinte Dienstag"],
        [("wann ist der Arzttermin", ["Dienstag"])],
        stale=["Montag"],
    ),
    _c(
        "de6-move-1",
        "relocation",
        ["Ich wohne in Köln", "Seit März wohne ich in Leipzig"],
        [("in welcher Stadt lebt der Nutzer", ["Leipzig"])],
        stale=["Köln"],
    ),
    _c(
        "de6-job-1",
        "job",
        ["Ich arbeite bei der Telekom", "Ich habe gekündigt und arbeite jetzt bei Zalando"],
        [("wo arbeitet der Nutzer", ["Zalando"])],
        stale=["Telekom"],
    ),
    _c(
        "de6-rev-1",
        "reversal",
        ["Ich esse kein Fleisch", "Inzwischen esse ich wieder Fleisch"],
        [("isst der Nutzer Fleisch", ["wieder Fleisch"])],
        stale=["kein Fleisch"],
    ),
    _c(
        "de6-others-1",
        "others",
        ["Meine Frau ist Lehrerin", "Ich bin Ingenieur"],
        [("was ist der Beruf des Nutzers", ["Ingenieur"]), ("Beruf der Frau", ["Lehrerin"])],
        stale=["Der Nutzer ist Lehrerin"],
    ),
    # -- Chinese ---------------------------------------------------------------------------
    _c(
        "zh6-move-1",
        "relocation",
        ["我住在北京", "上个月我搬到深圳了"],
        [("用户现在住哪里", ["深圳"])],
        stale=["北京"],
    ),
    _c(
        "zh6-job-1",
        "job",
        ["我在华为工作", "我已经跳槽了，现在在腾讯上班"],
        [("用户在哪家公司工作", ["腾讯"])],
        stale=["华为"],
    ),
    _c(
        "zh6-corr-1",
        "correction",
        ["我有两个孩子", "说错了，我有三个孩子"],
        [("用户有几个孩子", ["三个孩子"])],
        stale=["两个孩子"],
    ),
    _c(
        "zh6-rev-1",
        "reversal",
        ["我喜欢喝咖啡", "我现在不喝咖啡了，改喝茶"],
        [("用户喝什么", ["茶"])],
        stale=["喜欢喝咖啡"],
    ),
    _c(
        "zh6-others-1",
        "others",
        ["我妈妈是医生", "我是老师"],
        [("用户的职业", ["老师"]), ("用户妈妈做什么工作", ["医生"])],
        stale=["用户是医生"],
    ),
    _c(
        "zh6-plain-1",
        "plain",
        ["我对猫毛过敏", "谢谢"],
        [("用户有什么过敏", ["猫毛"])],
    ),
    # -- French, Spanish, Japanese ---------------------------------------------------------
    _c(
        "fr6-move-1",
        "relocation",
        ["J'habite à Lyon", "Je viens de déménager à Nantes"],
        [("dans quelle ville vit l'utilisateur", ["Nantes"])],
        stale=["Lyon"],
    ),
    _c(
        "fr6-corr-1",
        "correction",
        ["J'ai deux chiens", "pardon, j'ai trois chiens"],
        [("combien d'animaux a l'utilisateur", ["trois chiens"])],
        stale=["deux chiens"],
    ),
    _c(
        "es6-job-1",
        "job",
        ["Trabajo como camarero", "Ahora trabajo como cocinero en un hotel"],
        [("cuál es el trabajo del usuario", ["cocinero"])],
        stale=["camarero"],
    ),
    _c(
        "es6-move-1",
        "relocation",
        ["Vivo en Sevilla", "Me mudé a Valencia en enero"],
        [("dónde vive el usuario", ["Valencia"])],
        stale=["Sevilla"],
    ),
    _c(
        "ja6-move-1",
        "relocation",
        ["私は大阪に住んでいます", "先月、福岡に引っ越しました"],
        [("ユーザーはどこに住んでいますか", ["福岡"])],
        stale=["大阪"],
    ),
    _c(
        "ja6-plain-1",
        "plain",
        ["私は猫を二匹飼っています"],
        [("ユーザーのペット", ["猫"])],
    ),
]

# Batch B, written after batch A's first changes and before any change made for it: contact
# details, additions, other people's facts and corrections in more languages.
CONVERSATIONS_B: list[Conversation] = [
    _c(
        "en6-contact-2",
        "contact",
        ["my work email is j.doe@acme.io", "I'm moving to a new job so use jdoe@gmail.com instead"],
        [("which email address should be used for the user", ["jdoe@gmail.com"])],
        stale=["j.doe@acme.io"],
    ),
    _c(
        "en6-contact-3",
        "contact",
        ["I live at 14 Elm Road, Bath", "we moved, the new address is 3 Hill Street, Bath"],
        [("what is the user's home address", ["3 Hill Street"])],
        stale=["14 Elm Road"],
    ),
    _c(
        "en6-add-1",
        "addition",
        ["I'm allergic to peanuts", "and to kiwi too, forgot to mention"],
        [("what can't the user eat", ["peanuts"]), ("fruit allergy", ["kiwi"])],
    ),
    _c(
        "en6-add-2",
        "addition",
        ["I speak Spanish", "I also speak some Japanese"],
        [("does the user know Spanish", ["Spanish"]), ("asian languages", ["Japanese"])],
    ),
    _c(
        "en6-add-3",
        "addition",
        ["we have a dog called Rex", "and we just adopted a kitten named Miso"],
        [("what is the dog's name", ["Rex"]), ("what is the cat called", ["Miso"])],
    ),
    _c(
        "en6-others-3",
        "others",
        ["my son Tom is a plumber", "I'm an accountant myself"],
        [("what does the user do", ["accountant"]), ("Tom's job", ["plumber"])],
        stale=["user is a plumber"],
    ),
    _c(
        "en6-others-4",
        "others",
        ["my partner is vegetarian but I eat everything", "what should I cook tonight?"],
        [("does the partner eat meat", ["vegetarian"])],
        stale=["user is vegetarian"],
        never=["cook tonight"],
    ),
    _c(
        "en6-corr-7",
        "correction",
        ["I'm flying to Rome on the 12th", "scratch that, it's the 14th"],
        [("when is the flight to Rome", ["14th"])],
        stale=["12th"],
    ),
    _c(
        "ru6-add-1",
        "addition",
        ["У меня аллергия на орехи", "И на мёд тоже"],
        [("на что аллергия у пользователя", ["орех"]), ("аллергия на мёд", ["мёд"])],
    ),
    _c(
        "ru6-others-2",
        "others",
        ["Моя жена работает врачом", "А я программист"],
        [("кем работает жена", ["врач"]), ("профессия пользователя", ["программист"])],
        stale=["Пользователь работает врачом"],
    ),
    _c(
        "ru6-corr-3",
        "correction",
        ["У меня две собаки", "нет, три собаки, забыл про щенка"],
        [("сколько собак у пользователя", ["три"])],
        stale=["две собаки"],
    ),
    _c(
        "de6-contact-1",
        "contact",
        ["Meine Nummer ist 0151 2345678", "Ich habe eine neue Nummer: 0160 9876543"],
        [("Telefonnummer des Nutzers", ["0160 9876543"])],
        stale=["0151 2345678"],
    ),
    _c(
        "de6-corr-2",
        "correction",
        ["Ich habe drei Kinder", "Sorry, ich habe zwei Kinder"],
        [("wie viele Kinder hat der Nutzer", ["zwei Kinder"])],
        stale=["drei Kinder"],
    ),
    _c(
        "de6-add-1",
        "addition",
        ["Ich spiele Gitarre", "Ich spiele auch Klavier"],
        [("welche Instrumente", ["Gitarre"]), ("spielt der Nutzer Klavier", ["Klavier"])],
    ),
    _c(
        "zh6-contact-1",
        "contact",
        ["我的邮箱是li.wei@163.com", "我换了邮箱，新的是liwei@qq.com"],
        [("用户的电子邮箱", ["liwei@qq.com"])],
        stale=["li.wei@163.com"],
    ),
    _c(
        "zh6-add-1",
        "addition",
        ["我对花生过敏", "我对虾也过敏"],
        [("用户对什么过敏", ["花生"]), ("用户对海鲜过敏吗", ["虾"])],
    ),
    _c(
        "zh6-others-2",
        "others",
        ["我哥哥在上海工作", "我在杭州工作"],
        [("用户在哪个城市工作", ["杭州"]), ("哥哥在哪里工作", ["上海"])],
        stale=["用户在上海工作"],
    ),
    _c(
        "zh6-corr-2",
        "correction",
        ["我今年三十岁", "不对，我今年三十二岁"],
        [("用户多大", ["三十二"])],
        stale=["三十岁"],
    ),
    _c(
        "fr6-others-1",
        "others",
        ["Ma sœur habite à Bordeaux", "Moi, j'habite à Lille"],
        [("où habite l'utilisateur", ["Lille"]), ("où vit la sœur", ["Bordeaux"])],
    ),
    _c(
        "es6-corr-1",
        "correction",
        ["Tengo dos gatos", "perdón, tengo tres gatos"],
        [("cuántos gatos tiene el usuario", ["tres gatos"])],
        stale=["dos gatos"],
    ),
]
