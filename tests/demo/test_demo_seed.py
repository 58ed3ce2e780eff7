"""The demo's seed shows the product: the facts a person would write down, a rollback story, a
superseded fact, an episodic search, a legal hold, and where to look."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from demo_project.management.commands.demo_seed import Command as DemoSeed
from ttmemory import memory
from ttmemory.exceptions import LegalHoldError
from ttmemory.models import Fact, MemorySession

WRITTEN_DOWN = [
    "Ada is allergic to peanuts",
    "Ada lives in Porto",
    "Ada prefers window seats",
    "The user's name is Ada",
]


def test_the_seeded_conversation_yields_exactly_the_facts_a_person_writes_down(
    db: Any, client: Any, settings: Any, tmp_path: Path
) -> None:
    settings.BASE_DIR = tmp_path  # the demo password file goes there

    first, again = io.StringIO(), io.StringIO()
    call_command(DemoSeed(), stdout=first)
    call_command(DemoSeed(), stdout=again)  # seeding again changes nothing

    facts = Fact.objects.current()
    assert sorted(facts.values_list("text", flat=True)) == WRITTEN_DOWN
    # Lisbon was learned, then superseded by the news of the move; nothing else piled up.
    (old,) = Fact.objects.filter(superseded_by__isnull=False)
    assert old.text == "Ada lives in Lisbon" and old.superseded_by.text == "Ada lives in Porto"
    assert Fact.objects.count() == 5
    page = client.get("/").content.decode()
    for text in WRITTEN_DOWN:
        assert text.replace("'", "&#x27;") in page
    assert "The user is" not in page and "The user prefers" not in page


def test_the_seed_tells_a_rollback_story_holds_a_session_and_says_where_to_look(
    db: Any, client: Any, settings: Any, tmp_path: Path
) -> None:
    settings.BASE_DIR = tmp_path
    out = io.StringIO()
    call_command(DemoSeed(), stdout=out)
    printed = out.getvalue()

    trip = MemorySession.objects.get(key="lisbon-trip")
    contents = [m["content"] for m in memory.message_recent(session=trip)]
    assert "I cancelled your Friday flight and booked a meal." not in contents  # rolled back
    assert contents[-1] == "Done: Friday 09:40 to Lisbon, seat 14A (window)."
    labels = [snapshot.label for snapshot in memory.snapshot_list(session=trip)]
    assert "after booking" in labels and len(labels) == 2  # and the safety snapshot
    held = MemorySession.objects.get(key="refund-dispute")
    with pytest.raises(LegalHoldError):
        memory.session_delete(session=held)
    assert "episodic search 'where did Ada move': 'Big news: I moved to Porto last week.'" in (
        printed
    )
    urls = re.findall(r"^  (http://127\.0\.0\.1:8000\S+)", printed, re.M)
    assert len(urls) == 3 and re.search(r"^admin login: demo / \S+$", printed, re.M)
    client.force_login(get_user_model().objects.get(username="demo"))
    for url in urls:
        assert client.get(url.removeprefix("http://127.0.0.1:8000")).status_code == 200, url
