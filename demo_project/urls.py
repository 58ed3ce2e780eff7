"""URLs of the demo project: a front page, the admin, and (when installed) the API and its docs."""

from django.contrib import admin
from django.urls import include, path

from demo_project import views

urlpatterns = [
    path("", views.index, name="index"),
    path("admin/", admin.site.urls),
    path("api/memory/", include("ttmemory.api.urls")),
]
