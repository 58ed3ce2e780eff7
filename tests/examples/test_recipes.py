"""The recipes of examples/ run as a user runs them: each twice in a row, each in new processes.

Every recipe talks to the strict fake OpenAI-compatible server of ``tests/fakes`` (scripted
answers; it records what it was sent) and keeps its memory in a SQLite file that outlives its
process, so a second process must find what the first one stored: the test reads that from
the request the second process sent to the model.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import FakeOpenAI
from ttmemory.crypto import generate_key

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def fake() -> FakeOpenAI:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def env(fake: FakeOpenAI, tmp_path: Path) -> dict[str, str]:
    """A user's shell: the model server, ttmemory's keys, a database file; not the suite's."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "TTMEMORY_", "OPENAI_", "DATABASE_URL"))
    }
    environ.update(
        OPENAI_BASE_URL=fake.base_url,
        OPENAI_API_KEY=fake.api_key,
        MEMORY_DB=str(tmp_path / "memory.sqlite3"),
        TTMEMORY_ENCRYPTION_KEYS=generate_key(),
        TTMEMORY_BLIND_INDEX_KEY=base64.urlsafe_b64encode(os.urandom(32)).decode(),
        PYTHONPATH=str(ROOT),  # this checkout's ttmemory
    )
    return environ


def run(recipe: str, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / recipe), *args],
        env=env,
        cwd=env["MEMORY_DB"].rsplit("/", 1)[0],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == "", done.stderr  # no warning, no log line of anyone's
    return done.stdout


def sent(fake: FakeOpenAI) -> list[dict[str, object]]:
    """The messages of the last chat completion the fake received."""
    return fake.requests_to("/v1/chat/completions")[-1].json["messages"]


@pytest.mark.parametrize(
    "recipe", ["chat_loop.py", "openai_agents_session.py", "langgraph_agent.py"]
)
def test_each_recipe_is_under_60_lines(recipe: str) -> None:
    assert len((EXAMPLES / recipe).read_text().splitlines()) < 60


def test_the_chat_loop_remembers_across_processes_twice_in_a_row(
    fake: FakeOpenAI, env: dict[str, str]
) -> None:
    for _ in range(2):
        fake.chat_reply("Noted, no peanuts.")
        told = run("chat_loop.py", "I'm allergic to peanuts.", env=env)
        fake.chat_reply("You are allergic to peanuts.")
        asked = run("chat_loop.py", "What am I allergic to?", env=env)

        assert told.splitlines()[0] == "Noted, no peanuts."
        assert asked.splitlines()[0] == "You are allergic to peanuts."
        # The second process learned nothing new and found the fact: in its system prompt.
        assert asked.splitlines()[1] == "facts: ['The user is allergic to peanuts']"
        system = sent(fake)[0]
        assert system["role"] == "system" and "allergic to peanuts" in str(system["content"])


def test_the_agents_sdk_session_remembers_across_processes_twice_in_a_row(
    fake: FakeOpenAI, env: dict[str, str]
) -> None:
    for run_number in (1, 2):
        fake.chat_reply("Hello Ada.")
        told = run("openai_agents_session.py", "My name is Ada.", env=env)
        fake.chat_reply("Your name is Ada.")
        asked = run("openai_agents_session.py", "What is my name?", env=env)

        assert told.splitlines()[0] == "Hello Ada."
        assert asked.splitlines() == ["Your name is Ada.", f"turns stored: {4 * run_number}"]
        # The second process sent the model the first one's turn, read back from the database.
        contents = [m.get("content") for m in sent(fake)]
        assert contents[-3:] == ["My name is Ada.", "Hello Ada.", "What is my name?"]


def test_the_langgraph_agent_remembers_across_processes_twice_in_a_row(
    fake: FakeOpenAI, env: dict[str, str]
) -> None:
    for run_number in (1, 2):
        fake.chat_reply("Noted.")
        told = run("langgraph_agent.py", "Remember that I drink green tea.", env=env)
        fake.chat_reply("Green tea.")
        asked = run("langgraph_agent.py", "Which tea do I drink?", env=env)

        assert told.splitlines() == ["Noted.", f"messages in the thread: {4 * run_number - 2}"]
        assert asked.splitlines() == ["Green tea.", f"messages in the thread: {4 * run_number}"]
        # The second process recalled the memory (store) and sent the thread (checkpointer).
        messages = sent(fake)
        assert messages[0] == {"role": "system", "content": "Known: that I drink green tea."}
        assert [m["content"] for m in messages[-3:]] == [
            "Remember that I drink green tea.",
            "Noted.",
            "Which tea do I drink?",
        ]
