"""ttmemory beside langchain-postgres, the Agents SDK session and LangGraph's saver, in one run
on one PostgreSQL server, each against the raw-SQL baseline; writes docs/benchmarks.md and a PNG.

The peers pin other versions of shared packages (pgvector, SQLAlchemy, langchain-core), so they
run in a venv of their own, ``.venv-peers`` (``bench/requirements-peers.txt``), made here when
missing; ttmemory runs in this process. Both measure with ``bench/peers.py``'s ``measure``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import close_old_connections, connection
from django.test.utils import override_settings

from bench import ROOT
from bench.command import BenchCommand

START = "<!-- ttmemory_bench:peers:start -->"
END = "<!-- ttmemory_bench:peers:end -->"
PLOT = ROOT / "docs" / "img" / "peers-cost-curve.png"
VENV = ROOT / ".venv-peers"
REQUIREMENTS = ROOT / "bench" / "requirements-peers.txt"
TARGETS = {  # issue 36's, for ttmemory
    "add 1": 1.5,
    "add 100 in one call": 2.0,
    "newest 1,000 of 2,000": 1.3,
    "16 writers x 10 adds, wall": 2.0,
}


class TTMemoryStore:
    """ttmemory through its services, with its defaults but no background trigger (learning,
    summaries, auto snapshots), as the write-path benchmark measures it."""

    name = "ttmemory"

    def __init__(self) -> None:
        self.namespace = f"bench-peers-{uuid.uuid4().hex[:8]}"

    def open(self, key: str) -> Any:
        from ttmemory import services

        return services.session_open(namespace=self.namespace, key=key)

    def add(self, handle: Any, messages: list[dict[str, Any]]) -> None:
        from ttmemory import services

        if len(messages) == 1:
            services.message_add(session=handle, message=messages[0])
        else:
            services.message_add_many(session=handle, messages=messages)

    def settle(self) -> None:
        """Wait for the background index jobs of the last append (INDEX_IN_BACKGROUND),
        untimed: they would run during the next timed call, ours or the baseline's."""
        from ttmemory import jobs

        jobs.drain(60)

    def newest(self, handle: Any, limit: int) -> list[str]:
        from ttmemory import selectors

        return [m["content"] for m in selectors.message_recent(session=handle, limit=limit)]

    def preload(self, handle: Any, messages: list[dict[str, Any]]) -> None:
        from bench.peers import in_batches

        in_batches(self, handle, messages)

    def writer(self, key: str) -> tuple[Callable[[dict[str, Any]], None], Callable[[], None]]:
        close_old_connections()
        connection.ensure_connection()  # this thread's own
        handle = self.open(key)
        return lambda message: self.add(handle, [message]), connection.close

    def facts_load(self, namespace: str, texts: list[str]) -> None:
        """The rows ``fact_remember`` writes (encrypted, embedded, indexed), in batches, then
        the tables analysed, as autovacuum would after such a load (the baseline's too): the
        statistics of a namespace loaded a moment ago do not know it yet."""
        from bench.recall import _analyze, bulk_load

        bulk_load(f"{self.namespace}-{namespace}", texts)
        _analyze()

    def facts_search(self, namespace: str, question: str, k: int) -> list[str]:
        """``fact_recall`` as shipped: hybrid, the default embedder, neighbour context."""
        from ttmemory import memory

        result = memory.fact_recall(namespace=f"{self.namespace}-{namespace}", query=question, k=k)
        return [fact.text for fact, _ in result.hits]

    def close(self) -> None:
        from bench.recall import delete_namespaces
        from ttmemory import jobs
        from ttmemory.models import MemorySession

        jobs.drain(60)  # the background index jobs still writing this namespace's rows
        MemorySession.objects.filter(namespace=self.namespace).delete()
        delete_namespaces(f"{self.namespace}-")


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Time ttmemory, langchain-postgres, the OpenAI Agents SQLAlchemySession and LangGraph's "
        "PostgresSaver on one PostgreSQL server, each against issue 16's raw-SQL baseline in "
        "its own process: add 1 / add 100 / newest 1,000 / 16 writers, what concurrency loses "
        "or shows out of order, and the cost as a session grows; write docs/benchmarks.md and "
        "docs/img/peers-cost-curve.png."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--runs", type=int, default=100, help="repetitions of add 1")
        parser.add_argument("--rounds", type=int, default=3, help="rounds of 16 writers x 10")
        parser.add_argument(
            "--curve", default="1000,10000,100000", help="session sizes of the cost curve"
        )
        parser.add_argument(
            "--namespace-curve",
            default="1000,10000",
            help="namespace sizes (facts) of search k=10, for the stores that keep facts",
        )
        parser.add_argument("--peers", default="langchain,agents,langgraph")
        self.add_report_arguments(parser, databases=False, current=False, migrate=False)

    def handle(self, *args: Any, **options: Any) -> None:
        from django.core.management import call_command

        from bench import peers
        from bench.raw import RawFacts, RawSessions
        from bench.write_path import core_settings, raw_params

        if connection.vendor != "postgresql":
            raise CommandError("the peers run on PostgreSQL (the embedded server or DATABASE_URL)")
        call_command("migrate", verbosity=0)
        python = self.peers_python()
        sizes = [int(x) for x in options["curve"].split(",") if x.strip()]
        namespace_sizes = [int(x) for x in options["namespace_curve"].split(",") if x.strip()]
        params = raw_params()
        started, load_before = time.monotonic(), os.getloadavg()[0]
        self.stdout.write("== ttmemory (this process)")
        store, raw = TTMemoryStore(), RawSessions(params, table="bench_peers_raw_ttmemory")
        raw_facts = RawFacts(params, table="bench_peers_rawfacts_ttmemory")
        try:
            with override_settings(DEBUG=False, TTMEMORY=core_settings()):
                results = [
                    peers.measure(
                        store,
                        raw,
                        runs=options["runs"],
                        rounds=options["rounds"],
                        sizes=sizes,
                        progress=self.progress,
                        namespace_sizes=namespace_sizes,
                        raw_facts=raw_facts,
                    )
                ]
        finally:
            raw.close()
            raw_facts.close()
            store.close()
        self.stdout.write(f"== the peers ({python})")
        out = ROOT / ".data" / "bench-peers.json"
        out.parent.mkdir(exist_ok=True)
        connection.close()  # the peers' writers want the server to themselves
        subprocess.run(
            [
                python,
                str(ROOT / "bench" / "peers.py"),
                "measure",
                json.dumps(params),
                str(out),
                "--peers",
                options["peers"],
                "--runs",
                str(options["runs"]),
                "--rounds",
                str(options["rounds"]),
                "--curve",
                options["curve"],
                "--namespace-curve",
                options["namespace_curve"],
            ],
            check=True,
            cwd=ROOT,
        )
        results += json.loads(out.read_text())
        out.write_text(json.dumps(results))
        plot = ROOT / ".data" / PLOT.name if options["no_write"] else PLOT  # --no-write: no file
        subprocess.run(
            [python, str(ROOT / "bench" / "peers.py"), "plot", str(out), str(plot)], check=True
        )
        minutes = (time.monotonic() - started) / 60
        loads = (load_before, os.getloadavg()[0])
        command = "python bench/manage.py ttmemory_bench_peers " + " ".join(
            f"--{k} {v}" for k, v in (("runs", options["runs"]), ("rounds", options["rounds"]))
        )
        self.publish(self.render(results, command, minutes, loads), options)

    def peers_python(self) -> str:
        """``.venv-peers``' interpreter, the venv made first when missing (uv when ``./dev`` has
        installed it, else pip), with progress."""
        python = VENV / "bin" / "python"
        digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
        stamp = VENV / f".installed-{digest}"
        if python.exists() and stamp.exists():
            return str(python)
        uv = ROOT / ".venv-tools" / "bin" / "uv"
        self.stdout.write(f"== making {VENV} for the peers ({REQUIREMENTS.name}); once")
        if VENV.exists():
            shutil.rmtree(VENV)
        requirements = ["-r", str(REQUIREMENTS)]
        if uv.exists():
            uv_venv = [str(uv), "venv", "-q", "--python", sys.executable, str(VENV)]
            subprocess.run(uv_venv, check=True)
            env = {**os.environ, "VIRTUAL_ENV": str(VENV)}
            subprocess.run([str(uv), "pip", "install", *requirements], check=True, env=env)
        else:
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
            pip = [str(python), "-m", "pip", "install", "--progress-bar", "on"]
            subprocess.run([*pip, *requirements], check=True)
        stamp.touch()
        return str(python)

    @staticmethod
    def render(
        results: list[dict[str, Any]],
        command: str,
        minutes: float,
        loads: tuple[float, float] = (0.0, 0.0),
    ) -> str:
        def ratio(row: tuple[dict[str, float], dict[str, float]]) -> float:
            return row[0]["median"] / row[1]["median"]

        lines = [
            START,
            "## ttmemory and its peers (issue 36)",
            "",
            f"`{command}` ({minutes:.0f} min, load average {loads[0]:.1f} at the start and "
            f"{loads[1]:.1f} at the end), on one PostgreSQL server (the embedded default).",
            "Each store runs in its own process beside issue 16's raw-SQL baseline",
            "(`bench/raw.py`: advisory lock + `max(seq)+1` insert), the two alternating, so each",
            "figure is the store's median over the baseline's median measured in the same process",
            "(lower is better; 1.00x is raw SQL). The peers run in `.venv-peers`",
            "(`bench/requirements-peers.txt`); LangGraph's saver stores a session as one thread",
            "whose `messages` channel grows by one checkpoint per call, as a graph does.",
            "",
            "| store | "
            + " | ".join(peers_ops())
            + " | lost / duplicated of 160 | reads not a prefix |",
            "|---|" + "---|" * (len(peers_ops()) + 2),
        ]
        for result in results:
            cells = [f"{ratio(result['rows'][op]):.2f}x" for op in peers_ops()]
            c = result["concurrency"]
            cells += [
                f"{c['lost']} / {c['duplicated']}",
                f"{c['reads not a prefix']} of {c['reads']}",
            ]
            lines.append(f"| {result['store']} | " + " | ".join(cells) + " |")
        ours = results[0]
        met = [
            f"{op} {ratio(ours['rows'][op]):.2f}x (target <= {target}x: "
            f"{'met' if ratio(ours['rows'][op]) <= target else '**missed**'})"
            for op, target in TARGETS.items()
        ]
        lines += ["", "ttmemory against issue 36's targets: " + "; ".join(met) + ".", ""]
        lines += [
            "As a session grows (median microseconds; raw SQL in the same process in brackets):",
            "",
            "| store | messages | add 1 | newest 50 |",
            "|---|---|---|---|",
        ]
        for result in results:
            for point in result["curve"]:
                add, read = point["add 1"], point["newest 50"]
                lines.append(
                    f"| {result['store']} | {point['messages']:,} | {add[0]['median']:,.0f} "
                    f"({add[1]['median']:,.0f}) | {read[0]['median']:,.0f} "
                    f"({read[1]['median']:,.0f}) |"
                )
        lines += [
            "",
            "As a namespace grows: search k=10 (median microseconds; in brackets, a plain pgvector",
            "table searched exactly with the question's vector given, in the same process). The",
            "facts recur in names, relations and verbs (`bench/raw.py` `fact_text`), the",
            "questions are worded unlike them. ttmemory: `fact_recall` as shipped (hybrid,",
            "keywords and vectors, its default embedder embedding the question, neighbour",
            "context, hits decrypted); langchain-postgres: `PGVector.similarity_search_by_vector`",
            "(its default, an exact scan); LangGraph: `PostgresStore.search` with its vector",
            "index (its default, HNSW). The peers store `fake_vector`s (no model in their",
            "figures); the Agents SDK keeps no facts.",
            "",
            "| store | facts | search k=10 | raw pgvector | ratio |",
            "|---|---:|---:|---:|---:|",
        ]
        for result in results:
            for point in result.get("namespace_curve", []):
                ours_t, raw_t = point["search k=10"]
                lines.append(
                    f"| {result['store']} | {point['facts']:,} | {ours_t['median']:,.0f} | "
                    f"{raw_t['median']:,.0f} | {ours_t['median'] / raw_t['median']:.2f}x |"
                )
        lines += ["", f"![cost as a session and a namespace grow](img/{PLOT.name})", "", END]
        return "\n".join(lines)


def peers_ops() -> list[str]:
    from bench.peers import OPERATIONS

    return OPERATIONS
