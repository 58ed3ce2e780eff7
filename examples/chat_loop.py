"""A chat agent with memory on any OpenAI-compatible server: python examples/chat_loop.py "Hi"

Each run is a new process: the session, and the facts learned from it, come from the database.
Needs OPENAI_API_KEY (and OPENAI_BASE_URL for another server), and ttmemory's two keys
(python -m ttmemory init).
"""

from __future__ import annotations

import os
import sys

import standalone  # Django settings for a plain script; a Django project has its own

standalone.setup()

from openai import OpenAI  # noqa: E402

from ttmemory import memory  # noqa: E402

MODEL = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
USER = os.environ.get("MEMORY_USER", "user-42")  # the namespace: one per user


def answer(client: OpenAI, *, user: str, text: str) -> str:
    """One turn: read memory, call the model, store the turn and learn from it."""
    session = memory.session_open(namespace=user, key="chat")
    question = {"role": "user", "content": text}
    # Memory read: the user's profile and facts recalled for this question, then the window.
    context = memory.prompt_build(session=session, query=text, max_tokens=4000)
    reply = client.chat.completions.create(model=MODEL, messages=[*context.messages, question])
    said = {"role": "assistant", "content": reply.choices[0].message.content}
    # Memory write and learning: both messages stored, facts learned from them.
    memory.turn_add(session=session, messages=[question, said])
    return str(said["content"])


if __name__ == "__main__":
    client = OpenAI()
    for text in sys.argv[1:]:
        print(answer(client, user=USER, text=text))
    print("facts:", [fact.text for fact in memory.fact_list(namespace=USER)])
