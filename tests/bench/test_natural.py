"""The natural-conversation bench scores what memory serves: checked on hand-made namespaces.

These tests assert the harness (the set's schema, the matching rules, the counts), not how well
the learner does: the scored namespaces are written with ``fact_remember`` / ``fact_supersede``,
so the expected score is known whatever the learner becomes.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench import natural
from bench.management.commands.ttmemory_bench_natural import END, START, render
from ttmemory import memory
from ttmemory.selectors import fact_list

# Berlin is current, Paris is an old value, Siemens an old employer, Malta a hypothetical.
HAND_MADE: dict[str, Any] = {
    "id": "hand-made",
    "lang": "en",
    "category": "relocation",
    "turns": [
        {"role": "user", "content": "I moved from Paris to Berlin. I work at Zalando now."},
        {"role": "assistant", "content": "Noted."},
    ],
    "current": [
        {"id": "city", "question": "Which city does the user live in?", "answer": ["Berlin"]},
        {"id": "job", "question": "Which company does the user work at?", "answer": ["Zalando"]},
    ],
    "stale": [
        {"id": "old-city", "value": ["Paris"], "current": "city"},
        {"id": "old-job", "value": ["Siemens"], "current": "job"},
    ],
    "never": [{"id": "malta", "terms": ["Malta"], "why": "hypothetical"}],
    "allowed": [["stamps", "grandfather"]],
}


def remember(namespace: str, *texts: str) -> list[Any]:
    return [memory.fact_remember(namespace=namespace, text=text) for text in texts]


def test_the_set_has_its_languages_categories_and_grounded_checks() -> None:
    conversations = natural.load()
    by_language: dict[str, list[dict[str, Any]]] = {}
    for conv in conversations:
        by_language.setdefault(conv["lang"], []).append(conv)
    assert len(conversations) >= 80
    assert len(by_language["en"]) >= 35
    assert all(len(by_language[lang]) >= 15 for lang in ("ru", "de", "zh"))
    for lang in ("en", "ru", "de", "zh"):
        assert {c["category"] for c in by_language[lang]} == set(natural.CATEGORIES), lang
    for conv in conversations:
        said = " ".join(t["content"] for t in conv["turns"] if t["role"] == "user")
        for item in conv["current"]:
            # What must be recalled was said, and the question does not repeat it.
            assert natural.holds(item["answer"], said), (conv["id"], item["id"])
            assert item["question"].rstrip("?\uff1f") not in said, (conv["id"], item["id"])
        for item in conv["stale"]:
            assert natural.holds(item["value"], said), (conv["id"], item["id"])
        for item in conv["never"]:
            assert natural.holds(item["terms"], said), (conv["id"], item["id"])
    stale = sum(len(c["stale"]) for c in conversations)
    never = sum(len(c["never"]) for c in conversations)
    assert stale >= 40 and never >= 25


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"category": "gossip"}, "category 'gossip'"),
        ({"turns": [{"role": "user", "content": "hi"}]}, "1 turns"),
        ({"stale": [{"id": "s", "value": ["Paris"], "current": "nope"}]}, "no current item"),
        ({"stale": [{"id": "s", "value": ["Paris"]}]}, "either 'current' or 'question'"),
        ({"never": [{"id": "n", "terms": [], "why": "x"}]}, "never 'n' terms"),
    ],
)
def test_a_bad_line_is_refused_naming_it(
    tmp_path: Path, change: dict[str, Any], error: str
) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(HAND_MADE) + "\n" + json.dumps({**HAND_MADE, **change}) + "\n")

    with pytest.raises(natural.SetError, match=f"set.jsonl:2: .*{error}"):
        natural.load(path)


def test_terms_match_words_not_parts_of_them() -> None:
    assert natural.term_in("Казан", "Пользователь живёт в Казани")  # a Russian ending
    assert natural.term_in("花生", "用户对花生过敏")  # no spaces in Chinese
    assert natural.term_in("36", "我36了") and not natural.term_in("36", "用户136岁")
    assert not natural.term_in("cat", "The user works in education")
    assert not natural.term_in("June 5", "The anniversary is on June 15")
    assert not natural.term_in("34", "The user is 343 days into the plan")
    assert natural.holds(["Lena|sister", "teacher"], "The user's sister is a Teacher")
    assert not natural.holds(["Lena|sister", "teacher"], "The user is a teacher")


def test_an_old_value_is_stale_unless_said_to_be_past_or_replaced() -> None:
    stale = HAND_MADE["stale"][0]
    assert natural.serves_stale(HAND_MADE, stale, "The user lives in Paris")
    assert not natural.serves_stale(HAND_MADE, stale, "The user moved from Paris to Berlin")
    assert not natural.serves_stale(HAND_MADE, stale, "The user no longer lives in Paris")
    assert not natural.serves_stale(HAND_MADE, stale, "Пользователь раньше жил в Paris")
    # Past words are whole words: "notes" holds no "not", "phone" no French "ne".
    assert natural.serves_stale(HAND_MADE, stale, "The user takes notes in Paris")
    assert natural.serves_stale(HAND_MADE, stale, "The user's phone number is from Paris")
    assert not natural.serves_stale(HAND_MADE, stale, "The user doesn't live in Paris")
    assert natural.classify(HAND_MADE, "The user lives in Paris") == "stale"
    assert natural.classify(HAND_MADE, "The user no longer lives in Paris") == "true"
    strict = {**stale, "past_markers": False, "unless": ["moved away"]}
    assert natural.serves_stale(HAND_MADE, strict, "The user lives in Paris, not Lyon")
    assert not natural.serves_stale(HAND_MADE, strict, "The user moved away from Paris")
    assert natural.classify(HAND_MADE, "The user would retire to Malta") == "forbidden"
    assert natural.classify(HAND_MADE, "The user's grandfather collected stamps") == "true"
    assert natural.classify(HAND_MADE, "The user likes opera") == "invented"


def test_the_score_of_a_hand_made_namespace(db: Any) -> None:
    namespace = "bench-natural-test"
    berlin, paris, _malta, _stamps = remember(
        namespace,
        "The user lives in the city of Berlin",
        "The user lives in the city of Paris",  # the old value, still active: served as current
        "The user would buy a boat in Malta",
        "The user has a tattoo of a lighthouse",
    )
    (siemens,) = remember(namespace, "The user works at the company Siemens")
    memory.fact_supersede(  # the old employer kept in the chain only: fine
        namespace=namespace, fact_id=siemens.pk, text="The user works at the company Zalando"
    )

    result = natural.score(HAND_MADE, namespace=namespace)

    s = result.score
    assert (s.current, s.current_top5, s.current_prompt, s.current_ok) == (2, 2, 2, 2)
    assert s.current_stored == 2
    assert (s.stale, s.stale_ok, s.stale_active, s.stale_in_chain) == (2, 1, 1, 1)
    assert (s.changes, s.changes_followed) == (2, 1)
    assert (s.never, s.never_ok) == (1, 0)
    assert (s.active, s.true, s.stale_facts, s.forbidden, s.invented) == (5, 2, 1, 1, 1)
    rates = s.rates()
    assert rates["stale_ok"] == 0.5 and rates["precision"] == 0.4 and rates["invented"] == 0.2
    assert any("old-city" in f and "Paris" in f for f in result.failures)
    assert not any("old-job" in f for f in result.failures)
    assert {"text": "The user works at the company Siemens", "class": "superseded"} in result.facts
    assert berlin.pk != paris.pk


def test_a_stale_value_no_longer_served_scores_full(db: Any) -> None:
    namespace = "bench-natural-test"
    (paris,) = remember(namespace, "The user lives in the city of Paris")
    memory.fact_supersede(
        namespace=namespace, fact_id=paris.pk, text="The user lives in the city of Berlin"
    )
    remember(namespace, "The user works at the company Zalando")
    conv = {**HAND_MADE, "never": [], "stale": HAND_MADE["stale"][:1]}

    s = natural.score(conv, namespace=namespace).score

    assert s.rates() == {
        "current_stored": 1.0,
        "current_top5": 1.0,
        "current_prompt": 1.0,
        "current": 1.0,
        "stale_ok": 1.0,
        "changes_followed": 1.0,
        "never_ok": None,
        "precision": 1.0,
        "invented": 0.0,
    }
    assert s.stale_in_chain == 1 and s.stale_active == 0


def test_a_conversation_is_fed_in_its_own_namespace_and_erased(db: Any) -> None:
    from django.test.utils import override_settings

    conv = natural.load(ids=["en-reloc-01"])[0]
    namespace = natural.namespace_of(conv)
    remember(namespace, "The user lives in Atlantis")  # left over from a crashed run

    with override_settings(TTMEMORY=natural.offline_settings()):
        natural.feed(conv, namespace=namespace)
        told = memory.session_open(namespace=namespace, key="told")
        assert [m["content"] for m in memory.message_recent(session=told)] == [
            t["content"] for t in conv["turns"]
        ]
        memory.namespace_erase(namespace=namespace)
        result = natural.run_one(conv)

    assert not fact_list(namespace=namespace, include_superseded=True)
    assert not any("Atlantis" in fact["text"] for fact in result.facts)
    s = result.score
    assert (s.current, s.stale, s.never) == (1, 1, 0)
    assert s.active == s.true + s.stale_facts + s.forbidden + s.invented


def test_the_command_scores_a_slice_per_language_and_renders_it(db: Any, tmp_path: Path) -> None:
    out = tmp_path / "natural.json"
    call_command(
        "ttmemory_bench_natural", "--current", "--ids=en-reloc-01,zh-reloc-01,de-never-01",
        "--json", str(out), stderr=io.StringIO(),
    )  # fmt: skip
    run = json.loads(out.read_text())

    assert run["conversations"] == 3
    assert set(run["by_language"]) == {"de", "en", "zh"}
    assert set(run["by_category"]) == {"relocation", "never"}
    assert run["overall"]["current"] == 2 and run["overall"]["never"] == 3
    section = render([run])
    assert section.startswith(START) and section.endswith(END)
    assert "| lang zh | 1 |" in section and "| relocation | 2 |" in section
    assert "Targets met" in section
    saved = tmp_path / "runs.json"
    saved.write_text(json.dumps([run, run]))
    printed = io.StringIO()
    call_command("ttmemory_bench_natural", "--render", str(saved), "--no-write", stdout=printed)
    assert printed.getvalue().count("| lang zh | 1 |") == 2


def test_a_slice_is_not_written_into_the_docs_and_an_unknown_id_is_named() -> None:
    with pytest.raises(CommandError, match="add --no-write"):
        call_command("ttmemory_bench_natural", "--languages=zh")
    with pytest.raises(CommandError, match="no conversation with id nope"):
        call_command("ttmemory_bench_natural", "--ids=nope", "--no-write")


def test_a_namespace_that_learned_nothing_serves_no_stale_value_but_follows_no_change(
    db: Any,
) -> None:
    s = natural.score(HAND_MADE, namespace="bench-natural-empty").score

    rates = s.rates()
    assert rates["current"] == 0.0 and rates["stale_ok"] == 1.0 and rates["never_ok"] == 1.0
    assert rates["changes_followed"] == 0.0
    assert rates["precision"] is None and rates["invented"] is None


def test_the_turns_reference_stores_every_user_message_and_learns_nothing(
    db: Any, tmp_path: Path
) -> None:
    out = tmp_path / "turns.json"
    call_command(
        "ttmemory_bench_natural", "--current", "--ids=en-reloc-02", "--facts-from=turns",
        "--json", str(out), stderr=io.StringIO(),
    )  # fmt: skip
    (result,) = json.loads(out.read_text())["results"]

    told = [t["content"] for t in natural.load(ids=["en-reloc-02"])[0]["turns"]]
    assert sorted(f["text"] for f in result["facts"]) == sorted(told[0::2])
    classes = {f["text"]: f["class"] for f in result["facts"]}
    assert classes["I live in Manchester, for context."] == "stale"
    assert classes["Trying to figure out council tax bands. Not urgnet"] == "invented"
    with pytest.raises(CommandError, match="reference, not written"):
        call_command("ttmemory_bench_natural", "--facts-from=turns")


def test_a_current_fact_never_learned_counts_as_not_stored(db: Any) -> None:
    """``current_stored`` tells a miss of extraction (no active fact holds the answer) from one
    of recall (one does, but it was not served)."""
    namespace = "bench-natural-test"
    remember(namespace, "The user works at the company Zalando")  # Berlin never learned

    s = natural.score({**HAND_MADE, "never": [], "stale": []}, namespace=namespace).score

    assert (s.current, s.current_stored, s.current_ok) == (2, 1, 1)
