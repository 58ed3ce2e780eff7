"""URLs of the demo project: a front page, the admin, the API and its docs, the clients' READMEs."""

from django.contrib import admin
from django.urls import include, path

from demo_project import views
from ttmemory.telemetry.prometheus import metrics_view

urlpatterns = [
    path("", views.index, name="index"),
    path("admin/", admin.site.urls),
    path("clients/<str:language>/", views.client_readme, name="client-readme"),
    path("api/memory/", include("ttmemory.api.urls")),
    # Prometheus scrapes this; in production serve it on a port only Prometheus reaches.
    path("metrics", metrics_view, name="metrics"),
]
