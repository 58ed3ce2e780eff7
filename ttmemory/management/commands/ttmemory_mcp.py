"""Serve ttmemory's MCP server over stdio, for an MCP client that starts this command."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ttmemory.exceptions import TTMemoryError


class Command(BaseCommand):
    help = (
        "Serve the MCP server (tools remember, recall, forget, list_memories, get_context, "
        "append_messages) over stdio. Credentials: the API key in TTMEMORY_API_KEY "
        "(--namespace or TTMEMORY_NAMESPACE picks one of its grants), or --user USERNAME."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--namespace",
            default=os.environ.get("TTMEMORY_NAMESPACE"),
            help="one of the API key's grants (needed when it has several)",
        )
        parser.add_argument(
            "--user", default="", help="act as this Django user (API_NAMESPACE_RESOLVER)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            # The MCP SDK is the optional extra "mcp": imported here, when the command runs.
            from ttmemory.integrations.mcp import Credentials, create_server, resolve_namespace
        except ImportError as exc:
            raise CommandError(f'The MCP server needs the "mcp" extra: {exc}') from exc
        api_key = os.environ.get("TTMEMORY_API_KEY", "")
        if not api_key and not options["user"]:
            raise CommandError("Set TTMEMORY_API_KEY (ttmemory_apikey creates one) or --user.")
        credentials = Credentials(
            api_key=api_key, namespace=options["namespace"], username=options["user"]
        )
        try:
            namespace = resolve_namespace(None, credentials)
        except TTMemoryError as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write(f"ttmemory MCP server on stdio, namespace {namespace!r}")
        create_server(credentials=credentials).run("stdio")
