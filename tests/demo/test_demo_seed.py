"""The demo's seeded conversation and front page show the facts a person would write down."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from django.core.management import call_command

from demo_project.management.commands.demo_seed import Command as DemoSeed
from ttmemory.models import Fact

WRITTEN_DOWN = [
    "Ada is allergic to peanuts",
    "Ada prefers window seats",
    "The user's name is Ada",
]


def test_the_seeded_conversation_yields_exactly_the_facts_a_person_writes_down(
    db: Any, client: Any, settings: Any, tmp_path: Path
) -> None:
    settings.BASE_DIR = tmp_path  # the demo password file goes there

    call_command(DemoSeed(), stdout=io.StringIO())
    call_command(DemoSeed(), stdout=io.StringIO())  # seeding again changes nothing

    facts = Fact.objects.current()
    assert sorted(facts.values_list("text", flat=True)) == WRITTEN_DOWN
    assert Fact.objects.count() == 3  # nothing superseded or piled up on the way
    page = client.get("/").content.decode()
    for text in WRITTEN_DOWN:
        assert text.replace("'", "&#x27;") in page
    assert "The user is" not in page and "The user prefers" not in page
