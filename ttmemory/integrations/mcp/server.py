"""The MCP server: six tools over ttmemory's services, the namespace from authentication.

Every tool runs its ORM work in one function through ``sync_to_async(thread_sensitive=True)``
(Django's ORM is synchronous), with stale connections closed before and after as Django does
around a request. Errors a caller can fix come back as MCP tool errors naming the problem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ttmemory import memory
from ttmemory.exceptions import NamespaceAccessError, TTMemoryError
from ttmemory.integrations.mcp.auth import (
    SCOPE_KEY,
    AuthenticationError,
    Credentials,
    resolve_namespace,
)
from ttmemory.models import Fact

T = TypeVar("T")

NAME = "ttmemory"
INSTRUCTIONS = (
    "Long-term memory and session history of the authenticated user or service. Use `recall` "
    "before answering questions about the user, `remember` for durable facts they state, "
    "`get_context` and `append_messages` to keep a conversation's history."
)

Text = Annotated[str, Field(min_length=1, max_length=4000, description="The fact, one sentence.")]
Kind = Annotated[
    str, Field(min_length=1, max_length=32, description="Its kind: fact, preference, ...")
]
Kinds = Annotated[
    list[str] | None, Field(description="Only facts of these kinds (all kinds when omitted).")
]
SessionKey = Annotated[
    str,
    Field(min_length=1, max_length=255, description="The conversation's key, e.g. 'support-chat'."),
]


def _fact(fact: Fact, score: float | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": fact.pk,
        "text": fact.text,
        "kind": fact.kind,
        "metadata": fact.metadata or {},
        "valid_from": fact.valid_from.isoformat() if fact.valid_from else None,
    }
    if score is not None:
        data["score"] = round(score, 6)
    return data


def create_server(*, credentials: Credentials | None = None) -> MCPServer:
    """A new MCP server exposing ttmemory's tools.

    With ``credentials`` (stdio, in-process) every call acts as them; without, each call
    authenticates with its own HTTP headers (``ttmemory.integrations.mcp.auth``). Either way
    the namespace comes from authentication, never from a tool argument or the URL.
    """
    server = MCPServer(NAME, instructions=INSTRUCTIONS)

    async def run(ctx: Context, work: Callable[[str], T]) -> T:
        headers: Mapping[str, str] | None = None
        known: str | None = None
        if credentials is None:
            request = ctx.request_context.request
            known = getattr(request, "scope", {}).get("state", {}).get(SCOPE_KEY)
            headers = ctx.headers

        def call() -> T:
            close_old_connections()
            try:
                namespace = known or resolve_namespace(headers, credentials)
                return work(namespace)
            except AuthenticationError as exc:
                raise ToolError(f"Not authenticated: {exc}") from exc
            except NamespaceAccessError as exc:
                raise ToolError(f"Forbidden: {exc}") from exc
            except memory.MemoryValidationError as exc:
                raise ToolError(f"Invalid {exc.field}: {exc.message}") from exc
            except TTMemoryError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
            finally:
                close_old_connections()

        return await sync_to_async(call, thread_sensitive=True)()

    @server.tool(
        description="Store a durable fact about the user (an upsert: the same text "
        "is one fact). Returns the stored fact and whether it is new."
    )
    async def remember(
        text: Text,
        ctx: Context,
        kind: Kind = "fact",
        metadata: Annotated[
            dict[str, Any] | None, Field(description="JSON stored with the fact.")
        ] = None,
    ) -> dict[str, Any]:
        def work(namespace: str) -> dict[str, Any]:
            fact, created = memory.fact_remember(
                namespace=namespace, text=text, kind=kind, metadata=metadata, with_created=True
            )
            return {"fact": _fact(fact), "created": created}

        return await run(ctx, work)

    @server.tool(
        description="Find the stored facts most relevant to a query (hybrid keyword "
        "and vector search), best first, with their scores."
    )
    async def recall(
        query: Annotated[
            str, Field(min_length=1, max_length=2000, description="What to look for.")
        ],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=50, description="How many facts at most.")] = 5,
        kinds: Kinds = None,
    ) -> dict[str, Any]:
        def work(namespace: str) -> dict[str, Any]:
            result = memory.fact_recall(namespace=namespace, query=query, k=k, kinds=kinds)
            return {
                "mode": result.mode,
                "hits": [_fact(fact, score) for fact, score in result.hits],
            }

        return await run(ctx, work)

    @server.tool(
        description="Delete one fact for good, by the id `remember`, `recall` or "
        "`list_memories` returned."
    )
    async def forget(
        fact_id: Annotated[int, Field(ge=1, description="The fact's id.")], ctx: Context
    ) -> dict[str, Any]:
        def work(namespace: str) -> dict[str, Any]:
            try:
                memory.fact_forget(namespace=namespace, fact_id=fact_id)
            except Fact.DoesNotExist:
                raise ToolError(f"No fact {fact_id} in this namespace.") from None
            return {"forgotten": fact_id}

        return await run(ctx, work)

    @server.tool(description="List the current facts, newest first.")
    async def list_memories(
        ctx: Context,
        kinds: Kinds = None,
        limit: Annotated[int, Field(ge=1, le=500, description="How many at most.")] = 50,
    ) -> dict[str, Any]:
        def work(namespace: str) -> dict[str, Any]:
            facts = memory.fact_list(namespace=namespace, kinds=kinds, limit=limit)
            return {"facts": [_fact(fact) for fact in facts]}

        return await run(ctx, work)

    @server.tool(
        description="The conversation's messages to send to a model, within a token "
        "budget: summary and system messages first, then whole turns, newest first."
    )
    async def get_context(
        session_key: SessionKey,
        ctx: Context,
        max_tokens: Annotated[
            int, Field(ge=1, le=2_000_000, description="The token budget of the window.")
        ] = 4000,
    ) -> dict[str, Any]:
        def work(namespace: str) -> dict[str, Any]:
            session = memory.session_get(namespace=namespace, key=session_key)
            if session is None:
                return {"session_key": session_key, "messages": [], "tokens": 0}
            window = memory.context_window_detailed(session=session, max_tokens=max_tokens)
            return {
                "session_key": session_key,
                "messages": window.messages,
                "tokens": window.tokens,
            }

        return await run(ctx, work)

    @server.tool(
        description="Append Chat Completions messages ({'role', 'content', ...}) to "
        "a conversation, all or nothing; the conversation is created when new."
    )
    async def append_messages(
        session_key: SessionKey,
        messages: Annotated[
            list[dict[str, Any]],
            Field(min_length=1, max_length=500, description="The messages, oldest first."),
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        def work(namespace: str) -> dict[str, Any]:
            session = memory.session_open(namespace=namespace, key=session_key)
            rows = memory.message_add_many(session=session, messages=messages)
            return {"session_key": session_key, "seqs": [row.seq for row in rows]}

        return await run(ctx, work)

    return server
