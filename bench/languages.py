"""Measurements behind docs/languages.md: Chinese segmentation (bigrams or jieba) and detection.

Run: ``.venv/bin/python bench/languages.py`` (jieba and py3langid must be installed for their
columns; ttmemory needs neither). Segmenters are compared on a small design sample of facts a
user says about themself, with questions worded as a user asks them: index size, recall of
the right fact at 1 and 3 by BM25, speed, import time and memory. Detection is py3langid's
and lingua's on short texts in the five languages with stop lists, as queries are.
"""

# ruff: noqa: RUF001 (Chinese punctuation and Cyrillic letters are the data)
from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django

django.setup()

from ttmemory.text import _CJK, normalise_terms, normalise_text  # noqa: E402

FACTS = [
    "我对花生过敏",
    "我喜欢靠窗的座位",
    "我住在北京朝阳区",
    "我在一家医院当护士",
    "我的女儿叫小美，今年五岁",
    "我每天早上喝一杯咖啡",
    "我养了一只猫，名字叫咪咪",
    "我不吃猪肉",
    "我的生日是三月十二号",
    "我上个月从上海搬到了深圳",
    "我老公是程序员",
    "周末我喜欢去爬山",
    "我正在学习日语",
    "我开一辆白色的特斯拉",
    "我对青霉素过敏",
    "我是素食主义者",
    "我的电话号码换了",
    "我妈妈住在杭州",
    "我最喜欢的水果是芒果",
    "我在腾讯工作了三年",
    "我喜欢看科幻电影",
    "我每周去健身房三次",
    "我怕坐飞机",
    "我的狗是金毛",
    "我喝茶不加糖",
]
# (question, indexes of the facts that answer it)
QUESTIONS = [
    ("花生", {0}),
    ("我对什么过敏？", {0, 14}),
    ("靠窗还是靠过道", {1}),
    ("座位偏好", {1}),
    ("你住在哪里", {2}),
    ("在哪个城市住", {2}),
    ("护士", {3}),
    ("女儿几岁了", {4}),
    ("咖啡", {5}),
    ("猫叫什么名字", {6}),
    ("猪肉", {7}),
    ("生日是哪天", {8}),
    ("深圳", {9}),
    ("丈夫做什么工作", {10}),
    ("爬山", {11}),
    ("学什么语言", {12}),
    ("什么车", {13}),
    ("青霉素", {14}),
    ("吃素吗", {15}),
    ("妈妈住哪", {17}),
    ("芒果", {18}),
    ("在哪家公司工作", {19}),
    ("喜欢什么电影", {20}),
    ("健身", {21}),
    ("飞机", {22}),
    ("狗", {23}),
    ("茶", {24}),
    ("猫", {6}),
]
# Short texts as queries are, in the five languages with stop lists (detection).
SHORT = {
    "en": ["peanut allergy", "where do I live", "my sister", "favourite food", "new job",
           "window seat", "the dog", "coffee or tea", "Berlin", "allergies"],
    "de": ["Erdnussallergie", "wo wohne ich", "meine Schwester", "Lieblingsessen", "neue Arbeit",
           "Fensterplatz", "der Hund", "Kaffee oder Tee", "Berlin", "Allergien"],
    "es": ["alergia al maní", "dónde vivo", "mi hermana", "comida favorita", "nuevo trabajo",
           "asiento de ventana", "el perro", "café o té", "Berlín", "alergias"],
    "fr": ["allergie aux arachides", "où j'habite", "ma sœur", "plat préféré", "nouveau travail",
           "place côté fenêtre", "le chien", "café ou thé", "Berlin", "allergies"],
    "ru": ["аллергия на арахис", "где я живу", "моя сестра", "любимая еда", "новая работа",
           "место у окна", "собака", "кофе или чай", "Берлин", "аллергии"],
}  # fmt: skip

K1, B = 1.2, 0.75


def bm25_rank(docs: Sequence[list[str]], query: list[str]) -> list[int]:
    """Indexes of ``docs`` matching any term of ``query``, best first (BM25, ties by index)."""
    counts = [Counter(d) for d in docs]
    mean = statistics.fmean(len(d) for d in docs) or 1.0
    df = Counter(t for c in counts for t in c)
    scores = []
    for i, c in enumerate(counts):
        score = 0.0
        for term in set(query):
            tf = c.get(term, 0)
            if tf:
                idf = math.log(1 + (len(docs) - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(docs[i]) / mean))
        if score > 0:
            scores.append((-score, i))
    return [i for _, i in sorted(scores)]


def bigrams_only(text: str) -> list[str]:
    """Overlapping bigrams of each CJK run, a lone character alone (Lucene's CJK bigram filter)."""
    terms: list[str] = []
    for run in _CJK.findall(normalise_text(text)):
        terms.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return terms


