"""The write path against issue 16's raw-SQL baseline; writes docs/benchmarks.md and a PNG."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from bench import ROOT
from bench.command import BenchCommand

START = "<!-- ttmemory_bench:write-path:start -->"
END = "<!-- ttmemory_bench:write-path:end -->"
PLOT = ROOT / "docs" / "img" / "write-path-curve.png"
TARGETS = {  # issue 36's
    "add 1": 1.5,
    "add 100 in one call": 2.0,
    "add 1, index job run by a worker": 1.5,
    "add 100 in one call, index job run by a worker": 2.0,
    "newest 1,000 of 2,000": 1.3,
    "16 writers x 10 adds, wall": 2.0,
    "16 writers x 10 adds, wall, index job run by a worker": 2.0,
}
# (label, TTMEMORY_BENCH_DB_OPTIONS, TTMEMORY_BENCH_SYNC_COMMIT)
CONFIGS = [
    ("embedded default options (server_side_binding, prepare_threshold=5)", "embedded", "on"),
    ("plain DATABASES (no OPTIONS)", "plain", "on"),
    ("embedded default options, synchronous_commit off", "embedded", "off"),
    ("plain DATABASES, synchronous_commit off", "plain", "off"),
]


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Time add 1 / add 100 / newest 1,000 / 16 concurrent writers against issue 16's raw-SQL "
        "baseline (advisory lock + max(seq)+1 insert, one psycopg connection) under four "
        "database configurations, plus a cost curve as a session grows; write "
        "docs/benchmarks.md and docs/img/write-path-curve.png."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--runs", type=int, default=200, help="repetitions of add 1")
        parser.add_argument("--rounds", type=int, default=5, help="rounds of 16 writers x 10")
        parser.add_argument(
            "--curve",
            default="1000,10000,100000",
            help="session sizes of the cost curve (first configuration only; '' skips it)",
        )
        parser.add_argument(
            "--configs", default="0,1,2,3", help="indexes into the configurations measured"
        )
        self.add_report_arguments(parser, databases=False, migrate=False)

    def handle(self, *args: Any, **options: Any) -> None:
        curve = [int(x) for x in options["curve"].split(",") if x.strip()]
        if options["current"]:
            from django.core.management import call_command

            from bench import write_path

            call_command("migrate", verbosity=0)
            result = write_path.run(
                runs=options["runs"],
                rounds=options["rounds"],
                curve=curve,
                progress=self.progress,
            )
            result["environment"] = environment()
            Path(options["json"]).write_text(json.dumps(result))
            return
        if os.environ.get("DATABASE_URL", "").startswith("sqlite"):
            raise CommandError("the write-path baseline is PostgreSQL's (advisory locks)")
        results = []
        for n, index in enumerate(int(i) for i in options["configs"].split(",")):
            label, db_options, sync = CONFIGS[index]
            self.stdout.write(f"== {label}")
            result = self._subprocess(db_options, sync, options, curve if n == 0 else [])
            result["label"] = label
            results.append(result)
        if not options["no_write"] and any(r["curve"] for r in results):
            plot(results[0], PLOT)
        self.publish(render(results), options)

    def _subprocess(
        self, db_options: str, sync: str, options: dict[str, Any], curve: list[int]
    ) -> dict[str, Any]:
        env = {"TTMEMORY_BENCH_DB_OPTIONS": db_options, "TTMEMORY_BENCH_SYNC_COMMIT": sync}
        env["TTMEMORY_EMBEDDED_DB"] = os.environ.get("TTMEMORY_EMBEDDED_DB", "bench_write")
        argv = ["--runs", str(options["runs"]), "--rounds", str(options["rounds"])]
        argv += ["--curve", ",".join(str(c) for c in curve)]
        return self.measure_in_subprocess(*argv, env=env)


def environment() -> dict[str, Any]:
    import platform

    from django.db import connection
    from django.utils import timezone

    from ttmemory.conf import app_settings

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]
        cursor.execute("SHOW synchronous_commit")
        sync = cursor.fetchone()[0]
        cursor.execute("SHOW fsync")
        fsync = cursor.fetchone()[0]
    return {
        "database": f"PostgreSQL {version}",
        "synchronous_commit": sync,
        "fsync": fsync,
        "options": {
            k: v
            for k, v in connection.settings_dict.get("OPTIONS", {}).items()
            if k in {"server_side_binding", "prepare_threshold", "options"}
        },
        "python": platform.python_version(),
        "tokenizer": app_settings.TOKENIZER,
        "search_index": app_settings.MESSAGE_SEARCH_INDEX,
        "cpus": os.cpu_count(),
        "when": timezone.now().strftime("%Y-%m-%d %H:%M UTC"),
        # 1-minute load average when the configuration's measurement ended (2 shared CPUs).
        "load": os.getloadavg()[0],
    }


def _cell(d: dict[str, float]) -> str:
    return f"{d['median']:,.0f} ({d['p10']:,.0f}-{d['p90']:,.0f})"


def render(results: list[dict[str, Any]]) -> str:
    lines = [START, "## Write path: ttmemory vs issue 16's raw-SQL baseline", ""]
    env = results[0]["environment"]
    lines.append(
        "Command: `python bench/manage.py ttmemory_bench_write` (`bench/write_path.py`). "
        "Baseline: one psycopg connection; per call `BEGIN`, `pg_advisory_xact_lock(<session "
        "hash>)`, `INSERT ... SELECT coalesce(max(seq),0)+1` per message (executemany for a "
        "batch), JSON content, `COMMIT`. ttmemory: `message_add` / `message_add_many` / "
        "`message_recent` with validation, token counting "
        f"({env['tokenizer']}), AES-256-GCM, counters, events and the episodic index "
        f"(`MESSAGE_SEARCH_INDEX={env['search_index']}`), background triggers off. Both sides "
        "alternate in one process; microseconds, median (p10-p90); 16 x 10 is the wall time "
        "of 16 threads (own connections) appending 10 messages each to one session. "
        f"{env['database']}, fsync {env['fsync']}, Python {env['python']}, {env['cpus']} CPUs "
        f"shared with other jobs, measured {env['when']}. Load average (1 min) at the end of "
        "each configuration: "
        + ", ".join(f"{r['environment'].get('load', float('nan')):.1f}" for r in results)
        + "."
    )
    lines.append("")
    lines.append("| configuration | operation | ttmemory (us) | raw SQL (us) | ratio | target |")
    lines.append("|---|---|---:|---:|---:|---|")
    for result in results:
        for operation, (ours, raw) in result["rows"].items():
            ratio = ours["median"] / raw["median"]
            limit = TARGETS.get(operation)
            target = f"<= {limit}x {'met' if ratio <= limit else 'MISSED'}" if limit else ""
            lines.append(
                f"| {result['label']} | {operation} | {_cell(ours)} | {_cell(raw)} | "
                f"{ratio:.2f}x | {target} |"
            )
    lines.append("")
    checks = {k: v for r in results for k, v in r["checks"].items()}
    for name, ok in checks.items():
        lines.append(f"- {name}: {'yes' if ok else 'NO'}")
    curve = next((r for r in results if r["curve"]), None)
    if curve:
        lines.append("")
        lines.append(f"### Cost as one session grows ({curve['label']})")
        lines.append("")
        lines.append(
            "Append one message and read the newest 100 of a session of N messages (grown "
            "with `message_add_many` in batches of 1,000 and COPY on the raw side); the last "
            "column is one `message_search` over the namespace right after growing. Plot: "
            "`docs/img/write-path-curve.png`."
        )
        lines.append("")
        lines.append(
            "| messages | add 1 ttmemory | add 1 raw | ratio | newest 100 ttmemory | "
            "newest 100 raw | ratio | message_search (us) |"
        )
        lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for p in curve["curve"]:
            (ao, ar), (ro, rr) = p["add 1"], p["newest 100"]
            search = p["first message_search after growing (us)"]
            lines.append(
                f"| {p['messages']:,} | {_cell(ao)} | {_cell(ar)} | "
                f"{ao['median'] / ar['median']:.2f}x | {_cell(ro)} | {_cell(rr)} | "
                f"{ro['median'] / rr['median']:.2f}x | {search:,.0f} |"
            )
    lines.append("")
    lines.append(END)
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = result["curve"]
    sizes = [p["messages"] for p in points]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for key, name in (("add 1", "append one"), ("newest 100", "newest 100")):
        ax.plot(sizes, [p[key][0]["median"] for p in points], "o-", label=f"ttmemory {name}")
        ax.plot(sizes, [p[key][1]["median"] for p in points], "s--", label=f"raw SQL {name}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("messages in the session")
    ax.set_ylabel("median microseconds")
    ax.set_title("Write path cost as a session grows (PostgreSQL)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
