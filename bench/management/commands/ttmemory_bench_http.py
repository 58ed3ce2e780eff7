"""Benchmark recall with a remote embedder: urllib (0.1) against the pooled httpx client."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from bench import http_pool
from bench.command import BenchCommand

START = "<!-- ttmemory_bench:http:start -->"
END = "<!-- ttmemory_bench:http:end -->"


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Time fact_recall with OpenAIEmbedder against the fake OpenAI server on loopback, "
        "through 0.1's urllib client and the pooled httpx client, alternating in the same run. "
        "Prints JSON; --write adds the table to docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--recalls", type=int, default=300, help="per client")
        parser.add_argument("--facts", type=int, default=200)
        self.add_result_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        if self.write_results(options, render):
            return
        self.migrate_if_asked(options)
        result = http_pool.run(
            recalls=options["recalls"],
            facts=options["facts"],
            progress=self.progress,
        )
        self.print_result(result, options)


def name_of(result: dict[str, Any]) -> str:
    return "PostgreSQL" if result["environment"]["database"] == "postgresql" else "SQLite"


def render(results: list[dict[str, Any]]) -> str:
    lines = [
        START,
        "## Recall with a remote embedder: pooled HTTP",
        "",
        "Command: `python bench/manage.py ttmemory_bench_http --json OUT` on each database, then "
        "`--write OUT...`. `fact_recall` (hybrid) over 200 facts with `OpenAIEmbedder` pointed at "
        "the fake OpenAI server of the tests on 127.0.0.1 (HTTP/1.1, keep-alive, TCP_NODELAY, "
        "256-dimension vectors), over plain http and over https (TLS 1.3, a self-signed P-256 "
        'certificate: every hosted vendor is reached over TLS). "embed" is the bare embedding '
        'call of the query alone; "connections" is what the server saw per client. The two '
        "clients alternate in blocks of 25 recalls in one process, so the shared 2-core machine "
        "(other work running) slows both alike. Loopback has no network round trip: over a real "
        "network each new connection also costs one (http) or two (https) round trips more, "
        "which the pool saves too.",
        "",
        "| database | scheme | client | connections | recall p50 ms | recall p95 ms "
        "| embed p50 ms | embed p95 ms |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        name = name_of(result)
        rows = result["rows"]
        for row in rows:
            lines.append(
                f"| {name} | {row['scheme']} | {row['client']} | {row['connections']} "
                f"| {row['recall_p50_ms']:.2f} | {row['recall_p95_ms']:.2f} "
                f"| {row['embed_p50_ms']:.2f} | {row['embed_p95_ms']:.2f} |"
            )
        for base, pooled in zip(rows[::2], rows[1::2], strict=True):
            lines.append(
                f"| {name} | {base['scheme']} | **pooled / urllib** | "
                f"| {pooled['recall_p50_ms'] / base['recall_p50_ms']:.2f} "
                f"| {pooled['recall_p95_ms'] / base['recall_p95_ms']:.2f} "
                f"| {pooled['embed_p50_ms'] / base['embed_p50_ms']:.2f} "
                f"| {pooled['embed_p95_ms'] / base['embed_p95_ms']:.2f} |"
            )
    ratios = [
        (name_of(result), base["scheme"], pooled["recall_p50_ms"] / base["recall_p50_ms"])
        for result in results
        for base, pooled in zip(result["rows"][::2], result["rows"][1::2], strict=True)
    ]
    faster = [f"{n} {scheme} x{r:.2f}" for n, scheme, r in ratios if r < 1.0]
    slower = [f"{n} {scheme} x{r:.2f}" for n, scheme, r in ratios if r >= 1.0]
    lines += [
        "",
        "Reading (from the rows above): recall p50 with the pooled client, over urllib's, was "
        f"lower in {', '.join(faster) or 'no case'} and not lower in "
        f"{', '.join(slower) or 'no case'}. "
        "Over https (how a hosted embedder is reached) the pool saves a TLS handshake per call; "
        "over plain http on loopback a new TCP connection costs little, so the gain is small "
        "there and a busy machine can hide it (an earlier run under a load average of 14 had "
        "the pooled client slower over http). Over a real network each new connection also "
        'costs a round trip, which the pool saves (not measured: loopback only). "connections" '
        "counts the distinct client ports the server saw (ports are reused, so slightly under "
        "the request count for urllib).",
        "",
        END,
    ]
    return "\n".join(lines)
