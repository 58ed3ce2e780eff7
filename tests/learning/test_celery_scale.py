"""Celery at scale: a queue per job family, two real workers, one killed mid-task, a rate limit.

Real parts: a Redis broker on loopback, ``celery worker`` processes consuming only their
queues (``TTMEMORY["QUEUES"]``), an OpenAI-compatible fake that holds each LLM call long
enough to kill the worker inside it. Nothing may be lost (every session learned and
summarised) and nothing done twice (one fact per namespace, one successful LLM call per job
in the ledger), while ``queue_lag()`` shows the backlog per queue.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import signal
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from django.core.management import call_command

from tests.backends.redis_servers import RedisServer
from tests.conftest import user
from tests.learning.test_celery_worker import (  # noqa: F401  (fixtures)
    VISIBILITY,
    Worker,
    broker,
    eventually,
    producer,
)
from ttmemory import jobs, memory
from ttmemory.longterm import extraction
from ttmemory.models import Fact, LedgerEntry, LedgerStatus, MemorySession

QUEUES = {
    "learn": "ttm-learn",
    "summarise": "ttm-summarise",
    "embed": "ttm-embed",
    "delivery": "ttm-delivery",
    "maintenance": "ttm-maintenance",
}
SESSIONS = 10  # namespaces with one session each: one learn and one summarise job apiece
BURST = 3  # sessions of one more namespace, whose jobs the rate limit must space out
HOLD = 0.4  # seconds the fake LLM holds every call
RATE = "1/s"


class HeldLLM:
    """Chat completions validated by the fake, answered from the conversation after ``HOLD``
    seconds: a fact naming the user's lucky number, or a summary mentioning it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.calls: Counter[tuple[str, str]] = Counter()  # (kind, number)
        self.starts: defaultdict[str, list[float]] = defaultdict(list)  # namespace -> times

    def __call__(self, fake: Any, request: Any, payload: Any) -> dict[str, Any]:
        from tests.fakes.openai_server import chat_handler

        chat_handler(fake, request, payload)  # OpenAI's validation (its answer is unused)
        kind = (
            "extract"
            if payload["messages"][0]["content"] == extraction.EXTRACTION_SYSTEM_PROMPT
            else "summarise"
        )
        found = re.search(r"lucky number is (\d+)", json.dumps(payload["messages"][1:]))
        number = found.group(1) if found else "?"
        with self.lock:
            self.in_flight[kind] += 1
            self.calls[(kind, number)] += 1
            self.starts[number].append(time.monotonic())
        time.sleep(HOLD)
        with self.lock:
            self.in_flight[kind] -= 1
            self.done[kind] += 1
        if kind == "extract":
            facts = [{"action": "ADD", "text": f"The user's lucky number is {number}"}]
            content = json.dumps({"facts": [{**fact, "kind": "fact"} for fact in facts]})
        else:
            content = f"The user told us their lucky number, {number}."
        return {
            "id": f"chatcmpl-held{secrets.token_hex(6)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": payload["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        }


def conversation(number: int) -> list[dict[str, Any]]:
    filler = "we talked about the weather and trains and the sea " * 2
    return [user(f"My lucky number is {number}."), user(filler), user(filler), user("ok")]


def test_two_workers_on_their_queues_survive_a_kill_and_keep_the_rate_limit(
    transactional_db: Any,
    broker: RedisServer,  # noqa: F811
    producer: Any,  # noqa: F811
    settings: Any,
    tmp_path: Path,
    capsys: Any,
) -> None:
    from tests.fakes.openai_server import FakeOpenAI

    held = HeldLLM()
    fake = FakeOpenAI().start()
    fake.route("/v1/chat/completions", held)
    overrides = {
        "QUEUES": QUEUES,
        "LLM_RATE_LIMIT": RATE,
        "LEARN_EVERY": 4,
        "SUMMARISE_AT_TOKENS": 40,
        "SUMMARY_KEEP_TOKENS": 10,
        "LLM": {
            "BACKEND": "ttmemory.backends.llm.OpenAIChatLLM",
            "OPTIONS": {
                "model": "gpt-4o-mini",
                "base_url": fake.base_url,
                "api_key": fake.api_key,
                "timeout": 90,
            },
        },
    }
    settings.TTMEMORY = {**settings.TTMEMORY, **overrides}
    workers: list[Worker] = []
    try:
        sessions = [
            memory.session_open(namespace=f"soak-{n}", key="chat") for n in range(SESSIONS)
        ] + [memory.session_open(namespace="soak-burst", key=f"chat-{n}") for n in range(BURST)]
        for n, session in enumerate(sessions):
            number = n if n < SESSIONS else 100  # the burst namespace: one user, one number
            memory.message_add_many(session=session, messages=conversation(number))

        # Queued, nothing consuming: the backlog is visible per queue, with its age.
        time.sleep(0.3)
        lag = {entry.queue: entry for entry in jobs.queue_lag()}
        assert lag["ttm-learn"].waiting == len(sessions)
        assert lag["ttm-summarise"].waiting == len(sessions)
        assert lag["ttm-embed"].waiting == 0 and lag["ttm-embed"].families == ("embed",)
        assert lag["ttm-learn"].oldest_seconds is not None
        assert lag["ttm-learn"].oldest_seconds >= 0.3
        call_command("ttmemory_jobs", "--lag")
        assert f"ttm-learn (learn): {len(sessions)} waiting" in capsys.readouterr().out

        other = ["ttm-summarise", "ttm-embed", "ttm-delivery", "ttm-maintenance"]
        workers.append(Worker(broker, overrides, tmp_path / "summarise.log", queues=other))
        learner = Worker(broker, overrides, tmp_path / "learn-1.log", queues=["ttm-learn"])
        workers.append(learner)

        # Kill -9 the learner inside an LLM call, after it finished a few.
        eventually(
            lambda: held.done["extract"] >= 3 and held.in_flight["extract"] == 1,
            "an extraction in flight",
        )
        learner.stop(signal.SIGKILL)
        time.sleep(VISIBILITY + 1)  # the broker hands the unacknowledged message on
        workers.append(Worker(broker, overrides, tmp_path / "learn-2.log", queues=["ttm-learn"]))

        def finished() -> bool:
            rows = MemorySession.objects.filter(pk__in=[s.pk for s in sessions])
            return all(s.learned_upto_seq == 4 and s.summary_upto_seq > 0 for s in rows)

        eventually(finished, "every session learned and summarised")
    finally:
        for worker in workers:
            worker.stop()
        fake.stop()

    # Nothing lost, nothing done twice: one fact per user, one successful call per job.
    for n in range(SESSIONS):
        facts = list(Fact.objects.filter(namespace=f"soak-{n}").values_list("text", flat=True))
        assert facts == [f"The user's lucky number is {n}"]
    assert list(Fact.objects.filter(namespace="soak-burst").values_list("text", flat=True)) == [
        "The user's lucky number is 100"
    ]
    ok = Counter(
        LedgerEntry.objects.filter(status=LedgerStatus.OK).values_list("namespace", "purpose")
    )
    for n in range(SESSIONS):
        assert ok[(f"soak-{n}", "extract")] == 1 and ok[(f"soak-{n}", "summarise")] == 1
    assert ok[("soak-burst", "extract")] == BURST and ok[("soak-burst", "summarise")] == BURST
    # The kill hit a call (made again once, by the second learner); no other call repeated.
    extract_calls = sum(n for (kind, _), n in held.calls.items() if kind == "extract")
    summarise_calls = sum(n for (kind, _), n in held.calls.items() if kind == "summarise")
    assert (extract_calls, summarise_calls) == (len(sessions) + 1, len(sessions))

    # Each worker ran only its queue's jobs.
    logs = {w.log.name: w.log.read_text() for w in workers}
    assert "ttmemory.learn[" in logs["learn-2.log"]
    assert "ttmemory.summarise[" not in logs["learn-1.log"] + logs["learn-2.log"]
    assert "ttmemory.summarise[" in logs["summarise.log"]
    assert "ttmemory.learn[" not in logs["summarise.log"]

    # The rate limit spaced the burst namespace's calls (1 per second) and retried the rest.
    starts = sorted(held.starts["100"])
    assert len(starts) >= 2 * BURST
    gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
    assert min(gaps) >= 0.8, gaps
    assert "Retry in" in "".join(logs.values())
