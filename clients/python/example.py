"""One turn of a chat frontend with the generated Python client: open a session, append the
user's message, read the context to send to a model.

    pip install -e clients/python/ttmemory-client
    export TTMEMORY_URL=http://127.0.0.1:8000/api/memory TTMEMORY_TOKEN=<a DRF token>
    python clients/python/example.py
"""

from __future__ import annotations

import os

from ttmemory_client import AuthenticatedClient
from ttmemory_client.api.messages import messages_append
from ttmemory_client.api.sessions import sessions_context, sessions_open
from ttmemory_client.models import (
    Context,
    MessageAppendRequest,
    MessageAppendRequestMessage,
    Problem,
    SessionOpenRequest,
)


class ProblemError(Exception):
    """An error answer of the API (RFC 9457 problem details)."""

    def __init__(self, problem: Problem) -> None:
        fields = problem.errors.to_dict() if problem.errors else {}
        super().__init__(f"{problem.status} {problem.title}: {problem.detail} {fields or ''}")
        self.problem = problem


def turn(client: AuthenticatedClient, *, key: str, text: str) -> Context:
    """Append the user's ``text`` to session ``key`` and return the context window."""
    session = sessions_open.sync(client=client, body=SessionOpenRequest(key=key))
    if isinstance(session, Problem) or session is None:
        raise ProblemError(session) if session else RuntimeError("no answer")
    message = MessageAppendRequestMessage.from_dict({"role": "user", "content": text})
    added = messages_append.sync(
        session.id, client=client, body=MessageAppendRequest(message=message)
    )
    if isinstance(added, Problem):
        raise ProblemError(added)
    context = sessions_context.sync(session.id, client=client, max_tokens=4000)
    if not isinstance(context, Context):
        raise ProblemError(context) if context else RuntimeError("no answer")
    return context


if __name__ == "__main__":
    api = AuthenticatedClient(
        base_url=os.environ.get("TTMEMORY_URL", "http://127.0.0.1:8000/api/memory"),
        token=os.environ["TTMEMORY_TOKEN"],
        prefix="Token",
    )
    window = turn(api, key="example-chat", text="Hi, I am Ada")
    print(f"{len(window.messages)} messages, {window.tokens} tokens")
