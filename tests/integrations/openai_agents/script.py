"""The scripted agent of the Agents SDK tests, and a second process that runs one more turn.

``python -m tests.integrations.openai_agents.script <namespace> <key>`` (with ``TTM_DB_NAME``
naming the test database) runs the second turn on the stored session in a fresh process and
prints, as JSON, the input its model was given.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from openai.types.responses import ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def reasoning(item_id: str, text: str) -> ResponseReasoningItem:
    return ResponseReasoningItem(
        id=item_id,
        type="reasoning",
        summary=[Summary(text=text, type="summary_text")],
        encrypted_content=f"enc-{item_id}",
    )


def first_turn() -> list[Any]:
    """Reasoning and two parallel calls, then the answer."""
    return [
        [
            reasoning("rs_1", "check both cities"),
            function_call("weather", {"city": "Lisbon"}, call_id="c1"),
            function_call("weather", {"city": "Porto"}, call_id="c2"),
        ],
        [assistant_message("Sunny in both.", item_id="msg_1")],
    ]


def second_turn() -> list[Any]:
    """One call, then reasoning with the answer."""
    return [
        [function_call("weather", {"city": "Faro"}, call_id="c3")],
        [reasoning("rs_2", "answer"), assistant_message("Faro too.", item_id="msg_2")],
    ]


def agent(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="travel", instructions="Be brief.", model=model, tools=[weather])


async def run_turns(session: Any, turns: list[tuple[str, list[Any]]]) -> list[ScriptedModel]:
    models = []
    for text, steps in turns:
        model = ScriptedModel(steps)
        await Runner.run(agent(model), text, session=session)
        model.assert_complete()
        models.append(model)
    return models


def main() -> None:
    import django
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = os.environ["TTM_DB_NAME"]
    django.setup()
    from ttmemory.integrations.openai_agents import TTMemorySession

    set_tracing_disabled(True)
    namespace, key = sys.argv[1:3]
    session = TTMemorySession(key, namespace=namespace)
    (model,) = asyncio.run(run_turns(session, [("And Faro?", second_turn())]))
    assert model.first_call is not None
    print(json.dumps(model.first_call.input))


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    main()
