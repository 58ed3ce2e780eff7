"""A LangGraph agent: thread history in TTMemorySaver, long-term memories in TTMemoryStore.

Run: python examples/langgraph_agent.py "Remember that I drink green tea." (a new process each)
Needs OPENAI_API_KEY (and OPENAI_BASE_URL for another server), and ttmemory's two keys
(python -m ttmemory init).
"""

from __future__ import annotations

import hashlib
import operator
import os
import sys
from typing import Annotated, TypedDict

import standalone  # Django settings for a plain script; a Django project has its own

standalone.setup()

from langgraph.graph import START, StateGraph  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402
from openai import OpenAI  # noqa: E402

from ttmemory.integrations.langgraph import TTMemorySaver, TTMemoryStore  # noqa: E402

client = OpenAI()
MEMORIES = ("user-42", "memories")


class State(TypedDict):
    messages: Annotated[list[dict], operator.add]


def chat(state: State, runtime: Runtime) -> dict:
    question = state["messages"][-1]["content"]
    if question.lower().startswith("remember "):  # memory write (same text, same key)
        key = hashlib.sha256(question.encode()).hexdigest()[:16]
        runtime.store.put(MEMORIES, key, {"text": question[len("remember ") :]})
    found = runtime.store.search(MEMORIES, query=question, limit=3)  # memory read: hybrid recall
    known = {"role": "system", "content": "Known: " + "; ".join(i.value["text"] for i in found)}
    reply = client.chat.completions.create(
        model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), messages=[known, *state["messages"]]
    )
    return {"messages": [{"role": "assistant", "content": reply.choices[0].message.content}]}


if __name__ == "__main__":
    graph = StateGraph(State).add_node(chat).add_edge(START, "chat")
    app = graph.compile(checkpointer=TTMemorySaver(namespace="user-42"), store=TTMemoryStore())
    config = {"configurable": {"thread_id": "chat-1"}}  # the thread's checkpoints outlive us
    for text in sys.argv[1:]:
        state = app.invoke({"messages": [{"role": "user", "content": text}]}, config)
        print(state["messages"][-1]["content"])
    print("messages in the thread:", len(app.get_state(config).values["messages"]))
