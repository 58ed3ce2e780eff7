"""An OpenAI Agents SDK agent whose history lives in ttmemory (TTMemorySession).

Run: python examples/openai_agents_session.py "Hi"

Each run is a new process; the session (TTMemorySession) brings back every earlier turn.
Needs OPENAI_API_KEY (and OPENAI_BASE_URL for another server), and ttmemory's two keys
(python -m ttmemory init).
"""

from __future__ import annotations

import asyncio
import os
import sys

import standalone  # Django settings for a plain script; a Django project has its own

standalone.setup()

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from ttmemory.integrations.openai_agents import TTMemorySession  # noqa: E402

set_tracing_disabled(True)  # traces would go to OpenAI's platform
model = OpenAIChatCompletionsModel(
    model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), openai_client=AsyncOpenAI()
)
agent = Agent(name="assistant", instructions="Be brief.", model=model)


async def main(texts: list[str]) -> None:
    # One session per conversation, in the user's namespace; max_tokens budgets what the
    # model is sent (whole tool groups, newest first) however long the history grows.
    session = TTMemorySession("chat-1", namespace="user-42", max_tokens=8000)
    for text in texts:
        result = await Runner.run(agent, text, session=session)
        print(result.final_output)
    print("turns stored:", len(await session.get_items()))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
