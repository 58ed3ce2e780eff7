# ruff: noqa: RUF001  (Cyrillic and full-width punctuation are the point of this set)
"""A fifth development set of natural conversations for the offline learner and recall
(written here, 7 Dec 2026, before the fallback for plain first-person statements of round 7),
heavy on ordinary statements of everyday facts that no slot rule names ("I drive a Honda",
"I play the cello", "I work night shifts"), said in varied words, beside changes, corrections,
additions, other people's facts and chit-chat that must not become a fact.

Same shape as ``devset_natural``; scored by ``tests/learning/test_devset5.py``. Its first score
(rules and recall as they were) is the honest generalisation figure; batch B was written at the
same time and run once, at the end of the round.
"""

from __future__ import annotations

import functools

from tests.learning.devset_natural import Conversation, conversation

_c = functools.partial(conversation, set_number="5")


CONVERSATIONS: list[Conversation] = [
    # -- English ---------------------------------------------------------------------------
    _c(
        "en5-plain-1",
        "plain",
        ["I drive a 2015 Honda Civic", "thanks, that's helpful"],
        [("what car does the user have", ["Civic"])],
        never=["helpful"],
    ),
    _c(
        "en5-plain-2",
        "plain",
        ["I play the cello in a community orchestra"],
        [("which instrument does the user play", ["cello"])],
    ),
    _c(
        "en5-plain-3",
        "plain",
        ["I work night shifts at a hospital, so mornings are rough"],
        [("what hours does the user work", ["night shifts"])],
        never=["mornings"],
    ),
    _c(
        "en5-plain-4",
        "plain",
        ["I have two kids, a boy and a girl", "ok cool"],
        [("does the user have children", ["two kids"])],
        never=["cool"],
    ),
    _c(
        "en5-plain-5",
        "plain",
        ["I grew up in Ohio", "I support Arsenal, sadly"],
        [("where did the user grow up", ["Ohio"]), ("football team", ["Arsenal"])],
    ),
    _c(
        "en5-plain-6",
        "plain",
        ["I'm left-handed, by the way", "I wear glasses for reading"],
        [("which hand does the user write with", ["left-handed"]), ("eyesight", ["glasses"])],
    ),
    _c(
        "en5-plain-7",
        "plain",
        ["I cycle to work most days", "I'm training for a half marathon in spring"],
        [("how does the user commute", ["cycle"]), ("running race", ["half marathon"])],
    ),
    _c(
        "en5-plain-8",
        "plain",
        ["I own a small bakery downtown", "I'm fine, thanks for asking"],
        [("what business does the user run", ["bakery"])],
        never=["fine", "asking"],
    ),
    _c(
        "en5-plain-9",
        "plain",
        ["I'm type 1 diabetic", "I was just wondering about recipes"],
        [("any medical conditions", ["diabetic"])],
        never=["wondering", "recipes"],
    ),
    _c(
        "en5-plain-10",
        "plain",
        ["I've been learning Korean for a year", "I think so"],
        [("what language is the user studying", ["Korean"])],
        never=["think so"],
    ),
    _c(
        "en5-change-1",
        "change",
        ["I drive a Ford Focus", "sold the Focus last month and bought a Tesla"],
        [("what car does the user drive now", ["Tesla"])],
        ["Focus"],
    ),
    _c(
        "en5-change-2",
        "change",
        ["I moved from Paris to Berlin last year"],
        [("which city does the user live in", ["Berlin"])],
        ["Paris"],
    ),
    _c(
        "en5-change-3",
        "change",
        ["I play tennis on weekends", "I don't play tennis anymore, bad knee"],
        stale=["tennis"],
    ),
    _c(
        "en5-corr-1",
        "correction",
        ["I have three cats", "sorry, two cats, not three"],
        [("how many pets", ["two cats"])],
        ["three"],
    ),
    _c(
        "en5-add-1",
        "addition",
        ["I play guitar", "I also play the drums"],
        [("instruments the user plays", ["guitar"]), ("percussion", ["drums"])],
    ),
    _c(
        "en5-others-1",
        "others",
        ["my brother Sam works as a pilot", "my daughter plays the violin"],
        [("what is Sam's job", ["Sam", "pilot"]), ("daughter's instrument", ["violin"])],
    ),
    _c(
        "en5-never-1",
        "never",
        ["I'm back", "haha ok", "I guess", "I'm not sure", "I'd love to visit Japan someday"],
        never=["back", "guess", "sure", "Japan"],
    ),
    _c(
        "en5-never-2",
        "never",
        [
            "I want to learn to surf",
            "can you help me plan a trip to Rome?",
            "I'm thinking of getting a dog",
        ],
        never=["surf", "Rome", "dog"],
    ),
    # -- Russian ---------------------------------------------------------------------------
    _c(
        "ru5-plain-1",
        "plain",
        ["Я играю на пианино", "спасибо, понятно"],
        [("на каком инструменте он играет", ["пианино"])],
        never=["понятно"],
    ),
    _c(
        "ru5-plain-2",
        "plain",
        ["Я езжу на старой Ладе", "У меня двое детей"],
        [("какая у него машина", ["Лад"]), ("есть ли у него дети", ["дет"])],
    ),
    _c(
        "ru5-plain-3",
        "plain",
        ["Я болею за Спартак", "Я вырос в Новосибирске"],
        [("за какую команду болеет", ["Спартак"]), ("где прошло детство", ["Новосибирск"])],
    ),
    _c(
        "ru5-plain-4",
        "plain",
        ["Я бегаю по утрам", "Я ношу очки"],
        [("какой спорт", ["бега"]), ("зрение", ["очки"])],
    ),
    _c(
        "ru5-change-1",
        "change",
        ["Я живу в Перми", "В прошлом месяце переехал из Перми в Казань"],
        [("где он живёт", ["Казан"])],
        ["Перм"],
    ),
    _c(
        "ru5-corr-1",
        "correction",
        ["Я учусь в МГУ", "ой, не в МГУ, а в ВШЭ"],
        [("где он учится", ["ВШЭ"])],
        ["МГУ"],
    ),
    _c(
        "ru5-others-1",
        "others",
        ["Мой брат живёт в Минске", "Я живу в Бресте"],
        [("где живёт брат", ["брат", "Минск"]), ("город пользователя", ["Брест"])],
    ),
    _c(
        "ru5-never-1",
        "never",
        ["Я думаю, да", "Я хочу когда-нибудь побывать в Исландии", "ладно, хорошо"],
        never=["думаю", "Исланд", "хорошо"],
    ),
    # -- German ----------------------------------------------------------------------------
    _c(
        "de5-plain-1",
        "plain",
        ["Ich fahre einen alten VW Golf", "danke, super"],
        [("welches Auto hat er", ["Golf"])],
        never=["super"],
    ),
    _c(
        "de5-plain-2",
        "plain",
        ["Ich spiele Geige im Schulorchester", "Ich habe zwei Kinder"],
        [("welches Instrument", ["Geige"]), ("hat er Kinder", ["Kinder"])],
    ),
    _c(
        "de5-plain-3",
        "plain",
        ["Ich bin Linkshänder", "Ich trinke keinen Alkohol"],
        [("welche Hand", ["Linkshänder"]), ("trinkt er Alkohol", ["Alkohol"])],
    ),
    _c(
        "de5-plain-4",
        "plain",
        ["Ich bin in Dresden aufgewachsen", "Ich fahre jeden Tag mit dem Rad zur Arbeit"],
        [("wo ist er aufgewachsen", ["Dresden"]), ("wie kommt er zur Arbeit", ["Rad"])],
    ),
    _c(
        "de5-change-1",
        "change",
        ["Ich wohne in Kiel", "Ich bin von Kiel nach Leipzig gezogen"],
        [("wo wohnt er", ["Leipzig"])],
        ["Kiel"],
    ),
    _c(
        "de5-others-1",
        "others",
        ["Meine Frau ist Ärztin", "Ich bin Lehrer"],
        [("Beruf des Nutzers", ["Lehrer"]), ("was macht seine Frau", ["Frau", "Ärztin"])],
    ),
    _c(
        "de5-never-1",
        "never",
        ["Ich glaube schon", "Ich bin wieder da", "Ich möchte irgendwann nach Kanada"],
        never=["glaube", "wieder da", "Kanada"],
    ),
    # -- Chinese ---------------------------------------------------------------------------
    _c(
        "zh5-plain-1",
        "plain",
        ["我开一辆丰田卡罗拉", "谢谢"],
        [("用户开什么车", ["卡罗拉"])],
        never=["谢谢"],
    ),
    _c(
        "zh5-plain-2",
        "plain",
        ["我弹吉他", "我有两个孩子"],
        [("用户会什么乐器", ["吉他"]), ("用户有孩子吗", ["孩子"])],
    ),
    _c(
        "zh5-plain-3",
        "plain",
        ["我在哈尔滨长大", "我每天骑车上班"],
        [("用户在哪里长大", ["哈尔滨"]), ("怎么上班", ["骑车"])],
    ),
    _c(
        "zh5-plain-4",
        "plain",
        ["我是左撇子", "我戴眼镜"],
        [("用户用哪只手", ["左撇子"]), ("视力", ["眼镜"])],
    ),
    _c(
        "zh5-change-1",
        "change",
        ["我住在南京", "我从南京搬到了武汉"],
        [("用户住在哪里", ["武汉"])],
        ["南京"],
    ),
    _c(
        "zh5-others-1",
        "others",
        ["我哥哥是律师", "我是设计师"],
        [("用户的工作", ["设计师"]), ("哥哥做什么", ["哥哥", "律师"])],
    ),
    _c(
        "zh5-never-1",
        "never",
        ["我觉得是吧", "我回来了", "我想去冰岛旅游"],
        never=["觉得", "回来", "冰岛"],
    ),
    # -- French ----------------------------------------------------------------------------
    _c(
        "fr5-plain-1",
        "plain",
        ["Je conduis une vieille Clio", "merci beaucoup"],
        [("quelle voiture a-t-il", ["Clio"])],
        never=["merci"],
    ),
    _c(
        "fr5-plain-2",
        "plain",
        ["Je joue du piano depuis l'enfance", "J'ai deux enfants"],
        [("quel instrument", ["piano"]), ("a-t-il des enfants", ["enfants"])],
    ),
    _c(
        "fr5-plain-3",
        "plain",
        ["J'ai grandi à Marseille", "Je supporte l'OM"],
        [("où a-t-il grandi", ["Marseille"]), ("équipe de foot", ["OM"])],
    ),
    _c(
        "fr5-change-1",
        "change",
        ["J'habite à Nice", "J'ai déménagé de Nice à Toulouse"],
        [("où vit l'utilisateur", ["Toulouse"])],
        ["Nice"],
    ),
    _c(
        "fr5-others-1",
        "others",
        ["Mon frère est boulanger", "Je suis comptable"],
        [("son métier", ["comptable"]), ("que fait son frère", ["frère", "boulanger"])],
    ),
    _c(
        "fr5-never-1",
        "never",
        ["Je pense que oui", "Je suis de retour", "J'aimerais visiter le Japon"],
        never=["pense", "retour", "Japon"],
    ),
    # -- Spanish ---------------------------------------------------------------------------
    _c(
        "es5-plain-1",
        "plain",
        ["Tengo un Seat Ibiza rojo", "vale, gracias"],
        [("qué coche tiene", ["Seat"])],
        never=["gracias"],
    ),
    _c(
        "es5-plain-2",
        "plain",
        ["Toco la batería en un grupo", "Tengo tres hijos"],
        [("qué instrumento toca", ["batería"]), ("tiene hijos", ["hijos"])],
    ),
    _c(
        "es5-plain-3",
        "plain",
        ["Crecí en Valencia", "Soy del Betis"],
        [("dónde creció", ["Valencia"]), ("equipo de fútbol", ["Betis"])],
    ),
    _c(
        "es5-plain-4",
        "plain",
        ["Voy al trabajo en metro", "Uso gafas"],
        [("cómo va al trabajo", ["metro"]), ("vista", ["gafas"])],
    ),
    _c(
        "es5-change-1",
        "change",
        ["Vivo en Zaragoza", "Me mudé de Zaragoza a Valladolid"],
        [("dónde vive", ["Valladolid"])],
        ["Zaragoza"],
    ),
    _c(
        "es5-others-1",
        "others",
        ["Mi hermana es médica", "Yo soy profesor"],
        [
            ("a qué se dedica el usuario", ["profesor"]),
            ("qué hace su hermana", ["hermana", "médica"]),
        ],
    ),
    _c(
        "es5-never-1",
        "never",
        ["Creo que sí", "Estoy bien, gracias", "Me gustaría ir a Islandia"],
        never=["creo", "bien", "Islandia"],
    ),
    # -- Japanese --------------------------------------------------------------------------
    _c(
        "ja5-plain-1",
        "plain",
        ["私はピアノを弾きます", "子供が二人います"],
        [("楽器は何ですか", ["ピアノ"]), ("子供はいますか", ["子供"])],
    ),
    _c(
        "ja5-plain-2",
        "plain",
        ["札幌で育ちました"],
        [("どこで育ちましたか", ["札幌"])],
    ),
    _c(
        "ja5-never-1",
        "never",
        ["そう思います", "いつかアイスランドに行きたいです"],
        never=["思い", "アイスランド"],
    ),
]

