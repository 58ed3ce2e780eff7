"""Benchmarks and evaluation sets of ttmemory: run from the repository, never installed."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Where every benchmark writes its section (markers keep the other sections).
BENCHMARKS_MD = ROOT / "docs" / "benchmarks.md"
