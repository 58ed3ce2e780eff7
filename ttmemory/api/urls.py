"""Mount with ``path("api/memory/", include("ttmemory.api.urls"))``; names are in the
``ttmemory-api`` namespace. ``schema/`` serves the OpenAPI 3 document, ``docs/`` a browsable
page for it."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import Resolver404, path, re_path, resolve
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from ttmemory.api import facts, namespace, sessions, snapshots

app_name = "ttmemory-api"


def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    detail = "Not found."
    if not request.path.endswith("/"):
        try:
            if resolve(request.path + "/").url_name != "not-found":
                detail = f"Not found. Did you mean {request.path}/ (with a trailing slash)?"
        except Resolver404:
            pass
    return JsonResponse({"detail": detail}, status=404)


urlpatterns = [
    path("sessions/", sessions.SessionListView.as_view(), name="session-list"),
    path("sessions/<int:session_id>/", sessions.SessionDetailView.as_view(), name="session"),
    path(
        "sessions/<int:session_id>/messages/",
        sessions.MessageListView.as_view(),
        name="message-list",
    ),
    path(
        "sessions/<int:session_id>/messages/<int:seq>/",
        sessions.MessageDetailView.as_view(),
        name="message",
    ),
    path("sessions/<int:session_id>/context/", sessions.ContextView.as_view(), name="context"),
    path("sessions/<int:session_id>/prompt/", sessions.PromptView.as_view(), name="prompt"),
    path("sessions/<int:session_id>/trim/", sessions.TrimView.as_view(), name="trim"),
    path("sessions/<int:session_id>/clear/", sessions.ClearView.as_view(), name="clear"),
    path("sessions/<int:session_id>/undo/", snapshots.UndoView.as_view(), name="undo"),
    path(
        "sessions/<int:session_id>/snapshots/",
        snapshots.SnapshotListView.as_view(),
        name="snapshot-list",
    ),
    path(
        "sessions/<int:session_id>/snapshots/<int:snapshot_id>/",
        snapshots.SnapshotDetailView.as_view(),
        name="snapshot",
    ),
    path(
        "sessions/<int:session_id>/snapshots/<int:snapshot_id>/diff/",
        snapshots.SnapshotDiffView.as_view(),
        name="snapshot-diff",
    ),
    path(
        "sessions/<int:session_id>/snapshots/<int:snapshot_id>/rollback/",
        snapshots.SnapshotRollbackView.as_view(),
        name="snapshot-rollback",
    ),
    path("facts/", facts.FactListView.as_view(), name="fact-list"),
    path("facts/recall/", facts.RecallView.as_view(), name="recall"),
    path("facts/learn/", facts.LearnView.as_view(), name="learn"),
    path("facts/learn/<uuid:job_id>/", facts.LearnJobView.as_view(), name="learn-job"),
    path("facts/<int:fact_id>/", facts.FactDetailView.as_view(), name="fact"),
    path(
        "facts/<int:fact_id>/supersede/", facts.FactSupersedeView.as_view(), name="fact-supersede"
    ),
    path("profile/", facts.ProfileListView.as_view(), name="profile-list"),
    path("profile/<str:kind>/", facts.ProfileDetailView.as_view(), name="profile"),
    path("namespace/", namespace.NamespaceView.as_view(), name="namespace"),
    path("namespace/export/", namespace.ExportView.as_view(), name="export"),
    path("namespace/erase/", namespace.EraseView.as_view(), name="erase"),
    path("ledger/", namespace.LedgerView.as_view(), name="ledger"),
    path("schema/", SpectacularAPIView.as_view(urlconf=None), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="ttmemory-api:schema"), name="docs"),
    # Anything else under the mount point (e.g. /sessions/abc/) is a JSON 404, not an HTML page.
    re_path(r"^.*$", not_found, name="not-found"),
]