# Batch B: written with batch A, before any change of round 7; run once, at the end.
CONVERSATIONS_B: list[Conversation] = [
    _c(
        "en5-b-plain-1",
        "plain",
        ["I volunteer at an animal shelter on Saturdays", "lol nice"],
        [("what does the user do on weekends", ["animal shelter"])],
        never=["nice"],
    ),
    _c(
        "en5-b-plain-2",
        "plain",
        ["I'm colour blind", "I take the train to work"],
        [("does the user have trouble with colours", ["colour blind"]), ("commute", ["train"])],
    ),
    _c(
        "en5-b-plain-3",
        "plain",
        ["I collect vinyl records", "I'm good, you?"],
        [("hobbies", ["vinyl"])],
        never=["good"],
    ),
    _c(
        "en5-b-change-1",
        "change",
        ["I play badminton", "I gave up badminton, now I do yoga"],
        [("what exercise does the user do", ["yoga"])],
        ["badminton"],
    ),
    _c(
        "en5-b-others-1",
        "others",
        ["my son is studying medicine in Leeds"],
        [("what does the son study", ["son", "medicine"])],
    ),
    _c(
        "ru5-b-plain-1",
        "plain",
        ["Я хожу в бассейн два раза в неделю"],
        [("какой у него спорт", ["бассейн"])],
    ),
    _c(
        "ru5-b-never-1",
        "never",
        ["Я вернулся", "Я просто спросил", "Я бы хотел жить в Сочи"],
        never=["вернулся", "спросил", "Сочи"],
    ),
    _c(
        "de5-b-plain-1",
        "plain",
        ["Ich sammle Briefmarken", "Ich arbeite im Schichtdienst"],
        [("Hobby des Nutzers", ["Briefmarken"]), ("Arbeitszeiten", ["Schichtdienst"])],
    ),
    _c(
        "de5-b-change-1",
        "change",
        ["Ich fahre einen Opel", "Ich habe den Opel verkauft und fahre jetzt einen Skoda"],
        [("welches Auto fährt er", ["Skoda"])],
        ["Opel"],
    ),
    _c(
        "zh5-b-plain-1",
        "plain",
        ["我养了一只乌龟", "我不喝咖啡"],
        [("用户养什么宠物", ["乌龟"])],
    ),
    _c(
        "zh5-b-change-1",
        "change",
        ["我在京东工作", "我跳槽到美团了"],
        [("用户在哪家公司", ["美团"])],
        ["京东"],
    ),
    _c(
        "fr5-b-plain-1",
        "plain",
        ["Je fais de l'escalade le week-end", "d'accord, merci"],
        [("quel sport pratique-t-il", ["escalade"])],
        never=["accord"],
    ),
    _c(
        "fr5-b-never-1",
        "never",
        ["Si j'étais riche, j'habiterais à Monaco", "Tu peux me trouver un hôtel à Nice ?"],
        never=["Monaco", "Nice", "hôtel"],
    ),
    _c(
        "es5-b-plain-1",
        "plain",
        ["Hago yoga todas las mañanas", "Tengo un perro que se llama Toby"],
        [("qué deporte practica", ["yoga"]), ("mascota", ["Toby"])],
    ),
    _c(
        "es5-b-change-1",
        "change",
        ["Trabajo de camarero", "Ahora trabajo de cocinero, dejé de ser camarero"],
        [("cuál es su trabajo", ["cocinero"])],
        ["camarero"],
    ),
]
