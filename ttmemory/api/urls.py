"""Mount with ``path("api/memory/", include("ttmemory.api.urls"))``; names are in the
``ttmemory-api`` namespace. ``schema/`` serves the OpenAPI 3 document, ``docs/`` a browsable
page for it."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, path, re_path, resolve
from django.views.decorators.csrf import csrf_exempt

from ttmemory.api.episodes import MessageSearchViewSet
from ttmemory.api.exceptions import problem_response
from ttmemory.api.facts import FactViewSet, LearnJobViewSet, ProfileViewSet
from ttmemory.api.messages import MessageViewSet
from ttmemory.api.namespace import LedgerViewSet, NamespaceViewSet
from ttmemory.api.retention import RetentionViewSet
from ttmemory.api.routers import MemoryRouter
from ttmemory.api.schema import SETTINGS, MemorySchemaGenerator, MemorySchemaView, MemorySwaggerView
from ttmemory.api.sessions import SessionViewSet
from ttmemory.api.snapshots import SnapshotViewSet

app_name = "ttmemory-api"

router = MemoryRouter()
router.register("sessions", SessionViewSet, basename="session")
router.register("sessions/<int:session_id>/messages", MessageViewSet, basename="message")
router.register("sessions/<int:session_id>/snapshots", SnapshotViewSet, basename="snapshot")
router.register("facts", FactViewSet, basename="fact")
router.register("facts/learn", LearnJobViewSet, basename="learn-job")
router.register("profile", ProfileViewSet, basename="profile")


@csrf_exempt  # any method gets the JSON 404, a POST too (not Django's HTML CSRF 403)
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    detail = "Not found."
    if not request.path.endswith("/"):
        try:
            if resolve(request.path + "/").url_name != "not-found":
                detail = f"Not found. Did you mean {request.path}/ (with a trailing slash)?"
        except Resolver404:
            pass
    return problem_response(404, detail)


urlpatterns = [
    *router.urls,
    # The namespace is one resource without an id: bound by hand, under its historic names.
    path("namespace/", NamespaceViewSet.as_view({"get": "retrieve"}), name="namespace"),
    path("namespace/export/", NamespaceViewSet.as_view({"get": "export"}), name="export"),
    path("namespace/erase/", NamespaceViewSet.as_view({"post": "erase"}), name="erase"),
    path("ledger/", LedgerViewSet.as_view({"get": "list"}), name="ledger"),
    path(
        "namespace/retention/",
        RetentionViewSet.as_view(
            {"get": "retrieve", "patch": "partial_update", "delete": "destroy"}
        ),
        name="retention",
    ),
    path("namespace/holds/", RetentionViewSet.as_view({"post": "place"}), name="holds"),
    path(
        "namespace/holds/<int:hold_id>/",
        RetentionViewSet.as_view({"delete": "lift"}),
        name="hold",
    ),
    path(
        "messages/search/",
        MessageSearchViewSet.as_view({"post": "search"}),
        name="message-search",
    ),
    path(
        "schema/",
        MemorySchemaView.as_view(
            urlconf=None, generator_class=MemorySchemaGenerator, custom_settings=SETTINGS
        ),
        name="schema",
    ),
    path("docs/", MemorySwaggerView.as_view(url_name="ttmemory-api:schema"), name="docs"),
    # Anything else under the mount point (e.g. /sessions/abc/) is a JSON 404, not an HTML page.
    re_path(r"^[\s\S]*$", not_found, name="not-found"),  # a newline in the path too
]
