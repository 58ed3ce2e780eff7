"""The documentation site builds with ``mkdocs build --strict`` (a broken link or anchor fails),
and the README stays a short page whose facts live in the docs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert done.returncode == 0, done.stderr
    rest = (tmp_path / "reference" / "rest" / "index.html").read_text()
    # generated from clients/openapi.json
    assert "/sessions/{session_id}/snapshots/{snapshot_id}/rollback/" in rest
    python = (tmp_path / "reference" / "python" / "index.html").read_text()
    assert "session_open" in python and "creating it if needed" in python  # docstrings
    recipes = (tmp_path / "recipes" / "index.html").read_text()
    for recipe in ("chat_loop.py", "openai_agents_session.py", "langgraph_agent.py"):
        first = (ROOT / "examples" / recipe).read_text().splitlines()[0]
        assert first.strip('"') in recipes  # the script itself, included by the page


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[gone](no-such-page.md)\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nstrict: true\n")

    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "s")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode != 0 and "no-such-page.md" in done.stderr


def test_the_readme_fits_on_a_screen_or_two_and_keeps_the_two_commands_first() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    commands = re.findall(r"^\./dev (\w+)", text, re.M)
    assert commands[:2] == ["demo", "test"]


def code_lines(text: str) -> list[str]:
    """The non-blank, non-comment lines of the fenced code blocks of a Markdown text."""
    lines: list[str] = []
    for block in re.findall(r"^```\w*\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            stripped = line.split("  #")[0].rstrip()
            if stripped.strip() and not stripped.lstrip().startswith("#"):
                lines.append(stripped)
    return lines


def test_every_line_of_the_readme_quickstart_and_agent_is_in_a_tested_page() -> None:
    """The README's code repeats what tests run: the getting-started page (run in a fresh
    project) and examples/chat_loop.py (run by tests/examples), never code of its own."""
    text = README.read_text()
    quickstart = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    agent = text.split("## A whole agent", 1)[1].split("\n## ", 1)[0]
    page = set(code_lines((DOCS / "getting-started.md").read_text()))
    recipe = (ROOT / "examples" / "chat_loop.py").read_text()

    assert [ln for ln in code_lines(quickstart) if ln not in page] == []
    # the agent: every line of the recipe's turn, plus the two calls that show it
    missing = [ln for ln in code_lines(agent) if ln.split("  #")[0] not in recipe]
    assert missing == [
        'print(answer(client, user="user-42", text="I\'m allergic to peanuts."))',
        'print(answer(client, user="user-42", text="What am I allergic to?"))',
    ]
    (block,) = re.findall(r"^```python\n(.*?)^```", agent, re.M | re.S)
    assert len(block.splitlines()) <= 30


def extras() -> set[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(pyproject["project"]["optional-dependencies"])


def test_the_readme_install_line_and_the_extras_table_list_every_extra() -> None:
    (line,) = re.findall(
        r'^pip install "path/to/ttmemory-checkout\[([\w,-]+)\]"$', README.read_text(), re.M
    )
    table = re.findall(
        r"^\| `([\w-]+)` \|",
        (DOCS / "installation.md").read_text().split("## Extras")[1].split("\n## ")[0],
        re.M,
    )

    assert sorted(line.split(",")) == sorted(extras())
    assert sorted(table) == sorted(extras())