def segmenters() -> dict[str, Callable[[str], list[str]]]:
    found: dict[str, Callable[[str], list[str]]] = {
        "bigrams": bigrams_only,
        "bigrams + Han unigrams (shipped)": normalise_terms,
    }
    try:
        import jieba
    except ImportError:
        return found
    jieba.setLogLevel(60)
    stop = set("的了是我你在吗呢吧啊么")

    def jieba_words(text: str) -> list[str]:
        return [w for w in jieba.lcut(text) if w.strip() and w not in stop and w.isalnum()]

    def jieba_search(text: str) -> list[str]:
        words = jieba.lcut_for_search(text)
        return [w for w in words if w.strip() and w not in stop and w.isalnum()]

    found["jieba precise"] = jieba_words
    found["jieba search mode"] = jieba_search
    return found


def cost_of_import(statement: str) -> tuple[float, float]:
    """Seconds and MB of RSS that ``statement`` adds to a fresh interpreter."""
    # Resident memory now (VmRSS), not ru_maxrss: a child inherits its parent's high-water mark.
    code = (
        "import re, time\n"
        "def rss():\n"
        "    status = open('/proc/self/status').read()\n"
        "    return int(re.search(r'VmRSS:\\s+(\\d+)', status).group(1))\n"
        "before = rss()\n"
        "start = time.perf_counter()\n"
        f"{statement}\n"
        "took = time.perf_counter() - start\n"
        "print(took, (rss() - before) / 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    took, mb = out.stdout.split()
    return float(took), float(mb)


def segmentation() -> None:
    print(f"Chinese: {len(FACTS)} facts, {len(QUESTIONS)} questions")
    print("| segmenter | terms per fact | R@1 | R@3 | texts/s | import + first cut | memory |")
    print("|---|---|---|---|---|---|---|")
    imports = {
        "jieba precise": "import jieba; jieba.setLogLevel(60); jieba.lcut('我对花生过敏')",
        "jieba search mode": "import jieba; jieba.setLogLevel(60); jieba.lcut('我对花生过敏')",
    }
    for name, segment in segmenters().items():
        docs = [segment(f) for f in FACTS]
        at1 = at3 = 0
        for question, right in QUESTIONS:
            ranked = bm25_rank(docs, segment(question))
            at1 += bool(set(ranked[:1]) & right)
            at3 += bool(set(ranked[:3]) & right)
        texts = FACTS * 40
        start = time.perf_counter()
        for text in texts:
            segment(text)
        rate = len(texts) / (time.perf_counter() - start)
        took, mb = cost_of_import(imports[name]) if name in imports else (0.0, 0.0)
        print(
            f"| {name} | {statistics.fmean(len(d) for d in docs):.1f} | "
            f"{at1 / len(QUESTIONS):.2f} | {at3 / len(QUESTIONS):.2f} | {rate:,.0f} | "
            f"{took:.2f} s | {mb:.0f} MB |"
        )


def detection() -> None:
    for name, setup in [("py3langid", _py3langid), ("lingua", _lingua)]:
        found = setup()
        if found is None:
            print(f"{name} not installed: not measured")
            continue
        classify, statement = found
        took, mb = cost_of_import(statement)
        right = total = 0
        wrong: list[str] = []
        for language, texts in SHORT.items():
            for text in texts:
                guess = classify(text)
                total += 1
                right += guess == language
                if guess != language:
                    wrong.append(f"{text!r} ({language}) -> {guess}")
        print(
            f"{name} on {total} short texts, 5 languages allowed: {right / total:.2f} right "
            f"(import + first call {took:.2f} s, {mb:.0f} MB)"
        )
        for line in wrong:
            print("  " + line)


def _py3langid() -> tuple[Callable[[str], str], str] | None:
    try:
        import py3langid
    except ImportError:
        return None
    identifier = py3langid.langid.LanguageIdentifier.from_pickled_model(
        py3langid.langid.MODEL_FILE, norm_probs=True
    )
    identifier.set_languages(list(SHORT))
    return (lambda text: str(identifier.classify(text)[0])), (
        "import py3langid; py3langid.classify('hello')"
    )


def _lingua() -> tuple[Callable[[str], str], str] | None:
    try:
        from lingua import Language, LanguageDetectorBuilder
    except ImportError:
        return None
    five = [Language.ENGLISH, Language.GERMAN, Language.SPANISH, Language.FRENCH]
    detector = LanguageDetectorBuilder.from_languages(*five, Language.RUSSIAN).build()

    def classify(text: str) -> str:
        found = detector.detect_language_of(text)
        return "?" if found is None else found.iso_code_639_1.name.lower()

    statement = (
        "from lingua import Language as L, LanguageDetectorBuilder as B; "
        "B.from_languages(L.ENGLISH, L.GERMAN, L.SPANISH, L.FRENCH, L.RUSSIAN).build()"
        ".detect_language_of('hello there')"
    )
    return classify, statement


if __name__ == "__main__":
    segmentation()
    detection()
