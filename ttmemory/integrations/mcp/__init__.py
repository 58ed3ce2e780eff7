"""An MCP server over ttmemory (extra ``mcp``): tools ``remember``, ``recall``, ``forget``,
``list_memories``, ``get_context`` and ``append_messages``.

``python manage.py ttmemory_mcp`` serves it over stdio; ``mount(django_asgi_app)`` serves it
over streamable HTTP beside the project's ASGI app. The namespace always comes from
authentication (see ``auth``). Nothing in the core imports this package.
"""

from ttmemory.integrations.mcp.asgi import mount, streamable_http_app
from ttmemory.integrations.mcp.auth import AuthenticationError, Credentials, resolve_namespace
from ttmemory.integrations.mcp.server import create_server

__all__ = [
    "AuthenticationError",
    "Credentials",
    "create_server",
    "mount",
    "resolve_namespace",
    "streamable_http_app",
]
