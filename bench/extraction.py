"""Precision and recall of fact extraction on the labelled set ``bench/extraction_set.jsonl``.

Each item is one user utterance, optionally a profile name and facts stored before it
(``history``); its ``expected`` facts are the namespace's current facts after learning, as a
person would write them down (``optional``: correctly attributed facts about someone else,
right whether or not they are stored). An item is scored on its current facts after ``facts_learn``,
leaving out the history facts that are expected and still there (untouched history counts for
neither side; a history fact wrongly kept or wrongly superseded counts against). Facts match
by normalised text (case, spaces and final punctuation ignored): a fact is right or wrong.

Two paths: the offline rules, and the LLM path through the strict fake OpenAI server of the
tests (``tests/fakes``), which answers each item's ``llm`` field (the raw answer of a simulated
LLM: other subjects, trailing "now", mangled conjunctions, questions, hypotheticals). The LLM
figures measure the post-processing and the quality gate on those answers, not a model.

The set is split: ``dev`` (tune rules and ``DEDUPE_SIMILARITY`` on it) and ``test`` (held out:
report it, never tune on it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.test import override_settings

from ttmemory import memory
from ttmemory.conf import app_settings
from ttmemory.longterm import statements
from ttmemory.models import Fact
from ttmemory.services import learning

SET_PATH = Path(__file__).with_name("extraction_set.jsonl")
SPLITS = ("dev", "test")


def load(path: Path = SET_PATH, *, split: str | None = None) -> list[dict[str, Any]]:
    """The items of the set (the first line is its header), of one split or all."""
    lines = path.read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines[1:] if line.strip()]
    return [item for item in items if split in (None, "all", item["split"])]


def normal(text: str) -> str:
    """How facts are compared: case-folded, spaces collapsed, final punctuation dropped."""
    return " ".join(text.casefold().replace("\u2019", "'").split()).strip(" .!")


@dataclass
class Tally:
    """True positives, false positives, false negatives; precision and recall."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    items: int = 0
    exact: int = 0  # items whose facts are exactly the expected ones

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


@dataclass
class Report:
    """A run: totals, per category, the quality gate's rejections, and each item's errors."""

    total: Tally = field(default_factory=Tally)
    categories: dict[str, Tally] = field(default_factory=dict)
    rejected: int = 0
    errors: list[tuple[str, list[str], list[str]]] = field(default_factory=list)


def learn_item(item: dict[str, Any], *, namespace: str) -> tuple[list[str], int]:
    """Store the item's profile and history in ``namespace``, learn its utterance; the current
    facts after it and how many candidates the quality gate rejected."""
    name = (item.get("profile") or {}).get("name")
    if name:
        memory.profile_update(namespace=namespace, kind="user", data={"name": name})
    subject = name or statements.DEFAULT_SUBJECT
    for text in item.get("history", []):
        slot = statements.infer_slot(text, subject=subject)
        memory.fact_remember(
            namespace=namespace, text=text, metadata={"slot": slot} if slot else None
        )
    changes = learning.facts_learn(
        namespace=namespace, messages=[{"role": "user", "content": item["utterance"]}]
    )
    current = Fact.objects.current().filter(namespace=namespace).order_by("pk")
    return [fact.text for fact in current], changes.rejected


def score_item(item: dict[str, Any], found: list[str], tally: Tally) -> tuple[list[str], list[str]]:
    """Add one item to ``tally``; the wrong facts and the missed ones."""
    expected = {normal(text) for text in item["expected"]}
    kept = {normal(text) for text in item.get("history", [])} & expected
    optional = {normal(text) for text in item.get("optional", [])}
    got = {normal(text) for text in found} - kept - optional
    want = expected - kept
    tally.tp += len(got & want)
    tally.fp += len(got - want)
    tally.fn += len(want - got)
    tally.items += 1
    tally.exact += got == want
    return sorted(got - want), sorted(want - got)


def run(
    items: list[dict[str, Any]],
    *,
    before_item: Callable[[dict[str, Any]], None] | None = None,
    prefix: str = "bench-extract",
) -> Report:
    """Learn every item in a namespace of its own and score it; every write is rolled back."""
    report = Report()
    with transaction.atomic():
        for item in items:
            if before_item is not None:
                before_item(item)
            found, rejected = learn_item(item, namespace=f"{prefix}-{item['id']}")
            report.rejected += rejected
            category = report.categories.setdefault(item["category"], Tally())
            wrong, missed = score_item(item, found, report.total)
            score_item(item, found, category)
            if wrong or missed:
                report.errors.append((item["id"], wrong, missed))
        transaction.set_rollback(True)
    return report


@contextmanager
def fake_llm(fake: Any) -> Iterator[Callable[[dict[str, Any]], None]]:
    """Settings pointing ``TTMEMORY["LLM"]`` at ``fake`` (a started ``FakeOpenAI``), and the
    hook that queues each item's ``llm`` answer before it is learned."""
    os.environ["TTM_BENCH_OPENAI_KEY"] = fake.api_key
    llm = {
        "BACKEND": "ttmemory.backends.llm.OpenAIChatLLM",
        "OPTIONS": {
            "base_url": fake.base_url,
            "api_key_env": "TTM_BENCH_OPENAI_KEY",
            "model": "gpt-4o-mini",
            "retry_backoff": 0.01,
        },
    }
    settings = {**app_settings.user_settings, "LLM": llm}

    def queue(item: dict[str, Any]) -> None:
        fake.chat_reply(json.dumps({"facts": item["llm"]}))

    with override_settings(TTMEMORY=settings):
        yield queue


def format_report(title: str, report: Report) -> str:
    """A Markdown table: per category and in total, items, precision, recall, exact items."""
    lines = [
        f"**{title}**: precision {report.total.precision:.3f}, recall {report.total.recall:.3f}"
        f" ({report.total.items} utterances, {report.total.exact} exactly right, "
        f"{report.rejected} candidates rejected by the quality gate)",
        "",
        "| category | utterances | precision | recall | exactly right |",
        "|---|---|---|---|---|",
    ]
    for name, tally in sorted(report.categories.items()):
        lines.append(
            f"| {name} | {tally.items} | {tally.precision:.3f} | {tally.recall:.3f} "
            f"| {tally.exact} |"
        )
    return "\n".join(lines)
