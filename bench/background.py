"""Background-work benchmark: what scheduling adds to message_add, and learn tasks per second
through one real Celery worker (Redis broker on loopback) beside the same jobs run inline.

    .venv/bin/python bench/background.py [--sessions 100] [--runs 200] [--llm] [--no-write]

``--llm`` makes extraction call an OpenAI-compatible fake server on loopback (the strict fake
of the test suite) instead of the offline rules. Writes a section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("TTMEMORY_EMBEDDED_DB", "ttmemory_bench")

START = "<!-- ttmemory_bench:tasks:start -->"
END = "<!-- ttmemory_bench:tasks:end -->"
STATEMENTS = [
    "Hi, my name is Ada.",
    "I'm allergic to peanuts.",
    "I prefer window seats.",
    "Remember that my passport expires in May.",
]
EXTRACTION = json.dumps(
    {"facts": [{"action": "ADD", "text": "The user is allergic to peanuts", "kind": "fact"}]}
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=100, help="learn tasks to run each way")
    parser.add_argument("--runs", type=int, default=200, help="message_add pairs to time")
    parser.add_argument("--llm", action="store_true", help="extract through the fake LLM server")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import override_settings

    call_command("migrate", verbosity=0)
    from tests.backends.redis_servers import RedisServer

    tmp = Path(tempfile.mkdtemp(prefix="ttm-bench-"))
    broker = RedisServer(tmp / "redis").start()
    fake = None
    overrides: dict[str, Any] = {}
    if args.llm:
        from tests.fakes.openai_server import FakeOpenAI

        fake = FakeOpenAI().start()
        for _ in range(args.sessions * 2 + 10):
            fake.chat_reply(EXTRACTION)
        overrides["LLM"] = {
            "BACKEND": "ttmemory.backends.llm.OpenAIChatLLM",
            "OPTIONS": {
                "model": sorted(fake.chat_models)[0],
                "base_url": fake.base_url,
                "api_key": fake.api_key,
            },
        }
    try:
        with override_settings(DEBUG=False, TTMEMORY={**settings.TTMEMORY, **overrides}):
            overhead = measure_scheduling(broker.url, args.runs)
            say(f"scheduling: {overhead}")
            inline = measure_inline(args.sessions)
            say(f"inline: {inline:.1f} tasks/s")
            worker = measure_worker(
                broker, connection.settings_dict["NAME"], overrides, args.sessions, tmp
            )
            say(f"worker: {worker:.1f} tasks/s")
    finally:
        broker.stop()
        if fake is not None:
            fake.stop()
    markdown = render(overhead, inline, worker, args)
    print(markdown)
    if not args.no_write:
        from bench.command import write_section

        write_section(ROOT / "docs" / "benchmarks.md", markdown, start=START, end=END)


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def producer(broker_url: str) -> Any:
    from demo_project.celery import app

    app.conf.update(broker_url=broker_url, task_always_eager=False)
    app._pool = None
    app.amqp._producer_pool = None  # pools made before keep the old broker
    return app


def measure_scheduling(broker_url: str, runs: int) -> dict[str, float]:
    """What queueing a learn task costs, against what message_add costs, in the same run.

    Two rows: one enqueue (``learn_task.delay`` to the Redis broker, what every scheduling
    commit hook does) beside one message_add; and message_add with ``LEARN_EVERY = 10`` beside
    message_add that never schedules, the amortised cost a conversation pays.
    """
    from bench.session_memory import paired, sample_message
    from ttmemory import memory
    from ttmemory.conf import app_settings
    from ttmemory.tasks import learn_task

    producer(broker_url)
    plain = memory.session_open(namespace="bench-sched", key=f"plain-{time.time()}")
    queued = memory.session_open(namespace="bench-sched", key=f"queued-{time.time()}")
    message = sample_message(1)
    merged = app_settings._merged()

    def add_with_learning() -> None:
        merged["LEARN_EVERY"] = 10
        try:
            memory.message_add(session=queued, message=message)
        finally:
            merged["LEARN_EVERY"] = 0

    def add_plain() -> None:
        memory.message_add(session=plain, message=message)

    for _ in range(10):
        add_with_learning()
        add_plain()
    enqueue = paired(
        "enqueue", lambda: learn_task.delay(0, 0), add_plain, runs
    )  # session 0 does not exist: the worker-less broker just holds it

    def ten_with_learning() -> None:  # one block of 10 appends schedules exactly one task
        for _ in range(10):
            add_with_learning()

    def ten_plain() -> None:
        for _ in range(10):
            add_plain()

    amortised = paired("10 adds, LEARN_EVERY=10", ten_with_learning, ten_plain, max(5, runs // 10))
    memory.namespace_erase(namespace="bench-sched")
    return {
        "enqueue_us": enqueue.ours_us,
        "add_us": enqueue.raw_us,
        "with_us": amortised.ours_us / 10,
        "without_us": amortised.raw_us / 10,
        "runs": runs,
    }


def make_sessions(prefix: str, count: int) -> list[Any]:
    from ttmemory import memory

    sessions = []
    for index in range(count):
        session = memory.session_open(namespace=f"{prefix}-{index}", key="chat")
        memory.message_add_many(
            session=session, messages=[{"role": "user", "content": s} for s in STATEMENTS]
        )
        sessions.append(session)
    return sessions


def measure_inline(count: int) -> float:
    from ttmemory import jobs, memory

    sessions = make_sessions(f"bench-inline-{int(time.time())}", count)
    started = time.perf_counter()
    for session in sessions:
        jobs.run("learn", session.pk, session.last_seq)
    rate = count / (time.perf_counter() - started)
    for session in sessions:
        memory.namespace_erase(namespace=session.namespace)
    return rate


def measure_worker(
    broker: Any, db_name: str, overrides: dict[str, Any], count: int, tmp: Path
) -> float:
    import subprocess

    from ttmemory import memory
    from ttmemory.models import MemorySession
    from ttmemory.tasks import learn_task

    sessions = make_sessions(f"bench-worker-{int(time.time())}", count)
    producer(broker.url)
    log = tmp / "worker.log"
    env = {
        **os.environ,
        "TTM_DB_NAME": db_name,
        "TTM_BROKER": broker.url,
        "TTM_OVERRIDES": json.dumps(overrides),
    }
    with log.open("w") as handle:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tests.celery_worker", "worker", "--pool=solo",
             "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "--loglevel=INFO"],
            cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            _wait(lambda: "ready" in log.read_text() or worker.poll() is not None, 60)
            time.sleep(1.0)  # let the worker finish connecting
            ids = [s.pk for s in sessions]
            started = time.perf_counter()
            for session in sessions:
                learn_task.delay(session.pk, session.last_seq)
            _wait(
                lambda: (
                    MemorySession.objects.filter(pk__in=ids, learned_upto_seq__gt=0).count()
                    == count
                ),
                600,
            )
            rate = count / (time.perf_counter() - started)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    for session in sessions:
        memory.namespace_erase(namespace=session.namespace)
    return rate


def _wait(check: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("benchmark timed out waiting for the worker")
        time.sleep(0.05)


def render(overhead: dict[str, float], inline: float, worker: float, args: Any) -> str:
    import platform

    share = (overhead["with_us"] - overhead["without_us"]) / overhead["without_us"] * 100
    enqueue_share = overhead["enqueue_us"] / overhead["add_us"] * 100
    mode = "the strict fake OpenAI server on loopback" if args.llm else "the offline rule extractor"
    lines = [
        START,
        "## Background work: scheduling cost and learn tasks per worker",
        "",
        f"Command: `.venv/bin/python bench/background.py{' --llm' if args.llm else ''}` "
        f"(Python {platform.python_version()}, embedded PostgreSQL, Redis broker on loopback, "
        f"extraction by {mode}; measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).",
        "",
        "| measure | value | baseline (same run) | ratio | target |",
        "|---|---:|---:|---:|---|",
        f"| one enqueue of a learn task (median us) | {overhead['enqueue_us']:,.0f} | "
        f"{overhead['add_us']:,.0f} for one message_add | {enqueue_share:.0f}% of it | |",
        f"| message_add with LEARN_EVERY=10 (per message, median of 10-message blocks, us) | "
        f"{overhead['with_us']:,.0f} | "
        f"{overhead['without_us']:,.0f} never scheduling | +{share:.1f}% | <= +10% "
        f"{'met' if share <= 10 else 'MISSED'} |",
        f"| learn tasks per second, one worker (solo pool) | {worker:,.1f} | {inline:,.1f} inline "
        f"in one process | {worker / inline:.2f}x | |",
        "",
        f"{args.sessions} sessions of {len(STATEMENTS)} messages each way; {overhead['runs']:.0f} "
        "message_add pairs. The worker rate includes broker round trips and its own database "
        "connection; the inline rate is the same job called directly.",
        END,
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
