"""ASGI entry point of the demo project: Django, with ttmemory's MCP server at /mcp.

Serve it with ``uvicorn demo_project.asgi:application``; MCP clients connect to
``http://127.0.0.1:8000/mcp`` with ``Authorization: Api-Key <key>``.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo_project.settings")
django_application = get_asgi_application()

# Imported after Django is set up: the MCP server uses the ORM.
from ttmemory.integrations.mcp import mount  # noqa: E402

application = mount(django_application, path="/mcp")
