"""Benchmark partitioned history: append and window latency from 100k to 5M messages."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import connection

from bench import partitioning
from bench.command import BenchCommand
from ttmemory.models.partitioning import message_partitions, partition_message_table

START = "<!-- ttmemory_bench:partition:start -->"
END = "<!-- ttmemory_bench:partition:end -->"


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Grow the message table by COPY to each --sizes total and time real appends and "
        "newest-window reads at each, on a fresh PostgreSQL database (TTMEMORY_EMBEDDED_DB=<new "
        "name>). --partitions N partitions the table by hash of session first (0: plain). "
        "Prints JSON; --write renders results of both layouts into docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--partitions", type=int, default=0, help="0: a plain table")
        parser.add_argument(
            "--sizes", default="100000,1000000,2500000,5000000", help="messages, comma-separated"
        )
        parser.add_argument("--runs", type=int, default=300, help="appends and reads per size")
        self.add_result_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        if self.write_results(options, render):
            return
        self.migrate_if_asked(options)
        current = message_partitions(connection)
        wanted = options["partitions"]
        if current is None:
            raise CommandError("PostgreSQL with a migrated database needed (try --migrate)")
        if wanted and current != wanted:
            partition_message_table(connection, partitions=wanted)
        elif not wanted and current:
            raise CommandError("the message table is partitioned: use a fresh database")
        sizes = [int(size) for size in options["sizes"].split(",")]
        try:
            result = partitioning.run(
                sizes=sizes,
                runs=options["runs"],
                progress=self.progress,
            )
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        self.print_result(result, options)


def render(results: list[dict[str, Any]]) -> str:
    lines = [
        START,
        "## Partitioned history: latency and size from 100k to 5M messages",
        "",
        "Command: on a fresh database per layout, `TTMEMORY_EMBEDDED_DB=<new name> python "
        "bench/manage.py ttmemory_bench_partition --migrate --partitions N --json OUT` (N = 0: "
        'a plain table; 16: `PARTITIONED_HISTORY = {"by": "hash", "partitions": 16}`), '
        "then `--write OUT...`. The history grows by COPY in sessions of 200 messages; at each "
        "size, real `message_add` calls append to, and `message_recent(limit=20)` reads, "
        "sessions picked at random over the whole history (episodic index off: another "
        "table). Warm cache (the data fits in RAM here); the machine was shared with other "
        "work, so compare medians and treat single p99s with care. The server columns are "
        "free of that noise: medians over 100 sessions of the window SELECT and of one "
        "message INSERT (rolled back) under `EXPLAIN (ANALYZE, BUFFERS)`, execution time and "
        "shared buffers touched (index levels plus heap pages). Size is heap with TOAST plus "
        "indexes, per million messages.",
        "",
        "| layout | messages | append median / p90 ms | window median / p90 ms "
        "| server: window µs / buffers | server: insert µs / buffers "
        "| MiB per 1M messages (heap + indexes) | COPY messages/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        env = result["environment"]
        layout = f"hash x {env['partitions']}" if env["partitions"] else "plain"
        for row in result["rows"]:
            millions = row["messages"] / 1_000_000
            heap = row["table_bytes"] / 2**20 / millions
            index = row["index_bytes"] / 2**20 / millions
            size = f"{heap + index:,.0f} ({heap:,.0f} + {index:,.0f})" if heap else "-"
            loaded = row["load_seconds"]
            rate = f"{(row['messages'] - _previous(result, row)) / loaded:,.0f}" if loaded else "-"
            server = row["server"]
            lines.append(
                f"| {layout} | {row['messages']:,} "
                f"| {row['append']['median_ms']:.2f} / {row['append']['p90_ms']:.2f} "
                f"| {row['window']['median_ms']:.2f} / {row['window']['p90_ms']:.2f} "
                f"| {server['window_ms'] * 1000:.0f} / {server['window_buffers']:.0f} "
                f"| {server['insert_ms'] * 1000:.0f} / {server['insert_buffers']:.0f} "
                f"| {size} | {rate} |"
            )
    lines.append("")
    if any(not row["table_bytes"] for result in results for row in result["rows"]):
        lines += ["`-`: size not recorded by that run.", ""]
    for result in results:
        env = result["environment"]
        first, last = result["rows"][0], result["rows"][-1]
        append = last["append"]["median_ms"] / first["append"]["median_ms"]
        window = last["window"]["median_ms"] / first["window"]["median_ms"]
        layout = f"hash x {env['partitions']}" if env["partitions"] else "plain"
        lines.append(
            f"- {layout}: from {first['messages']:,} to {last['messages']:,} messages the "
            f"append median moved x{append:.2f} and the window median x{window:.2f}"
            f" (PostgreSQL {env['server'] // 10000}.{env['server'] % 100}, {env['runs']} of "
            "each per size)."
        )
    lines.append(END)
    return "\n".join(lines)


def _previous(result: dict[str, Any], row: dict[str, Any]) -> int:
    """Messages there before ``row``'s load (the appends of earlier sizes included)."""
    rows = result["rows"]
    index = rows.index(row)
    return 0 if index == 0 else int(rows[index - 1]["messages"])
