"""The demo's front page: what is running and where to go next."""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ttmemory.models import Fact, MemorySession


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
