"""The demo's front page: what is running and where to go next."""

from __future__ import annotations

from pathlib import Path

from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from ttmemory.models import Fact, MemorySession

CLIENTS = Path(__file__).resolve().parent.parent / "clients"
CLIENT_READMES = {"typescript": "typescript/README.md", "python": "python/README.md"}


def index(request: HttpRequest) -> HttpResponse:
    sessions = MemorySession.objects.order_by("-updated_at")[:10]
    facts = Fact.objects.current().order_by("namespace", "-pk").defer("embedding")[:20]
    return render(
        request,
        "index.html",
        {
            "sessions": sessions,
            "facts": facts,
            "database": connection.vendor,
            "db_name": connection.settings_dict["NAME"],
        },
    )


def client_readme(request: HttpRequest, language: str) -> HttpResponse:
    """The README of a generated API client (clients/ in the repository), as Markdown text."""
    if language not in CLIENT_READMES:
        raise Http404
    readme = CLIENTS / CLIENT_READMES[language]
    return HttpResponse(
        readme.read_text(encoding="utf-8"), content_type="text/markdown; charset=utf-8"
    )
