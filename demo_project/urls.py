"""URLs of the demo project: a front page, the admin, the API and its docs, the clients' READMEs."""

from django.contrib import admin
from django.urls import include, path

from demo_project import views

urlpatterns = [
    path("", views.index, name="index"),
    path("admin/", admin.site.urls),
    path("clients/<str:language>/", views.client_readme, name="client-readme"),
    path("api/memory/", include("ttmemory.api.urls")),
]
